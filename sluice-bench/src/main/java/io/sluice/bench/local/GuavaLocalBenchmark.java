package io.sluice.bench.local;

import com.google.common.util.concurrent.RateLimiter;
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
 * Guava's {@code RateLimiter.tryAcquire()} (SmoothBursty), one limiter per key in a {@link ConcurrentHashMap}
 * — how an application limits per key with Guava, and the same map lookup Sluice's store does.
 *
 * <pre>
 * java -cp sluice-bench/target/sluice-bench.jar org.openjdk.jmh.Main GuavaLocalBenchmark \
 *     -p mode=always_granted,mostly_rejected -p keys=1,10000 -t 1 -f 1 -wi 3 -w 1s -i 5 -r 1s
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class GuavaLocalBenchmark {

    @State(Scope.Benchmark)
    public static class Limiters {
        @Param({"always_granted", "mostly_rejected"})
        public String mode;

        @Param({"1", "10000"})
        public int keys;

        final ConcurrentHashMap<String, RateLimiter> byKey = new ConcurrentHashMap<>();
        double permitsPerSecond;

        @Setup(Level.Trial)
        public void setUp() {
            permitsPerSecond = LocalMode.of(mode) == LocalMode.ALWAYS_GRANTED ? LocalMode.GRANTING_RATE
                    : LocalMode.REJECTING_RATE;
        }

        RateLimiter forKey(String key) {
            RateLimiter limiter = byKey.get(key);
            return limiter != null ? limiter : byKey.computeIfAbsent(key, k -> RateLimiter.create(permitsPerSecond));
        }
    }

    @Benchmark
    public boolean tryAcquire(Limiters state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.forKey(cursor.next()).tryAcquire());
    }
}
