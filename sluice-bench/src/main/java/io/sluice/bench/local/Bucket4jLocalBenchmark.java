package io.sluice.bench.local;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.local.SynchronizationStrategy;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Bucket4j's local lock-free bucket ({@code tryConsume(1)}, greedy refill, Bucket4j's default millisecond
 * clock), one bucket per key in a {@link ConcurrentHashMap}.
 *
 * <pre>
 * java -cp sluice-bench/target/sluice-bench.jar org.openjdk.jmh.Main Bucket4jLocalBenchmark \
 *     -p mode=always_granted,mostly_rejected -p keys=1,10000 -t 1 -f 1 -wi 3 -w 1s -i 5 -r 1s
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class Bucket4jLocalBenchmark {

    @State(Scope.Benchmark)
    public static class Buckets {
        @Param({"always_granted", "mostly_rejected"})
        public String mode;

        @Param({"1", "10000"})
        public int keys;

        final ConcurrentHashMap<String, Bucket> byKey = new ConcurrentHashMap<>();
        long capacity;
        long refillPerSecond;

        @Setup(Level.Trial)
        public void setUp() {
            boolean granting = LocalMode.of(mode) == LocalMode.ALWAYS_GRANTED;
            capacity = granting ? LocalMode.GRANTING_RATE : LocalMode.REJECTING_RATE;
            // Bucket4j refills at most one token per nanosecond; the 10^12 capacity covers any run anyway.
            refillPerSecond = granting ? 1_000_000_000L : LocalMode.REJECTING_RATE;
        }

        Bucket forKey(String key) {
            Bucket bucket = byKey.get(key);
            return bucket != null ? bucket : byKey.computeIfAbsent(key, k -> Bucket.builder()
                    .addLimit(limit -> limit.capacity(capacity).refillGreedy(refillPerSecond, Duration.ofSeconds(1)))
                    .withSynchronizationStrategy(SynchronizationStrategy.LOCK_FREE)
                    .build());
        }
    }

    @Benchmark
    public boolean tryConsume(Buckets state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.forKey(cursor.next()).tryConsume(1));
    }
}
