package io.sluice;

import java.time.Duration;

/**
 * {@code leaky_bucket}: nginx {@code limit_req} shaping: {@code limit} per {@code period} (nginx's
 * {@code rate=10r/s} is {@code limit=10, period=1s}), a {@code burst} queue, and {@code delay}/{@code nodelay}.
 *
 * <p>Model (nginx's own): an "excess" counter in milli-requests leaks at the rate; each request adds 1000.
 * A request whose excess would exceed {@code burst × 1000} is rejected and changes nothing. An admitted one
 * must wait {@code (excess − delay × 1000) / rate} when the excess is above the {@code delay} threshold:
 * requests beyond the rate are <b>delayed</b> (the wait in {@link Decision#waitMicros()}), not rejected, until
 * the queue is full. {@code nodelay} is {@code delay = burst}: the burst passes at once but still fills the
 * queue. Use {@link RateLimiter#acquire} or {@link RateLimiter#reserve}; {@link RateLimiter#tryAcquire}
 * admits only what needs no wait. Memory: two integers per key.
 *
 * <p>Changing parameters keeps the excess and last-leak time; the new rate leaks it from then on.
 *
 * @param name    default {@code "leaky_bucket"}
 * @param limit   requests per period, in [1, {@link Limit#MAX_COUNT}]
 * @param period  the period, whole microseconds in [1 µs, 366 days]
 * @param burst   the queue size, in [0, {@link Limit#MAX_COUNT}]; default 0
 * @param nodelay whether queued requests pass without delay; default {@code false}
 * @param delay   how many excess requests pass without delay (nginx {@code delay=}), in [0, burst]; default 0
 */
public record LeakyBucket(String name, long limit, Duration period, long burst, boolean nodelay, long delay)
        implements Limit {

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public LeakyBucket {
        Checks.name(name, "name");
        Checks.count(limit, "limit", 1, 1_000_000_000L);
        Checks.micros(period, "period");
        Checks.count(burst, "burst", 0, 1_000_000_000L);
        Checks.count(delay, "delay", 0, burst);
        if (nodelay && delay > 0) {
            throw new IllegalArgumentException("delay must be 0 when nodelay is set (nginx accepts one or the other), was "
                    + delay);
        }
    }

    /** nginx {@code limit_req} with {@code rate=limit/period} and no burst. */
    public static LeakyBucket of(long limit, Duration period) {
        return new LeakyBucket(AlgorithmName.LEAKY_BUCKET.text(), limit, period, 0, false, 0);
    }

    @Override
    public String algorithm() {
        return AlgorithmName.LEAKY_BUCKET.text();
    }

    @Override
    public long maxPermits() {
        return burst + 1;
    }

    @Override
    public LeakyBucket named(String name) {
        return new LeakyBucket(name, limit, period, burst, nodelay, delay);
    }

    public LeakyBucket withRate(long limit, Duration period) {
        return new LeakyBucket(name, limit, period, burst, nodelay, delay);
    }

    public LeakyBucket withBurst(long burst) {
        return new LeakyBucket(name, limit, period, burst, nodelay, delay);
    }

    public LeakyBucket withNodelay(boolean nodelay) {
        return new LeakyBucket(name, limit, period, burst, nodelay, delay);
    }

    public LeakyBucket withDelay(long delay) {
        return new LeakyBucket(name, limit, period, burst, nodelay, delay);
    }
}
