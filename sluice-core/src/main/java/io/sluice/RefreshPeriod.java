package io.sluice;

import java.time.Duration;

/**
 * {@code refresh_period}: Resilience4j's {@code AtomicRateLimiter}, per key: {@code limitForPeriod} permits
 * per cycle of {@code refreshPeriod}; cycles are counted from the key's first request (the moment Resilience4j
 * would have created the limiter).
 *
 * <p>At the start of each cycle the available permits are topped up to {@code limitForPeriod} (debt from
 * reservations is paid first). A request that does not fit may <em>reserve</em> permits of future cycles when
 * the wait fits in its timeout, driving the available count negative, exactly as
 * {@code AtomicRateLimiter.reservePermission}. Guarantee: no cycle's permits are handed out twice. Without
 * reservations at most {@code limitForPeriod} permits become usable per cycle; a reservation may combine what
 * is left of its own cycle with the next cycle's refill, as in Resilience4j, so by the time permits become
 * usable, n consecutive cycles see at most (n + 1) × {@code limitForPeriod} when no request asks for more
 * than {@code limitForPeriod}, and the first k cycles of a key at most k × {@code limitForPeriod} in any case.
 * A key without state can only reject a request for more than {@code limitForPeriod} permits (it would not
 * store the rejected key, so retrying does not help: its retry-after is unbounded); such a request passes there
 * iff its wait may cover the cycles it needs. The key expires once it has been idle with full permits for a
 * whole cycle; the next request then starts a new cycle phase, as a freshly created limiter would. Memory:
 * three integers per key.
 *
 * <p>Changing {@code limitForPeriod} takes effect from the next cycle (Resilience4j's
 * {@code changeLimitForPeriod}); changing {@code refreshPeriod} keeps the cycle origin and recounts cycles.
 *
 * @param name           default {@code "refresh_period"}
 * @param limitForPeriod permits per cycle, in [1, {@link Limit#MAX_COUNT}]
 * @param refreshPeriod  the cycle length, whole microseconds in [1 µs, 366 days]
 * @param timeout        the wait {@link RateLimiter#acquire(String, long)} accepts when no explicit maximum is
 *                       given (Resilience4j's {@code timeoutDuration}), in [0, 366 days]; default 5 s
 */
public record RefreshPeriod(String name, long limitForPeriod, Duration refreshPeriod, Duration timeout)
        implements Limit {

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public RefreshPeriod {
        Checks.name(name, "name");
        Checks.count(limitForPeriod, "limit_for_period");
        Checks.micros(refreshPeriod, "refresh_period");
        Checks.micros(timeout, "timeout", 0);
    }

    /** {@code limitForPeriod} per {@code refreshPeriod}, Resilience4j's default timeout of 5 seconds. */
    public static RefreshPeriod of(long limitForPeriod, Duration refreshPeriod) {
        return new RefreshPeriod(AlgorithmName.REFRESH_PERIOD.text(), limitForPeriod, refreshPeriod, Duration.ofSeconds(5));
    }

    @Override
    public String algorithm() {
        return AlgorithmName.REFRESH_PERIOD.text();
    }

    @Override
    public long maxPermits() {
        return Long.MAX_VALUE;
    }

    @Override
    public RefreshPeriod named(String name) {
        return new RefreshPeriod(name, limitForPeriod, refreshPeriod, timeout);
    }

    /** Resilience4j's {@code changeLimitForPeriod}. */
    public RefreshPeriod withLimitForPeriod(long limitForPeriod) {
        return new RefreshPeriod(name, limitForPeriod, refreshPeriod, timeout);
    }

    public RefreshPeriod withRefreshPeriod(Duration refreshPeriod) {
        return new RefreshPeriod(name, limitForPeriod, refreshPeriod, timeout);
    }

    /** Resilience4j's {@code changeTimeoutDuration}. */
    public RefreshPeriod withTimeout(Duration timeout) {
        return new RefreshPeriod(name, limitForPeriod, refreshPeriod, timeout);
    }
}
