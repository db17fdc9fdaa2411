package io.sluice;

import java.time.Duration;

/**
 * {@code sliding_log}: an exact log of admitted events, as ClassDojo's rolling-rate-limiter keeps it.
 *
 * <p>Guarantee: at most {@code limit} admitted in every interval of length {@code window}, wherever it
 * starts; with {@code minGap}, no two admitted requests closer than that. Events at the same microsecond
 * never collapse into one. With {@code countRejected}, blocked attempts are logged too (ClassDojo's
 * behaviour), so a client that retries faster than the rate stays blocked until it pauses. Memory: at most
 * {@code limit} entries per key (older entries can never change a decision), hence {@code limit} is at most
 * {@link #MAX_LOG}.
 *
 * <p>Changing the limit or window keeps the log and judges it by the new parameters at once (entries that had
 * already left the old window stay gone). A raised limit sees only the newest old-limit permits of the log.
 *
 * @param name          default {@code "sliding_log"}
 * @param limit         permits per window, in [1, {@value #MAX_LOG}]
 * @param window        window length, whole microseconds in [1 µs, 366 days]
 * @param minGap        minimum time between admitted requests, in [0, window]; default zero (none)
 * @param countRejected whether blocked attempts are logged too; default {@code false}
 */
public record SlidingLog(String name, long limit, Duration window, Duration minGap, boolean countRejected)
        implements Limit {

    /** Largest {@code limit} of a sliding log: the log holds up to this many entries per key. */
    public static final long MAX_LOG = 1_000_000;

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public SlidingLog {
        Checks.name(name, "name");
        Checks.count(limit, "limit", 1, MAX_LOG);
        long w = Checks.micros(window, "window");
        long g = Checks.micros(minGap, "min_gap", 0);
        if (g > w) {
            throw new IllegalArgumentException("min_gap must be in [0, window=" + window + "], was " + minGap);
        }
    }

    /** {@code limit} permits in any {@code window}, no minimum gap, rejected attempts not logged. */
    public static SlidingLog of(long limit, Duration window) {
        return new SlidingLog(AlgorithmName.SLIDING_LOG.text(), limit, window, Duration.ZERO, false);
    }

    @Override
    public String algorithm() {
        return AlgorithmName.SLIDING_LOG.text();
    }

    @Override
    public long maxPermits() {
        return limit;
    }

    @Override
    public SlidingLog named(String name) {
        return new SlidingLog(name, limit, window, minGap, countRejected);
    }

    public SlidingLog withLimit(long limit) {
        return new SlidingLog(name, limit, window, minGap, countRejected);
    }

    public SlidingLog withWindow(Duration window) {
        return new SlidingLog(name, limit, window, minGap, countRejected);
    }

    public SlidingLog withMinGap(Duration minGap) {
        return new SlidingLog(name, limit, window, minGap, countRejected);
    }

    public SlidingLog withCountRejected(boolean countRejected) {
        return new SlidingLog(name, limit, window, minGap, countRejected);
    }
}
