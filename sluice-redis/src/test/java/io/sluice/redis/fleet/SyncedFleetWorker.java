package io.sluice.redis.fleet;

import io.sluice.redis.RedisStore;
import io.sluice.Clock;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Mode;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SlidingWindow;
import io.sluice.SluiceListener;
import io.sluice.Store;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * One node of {@link SyncedFleetIT}: a JVM with one Redis store (server time) that sends {@code tryAcquire} on one
 * key at a steady rate under a synced rule, and reports what it admitted per window and what the bound needs.
 *
 * <pre>
 * java -cp TEST_CLASSPATH io.sluice.redis.fleet.SyncedFleetWorker REDIS_URI PREFIX
 * </pre>
 *
 * <p>Protocol, one line each: the worker prints {@code READY} once connected and warmed up; then
 * {@code RUN <case> <key> <startAtEpochMillis> <millis> <perSecond>} sends {@code perSecond} requests a second for
 * {@code millis} from that wall-clock instant (the case is {@link Case}: its rule, on this process's Redis store,
 * or on a memory store of its own for the control) and prints
 * {@code DONE <case> <key> <admitted> <attempts> <errors> <maxSyncGapMicros> <maxSyncMicros> <windows> <times>}:
 * {@code windows} is {@code index:admitted,...} per window (index = window start / window length), and
 * {@code times} the admission times in microseconds on this process's monotonic clock, relative to the start,
 * joined by commas (the IT computes how many one node admits in any span). The sync gap is the longest time
 * between the starts of two consecutive syncs; the sync time the longest sync (push and pull, one round trip).
 * {@code QUIT} (or the end of input) exits.
 */
public final class SyncedFleetWorker {

    /** The window of every case. */
    static final Duration WINDOW = Duration.ofSeconds(1);
    static final long LIMIT = 1_000;
    static final Duration INTERVAL = Duration.ofMillis(50);

    /** The rules the fleet runs. */
    enum Case {
        FIXED(Rule.of("fixed", FixedWindow.of(LIMIT, WINDOW)).withMode(Mode.synced(INTERVAL))),
        SLIDING(Rule.of("sliding", SlidingWindow.of(LIMIT, WINDOW)).withMode(Mode.synced(INTERVAL))),
        /** The control: the fixed rule on a memory store per process, which shares nothing. */
        UNSYNCED(Rule.of("fixed", FixedWindow.of(LIMIT, WINDOW)));

        final Rule rule;

        Case(Rule rule) {
            this.rule = rule;
        }
    }

    private SyncedFleetWorker() {}

    /** Sync starts and durations, from the listener. */
    private static final class Syncs implements SluiceListener {
        private long lastStart = -1;
        private long maxGap;
        private long maxNanos;
        private boolean recording;

        @Override
        public synchronized void onSync(int keys, long pushed, long nanos, Throwable error) {
            if (!recording) {
                return;
            }
            long start = System.nanoTime() - nanos;
            if (lastStart >= 0) {
                maxGap = Math.max(maxGap, start - lastStart);
            }
            lastStart = start;
            maxNanos = Math.max(maxNanos, nanos);
        }

        synchronized void start() {
            recording = true;
            lastStart = -1;
            maxGap = 0;
            maxNanos = 0;
        }

        synchronized long[] stop() {
            recording = false;
            return new long[] {maxGap / 1_000, maxNanos / 1_000};
        }
    }

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String prefix = args[1];
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        Syncs syncs = new Syncs();
        try (RedisStore redis = RedisStore.builder().uri(uri).prefix(prefix).timeout(Duration.ofSeconds(10))
                .listener(syncs).build();
             Store memory = Store.memory().build()) {
            RateLimiter fixed = RateLimiter.builder(Case.FIXED.rule).store(redis).build();
            RateLimiter sliding = RateLimiter.builder(Case.SLIDING.rule).store(redis).build();
            RateLimiter unsynced = RateLimiter.builder(Case.UNSYNCED.rule).store(memory).build();
            // Warm up the JIT, the connection and the server clock estimate on keys of their own.
            send(fixed, "warmup-f", System.currentTimeMillis(), 400, 2_000);
            send(sliding, "warmup-s", System.currentTimeMillis(), 400, 2_000);
            out.println("READY");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null && !line.equals("QUIT")) {
                String[] w = line.split(" ");
                if (w.length != 6 || !w[0].equals("RUN")) {
                    System.err.println("SyncedFleetWorker: unknown command '" + line + "'");
                    System.exit(2);
                }
                Case c = Case.valueOf(w[1]);
                RateLimiter limiter = c == Case.FIXED ? fixed : c == Case.SLIDING ? sliding : unsynced;
                syncs.start();
                Run r = send(limiter, w[2], Long.parseLong(w[3]), Long.parseLong(w[4]), Long.parseLong(w[5]));
                long[] sync = syncs.stop();
                out.println("DONE " + c + " " + w[2] + " " + r.admitted + " " + r.attempts + " " + r.errors + " "
                        + sync[0] + " " + sync[1] + " " + r.windows.entrySet().stream()
                        .map(e -> e.getKey() + ":" + e.getValue()).collect(Collectors.joining(",")) + " "
                        + Arrays.stream(r.times, 0, (int) r.admitted).mapToObj(Long::toString)
                        .collect(Collectors.joining(",")));
            }
        }
    }

    /** What one run counted. */
    private record Run(long admitted, long attempts, long errors, Map<Long, Long> windows, long[] times) {}

    /**
     * Sends {@code perSecond} requests a second on {@code key} for {@code millis} from {@code startAtMillis}, one
     * every {@code 1/perSecond} on the monotonic clock. A sender that falls more than 10 ms behind (a GC pause)
     * skips the missed slots rather than bursting to catch up, so the rate stays steady.
     *
     * <p>Each admission is filed under its window: for a fixed window the one that ends {@code resetAfter} after
     * it (an exact multiple of the window, so the node's own view of the window, whatever its clock estimate);
     * for a sliding window the aligned window of the wall clock.
     */
    private static Run send(RateLimiter limiter, String key, long startAtMillis, long millis, long perSecond) {
        long wait = startAtMillis - System.currentTimeMillis();
        if (wait > 0) {
            LockSupport.parkNanos(wait * 1_000_000);
        }
        long window = WINDOW.toNanos() / 1_000;
        boolean fixedWindow = limiter.rule().limits().get(0) instanceof FixedWindow;
        Clock wall = Clock.system();
        long period = 1_000_000_000L / perSecond;
        long begin = System.nanoTime();
        long end = begin + millis * 1_000_000;
        long[] times = new long[(int) (millis * perSecond / 1_000 + 16)];
        Map<Long, Long> windows = new TreeMap<>();
        long admitted = 0;
        long attempts = 0;
        long errors = 0;
        long next = begin;
        while (next < end) {
            long now = System.nanoTime();
            if (now < next) {
                LockSupport.parkNanos(next - now);
                continue;
            }
            if (now - next > 10_000_000) {
                next = now;
            }
            next += period;
            attempts++;
            try {
                long wallMicros = wall.nowMicros();
                Decision d = limiter.tryAcquire(key);
                if (d.allowed()) {
                    long index = fixedWindow ? Math.round((double) (wallMicros + d.resetAfterMicros()) / window) - 1
                            : wallMicros / window;
                    windows.merge(index, 1L, Long::sum);
                    if (admitted < times.length) {
                        times[(int) admitted] = (System.nanoTime() - begin) / 1_000;
                    }
                    admitted++;
                }
            } catch (RuntimeException e) {
                if (errors++ == 0) {
                    System.err.println("SyncedFleetWorker: a decision on " + key + " failed:");
                    e.printStackTrace();
                }
            }
        }
        return new Run(Math.min(admitted, times.length), attempts, errors, windows, times);
    }
}
