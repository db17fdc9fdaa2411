package io.sluice.bench.local;

import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
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
 * Resilience4j's {@code AtomicRateLimiter.acquirePermission()} with a zero timeout (never waits), one limiter
 * per key in a {@link ConcurrentHashMap}. Sluice's nearest algorithm is refresh_period.
 *
 * <pre>
 * java -cp sluice-bench/target/sluice-bench.jar org.openjdk.jmh.Main Resilience4jLocalBenchmark \
 *     -p mode=always_granted,mostly_rejected -p keys=1,10000 -t 1 -f 1 -wi 3 -w 1s -i 5 -r 1s
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class Resilience4jLocalBenchmark {

    @State(Scope.Benchmark)
    public static class Limiters {
        @Param({"always_granted", "mostly_rejected"})
        public String mode;

        @Param({"1", "10000"})
        public int keys;

        final ConcurrentHashMap<String, AtomicRateLimiter> byKey = new ConcurrentHashMap<>();
        RateLimiterConfig config;

        @Setup(Level.Trial)
        public void setUp() {
            // limitForPeriod is an int: Integer.MAX_VALUE per second is as close to "unlimited" as it gets.
            int perSecond = LocalMode.of(mode) == LocalMode.ALWAYS_GRANTED ? Integer.MAX_VALUE
                    : (int) LocalMode.REJECTING_RATE;
            config = RateLimiterConfig.custom().limitForPeriod(perSecond).limitRefreshPeriod(Duration.ofSeconds(1))
                    .timeoutDuration(Duration.ZERO).build();
        }

        AtomicRateLimiter forKey(String key) {
            AtomicRateLimiter limiter = byKey.get(key);
            return limiter != null ? limiter : byKey.computeIfAbsent(key, k -> new AtomicRateLimiter(k, config));
        }
    }

    @Benchmark
    public boolean acquirePermission(Limiters state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.forKey(cursor.next()).acquirePermission());
    }
}
