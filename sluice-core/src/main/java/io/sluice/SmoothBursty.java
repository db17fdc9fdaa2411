package io.sluice;

/**
 * {@code smooth_bursty}: Guava's {@code RateLimiter.create(permitsPerSecond)} (SmoothBursty), per key,
 * reproduced to the microsecond.
 *
 * <p>Permits are handed out at a steady {@code permitsPerSecond}; an idle key saves up to
 * {@code maxBurstSeconds × permitsPerSecond} permits to spend at once. The first request on a key never waits,
 * and each request pays for its predecessor: a request that takes more permits than are stored is admitted
 * at once and pushes the <em>next</em> request's time back. {@link RateLimiter#tryAcquire} admits only when
 * the next free ticket has arrived (Guava's {@code tryAcquire(permits, 0, ...)}); {@link RateLimiter#reserve}
 * and {@link RateLimiter#acquire} admit when the wait fits in the timeout, exactly as Guava's
 * {@code tryAcquire(permits, timeout, unit)}. A key that has been idle long enough to save a full burst is
 * dropped, and a key without state is exactly that, an idle key with the full burst saved: a key seen for the
 * first time may spend {@code maxBurstSeconds × permitsPerSecond} permits at once, as a Guava limiter created
 * earlier and left idle would. Memory: two numbers per key, while the key is not idle and full.
 *
 * <p>Changing the rate behaves like Guava's {@code setRate}: the key's state is brought up to date at the
 * old rate, stored permits are scaled by {@code newMaxPermits / oldMaxPermits}, and the next free ticket
 * (already paid at the old rate) is kept.
 *
 * @param name             default {@code "smooth_bursty"}
 * @param permitsPerSecond finite, in [1/31,622,400 (one per 366 days), 1,000,000]
 * @param maxBurstSeconds  finite, in [0, 31,622,400] (366 days); default 1.0, as Guava
 */
public record SmoothBursty(String name, double permitsPerSecond, double maxBurstSeconds) implements Limit {

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public SmoothBursty {
        Checks.name(name, "name");
        Checks.rate(permitsPerSecond, "permits_per_second");
        if (maxBurstSeconds != 0.0) {
            Checks.finite(maxBurstSeconds, "max_burst_seconds", 0.0, 31_622_400.0);
        }
    }

    /** Guava's {@code RateLimiter.create(permitsPerSecond)}: one second of burst. */
    public static SmoothBursty of(double permitsPerSecond) {
        return new SmoothBursty(AlgorithmName.SMOOTH_BURSTY.text(), permitsPerSecond, 1.0);
    }

    @Override
    public String algorithm() {
        return AlgorithmName.SMOOTH_BURSTY.text();
    }

    @Override
    public long maxPermits() {
        return Long.MAX_VALUE;
    }

    @Override
    public SmoothBursty named(String name) {
        return new SmoothBursty(name, permitsPerSecond, maxBurstSeconds);
    }

    /** Guava's {@code setRate}. */
    public SmoothBursty withPermitsPerSecond(double permitsPerSecond) {
        return new SmoothBursty(name, permitsPerSecond, maxBurstSeconds);
    }

    public SmoothBursty withMaxBurstSeconds(double maxBurstSeconds) {
        return new SmoothBursty(name, permitsPerSecond, maxBurstSeconds);
    }
}
