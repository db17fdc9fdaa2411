package io.sluice.bench.local;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * The keys one benchmark thread asks for, in turn. With one key every thread asks for the same key (contention
 * on one state); with many keys each thread cycles through its own share, so two threads never touch the same
 * key — the "scales to 2 threads on distinct keys" case. Keys are built once so the loop measures the limiter,
 * not string building.
 */
@State(Scope.Thread)
public class KeyCursor {

    private String[] keys;
    private int next;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams benchmark, ThreadParams thread) {
        int total = Integer.parseInt(benchmark.getParam("keys"));
        int threads = thread.getThreadCount();
        if (total < threads) {
            keys = new String[] {key(0)};
            return;
        }
        int from = (int) ((long) total * thread.getThreadIndex() / threads);
        int to = (int) ((long) total * (thread.getThreadIndex() + 1) / threads);
        keys = new String[to - from];
        for (int i = from; i < to; i++) {
            keys[i - from] = key(i);
        }
    }

    /** The key for index {@code i}: the shape of a real per-user key. */
    static String key(int i) {
        return "user:" + i;
    }

    /** The next key of this thread's share. */
    public String next() {
        String key = keys[next];
        if (++next == keys.length) {
            next = 0;
        }
        return key;
    }
}
