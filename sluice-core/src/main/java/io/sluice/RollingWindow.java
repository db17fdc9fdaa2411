package io.sluice;

import java.time.Duration;

/**
 * {@code rolling_window}: the bucketed rolling window of Istio mixer's redisquota adapter.
 *
 * <p>Admitted permits are aggregated into buckets of length {@code bucket}; a bucket leaves the window
 * once it is entirely older than {@code window}. Guarantee: at most {@code limit} admitted in every sliding
 * interval of length {@code window − bucket}, i.e. sliding-log accuracy to within one bucket. Memory:
 * at most {@code window / bucket + 1} buckets per key, whatever the request rate. With
 * {@link RateLimiter#tryAcquireAtMost} it grants what is left (Istio's best-effort mode).
 *
 * <p>Changing the limit keeps the buckets; changing the window keeps them and expires them by the new
 * window (buckets that had already expired under the old window stay gone); changing the bucket length keeps
 * existing buckets and starts new ones at the new length.
 *
 * @param name   default {@code "rolling_window"}
 * @param limit  permits per window, in [1, {@link Limit#MAX_COUNT}]
 * @param window window length, whole microseconds in [1 µs, 366 days]
 * @param bucket bucket length, in [1 µs, window], and window/bucket at most {@value #MAX_BUCKETS}
 */
public record RollingWindow(String name, long limit, Duration window, Duration bucket) implements Limit {

    /** Most buckets in one window: bounds memory per key. */
    public static final long MAX_BUCKETS = 10_000;

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public RollingWindow {
        Checks.name(name, "name");
        Checks.count(limit, "limit");
        long w = Checks.micros(window, "window");
        long b = Checks.micros(bucket, "bucket");
        if (b > w) {
            throw new IllegalArgumentException("bucket must be in [1us, window=" + window + "], was " + bucket);
        }
        if (w / b > MAX_BUCKETS) {
            throw new IllegalArgumentException("bucket must be at least window/" + MAX_BUCKETS + " ("
                    + Duration.ofNanos((w + MAX_BUCKETS - 1) / MAX_BUCKETS * 1000) + "), was " + bucket);
        }
    }

    public static RollingWindow of(long limit, Duration window, Duration bucket) {
        return new RollingWindow(AlgorithmName.ROLLING_WINDOW.text(), limit, window, bucket);
    }

    @Override
    public String algorithm() {
        return AlgorithmName.ROLLING_WINDOW.text();
    }

    @Override
    public long maxPermits() {
        return limit;
    }

    @Override
    public RollingWindow named(String name) {
        return new RollingWindow(name, limit, window, bucket);
    }

    public RollingWindow withLimit(long limit) {
        return new RollingWindow(name, limit, window, bucket);
    }

    public RollingWindow withWindow(Duration window) {
        return new RollingWindow(name, limit, window, bucket);
    }

    public RollingWindow withBucket(Duration bucket) {
        return new RollingWindow(name, limit, window, bucket);
    }
}
