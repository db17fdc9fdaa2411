package io.sluice.bench.redis;

import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.List;

/**
 * The one limit every system gets on Redis — {@code rate} permits per {@code period} per key with bursts of
 * {@code burst} — expressed in each algorithm's own parameters, with the most admissions that limit allows
 * over a time span, which over-admissions are counted against.
 *
 * @param burst  bucket capacity, GCRA burst
 * @param rate   permits per period
 * @param period the period (window length, refill period)
 */
public record RedisLimits(long burst, long rate, Duration period) {

    /**
     * The load rows: 1,000 per second with bursts of 100. A hot key is mostly rejected; with 10,000 keys each
     * key sees a few requests a second and is admitted.
     */
    public static final RedisLimits LOAD = new RedisLimits(100, 1000, Duration.ofSeconds(1));

    /**
     * The attack rows ({@link RedisAttackSuite}): a login form limited to 10 per second with bursts of 10, under a
     * password-guessing attack that keeps 64 requests in flight on one key, so nearly every request is denied.
     */
    public static final RedisLimits ATTACK = new RedisLimits(10, 10, Duration.ofSeconds(1));

    /**
     * The memory rows: 10 per day with bursts of 10, so that the state of a key with one request lives for
     * hours (every store drops state once it no longer matters) and is still there to be measured.
     */
    public static final RedisLimits MEMORY = new RedisLimits(10, 10, Duration.ofDays(1));

    /** Every Sluice algorithm, for the memory suite. */
    public static final String[] ALL_ALGORITHMS = {"token_bucket", "gcra", "fixed_window", "sliding_window",
            "smooth_bursty", "sliding_log", "rolling_window", "leaky_bucket", "smooth_warming_up", "refresh_period",
            "concurrency"};

    private long periodMicros() {
        return period.toNanos() / 1_000;
    }

    private double perSecond() {
        return rate * 1e6 / periodMicros();
    }

    /** Sluice's limit for {@code algorithm}. */
    public Limit sluice(String algorithm) {
        return switch (algorithm) {
            case "token_bucket" -> TokenBucket.of(burst, rate, period);
            case "gcra" -> Gcra.of(rate, period).withBurst(burst);
            case "fixed_window" -> FixedWindow.of(rate, period);
            case "sliding_window" -> SlidingWindow.of(rate, period);
            case "smooth_bursty" -> SmoothBursty.of(perSecond()).withMaxBurstSeconds(burst / perSecond());
            case "sliding_log" -> SlidingLog.of(rate, period);
            case "rolling_window" -> RollingWindow.of(rate, period, period.dividedBy(10));
            case "leaky_bucket" -> LeakyBucket.of(rate, period);
            case "smooth_warming_up" -> SmoothWarmingUp.of(perSecond(), period);
            case "refresh_period" -> RefreshPeriod.of(rate, period);
            case "concurrency" -> Concurrency.of(burst, period);
            default -> throw new IllegalArgumentException("no Redis limit for algorithm " + algorithm);
        };
    }

    /** Rate and period in words, e.g. {@code 1000 per 1 s}. */
    public String ratePerPeriod() {
        return rate + " per " + words(period);
    }

    /** A duration in its largest whole unit: {@code 1 d}, {@code 2 h}, {@code 100 ms}. */
    static String words(Duration d) {
        if (d.toMillis() % 86_400_000 == 0) {
            return d.toDays() + " d";
        } else if (d.toMillis() % 3_600_000 == 0) {
            return d.toHours() + " h";
        } else if (d.toMillis() % 60_000 == 0) {
            return d.toMinutes() + " min";
        } else if (d.toMillis() % 1_000 == 0) {
            return d.toSeconds() + " s";
        }
        return d.toMillis() + " ms";
    }

    /**
     * A rule of three limits (the redis suite's {@code algorithm/three_limits} rows): {@link #sluice} and two
     * looser limits of the same algorithm, 60 times the rate per minute and 3,600 times per hour, so the first
     * still decides and {@link #sluiceBound} still bounds the admissions; every decision reads and writes three
     * states in one script call.
     */
    public List<Limit> threeLimits(String algorithm) {
        RedisLimits perMinute = new RedisLimits(burst * 60, rate * 60, period.multipliedBy(60));
        RedisLimits perHour = new RedisLimits(burst * 3_600, rate * 3_600, period.multipliedBy(3_600));
        return List.of(sluice(algorithm), perMinute.sluice(algorithm).named("per_minute"),
                perHour.sluice(algorithm).named("per_hour"));
    }

    /** The configuration of {@link #sluice} in words. */
    public String describe(String algorithm) {
        return switch (algorithm) {
            case "token_bucket", "gcra" -> ratePerPeriod() + ", burst " + burst;
            case "smooth_bursty" -> ratePerPeriod() + ", max burst " + burst;
            case "rolling_window" -> ratePerPeriod() + ", 10 buckets";
            case "concurrency" -> burst + " leases, TTL " + words(period);
            default -> ratePerPeriod();
        };
    }

    /** Admissions one key may see within {@code micros} under a bucket of {@code capacity} refilled at this rate. */
    public long bucketBound(long capacity, long micros) {
        return capacity + (long) Math.floor((double) rate * micros / periodMicros());
    }

    /** Admissions one key may see within {@code micros} under this rate per window, aligned or sliding. */
    public long windowBound(long micros) {
        // A span of t touches at most floor(t / window) + 2 aligned windows.
        return rate * (micros / periodMicros() + 2);
    }

    /** The bound for Sluice's {@code algorithm} over {@code micros}. */
    public long sluiceBound(String algorithm, long micros) {
        return switch (algorithm) {
            case "token_bucket", "gcra" -> bucketBound(burst, micros);
            // Guava semantics: a request is granted when the next free ticket has arrived, then pays forward.
            case "smooth_bursty" -> bucketBound(burst + 1, micros);
            default -> windowBound(micros);
        };
    }
}
