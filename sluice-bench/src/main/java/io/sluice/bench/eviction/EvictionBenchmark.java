package io.sluice.bench.eviction;

import io.sluice.Clock;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The in-memory store's table under a flood of new keys past {@code maxKeys} (issue 17 item 2): every call of
 * {@link #newKey} is a key never seen, so once the store is full every call evicts. Sampled time, so the report
 * has the percentiles and the maximum a request paid, not only the mean; with {@code -prof gc}, the bytes per
 * call. {@link #workingSet} is the common case beside it: 10,000 keys asked in turn in a full store.
 * {@code table}: {@code sluice}, the store itself; {@code caffeine}, {@link CaffeineStore}.
 *
 * <p>By hand, after {@code mvn -pl sluice-bench -am package -DskipTests}:
 * <pre>
 * java -cp sluice-bench/target/sluice-bench.jar org.openjdk.jmh.Main EvictionBenchmark \
 *     -p table=sluice,caffeine -f 1 -wi 2 -w 2s -i 3 -r 3s -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g", "-Xms2g"})
public class EvictionBenchmark {

    @State(Scope.Benchmark)
    public static class Table {
        @Param({"sluice", "caffeine"})
        public String table;

        /** The store's default, so the flood meets the table size a server has. */
        @Param({"1000000"})
        public long maxKeys;

        RateLimiter limiter;
        Rule rule;
        long next;
        String[] workingKeys;
        int nextWorking;

        @Setup(Level.Trial)
        public void setUp() {
            Store store = table.equals("caffeine") ? new CaffeineStore(Clock.system(), maxKeys)
                    : Store.memory().maxKeys(maxKeys).build();
            // A bucket that admits every call and keeps state for an hour: every key stays live, so eviction,
            // not the expired-key sweep, is what makes room.
            rule = Rule.of("flood", TokenBucket.of(1_000, 1, Duration.ofHours(1)));
            limiter = RateLimiter.builder(rule).store(store).build();
            for (long i = 0; i < maxKeys; i++) {
                limiter.tryAcquire("fill:" + i);
            }
            workingKeys = new String[10_000];
            for (int i = 0; i < workingKeys.length; i++) {
                workingKeys[i] = "user:" + i;
            }
        }
    }

    @Benchmark
    public boolean newKey(Table t) {
        return t.limiter.tryAcquire("new:" + t.next++).allowed();
    }

    @Benchmark
    public boolean workingSet(Table t) {
        String key = t.workingKeys[t.nextWorking];
        t.nextWorking = t.nextWorking + 1 == t.workingKeys.length ? 0 : t.nextWorking + 1;
        return t.limiter.tryAcquire(key).allowed();
    }
}
