package io.sluice;

import java.time.Duration;

/**
 * {@code smooth_warming_up}: Guava's {@code RateLimiter.create(permitsPerSecond, warmupPeriod)}
 * (SmoothWarmingUp), per key, reproduced to the microsecond.
 *
 * <p>A key starts cold: its first permits cost {@code coldFactor} times the stable interval, and the cost
 * falls along Guava's trapezoid to the stable interval over {@code warmup}; an idle key cools down again.
 * The first request never waits and each request pays for its predecessor, as in {@link SmoothBursty}.
 * Memory: two numbers per key.
 *
 * <p>Changing the rate behaves like Guava's {@code setRate}: stored permits are scaled by
 * {@code newMaxPermits / oldMaxPermits}.
 *
 * @param name             default {@code "smooth_warming_up"}
 * @param permitsPerSecond finite, in [1/31,622,400 (one per 366 days), 1,000,000]
 * @param warmup           the warm-up period, whole microseconds in [1 µs, 366 days]
 * @param coldFactor       finite, in [1, 1000]; default 3.0, Guava's hard-coded value
 */
public record SmoothWarmingUp(String name, double permitsPerSecond, Duration warmup, double coldFactor)
        implements Limit {

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public SmoothWarmingUp {
        Checks.name(name, "name");
        Checks.rate(permitsPerSecond, "permits_per_second");
        Checks.micros(warmup, "warmup");
        if (coldFactor != 1.0) {
            Checks.finite(coldFactor, "cold_factor", 1.0, 1000.0);
        }
    }

    /** Guava's {@code RateLimiter.create(permitsPerSecond, warmupPeriod)}: cold factor 3. */
    public static SmoothWarmingUp of(double permitsPerSecond, Duration warmup) {
        return new SmoothWarmingUp(AlgorithmName.SMOOTH_WARMING_UP.text(), permitsPerSecond, warmup, 3.0);
    }

    @Override
    public String algorithm() {
        return AlgorithmName.SMOOTH_WARMING_UP.text();
    }

    @Override
    public long maxPermits() {
        return Long.MAX_VALUE;
    }

    @Override
    public SmoothWarmingUp named(String name) {
        return new SmoothWarmingUp(name, permitsPerSecond, warmup, coldFactor);
    }

    /** Guava's {@code setRate}. */
    public SmoothWarmingUp withPermitsPerSecond(double permitsPerSecond) {
        return new SmoothWarmingUp(name, permitsPerSecond, warmup, coldFactor);
    }

    public SmoothWarmingUp withWarmup(Duration warmup) {
        return new SmoothWarmingUp(name, permitsPerSecond, warmup, coldFactor);
    }

    public SmoothWarmingUp withColdFactor(double coldFactor) {
        return new SmoothWarmingUp(name, permitsPerSecond, warmup, coldFactor);
    }
}
