package io.sluice;

import java.time.Duration;

/**
 * {@code fixed_window}: at most {@code limit} permits per window; windows are aligned to the Unix epoch
 * (as envoyproxy/ratelimit does) or to the key's first request.
 *
 * <p>Guarantee: at most {@code limit} admitted per aligned window. Across a window boundary up to
 * {@code 2 × limit} can pass within one window length (the end of one window plus the start of the next).
 * Memory: one counter per key. With {@code countRejected}, rejected attempts count too, so a client that
 * keeps hammering stays blocked until the window ends.
 *
 * <p>Changing the limit keeps the current window's count (a lower limit rejects at once when the count is
 * already above it); changing the window length or alignment starts a new window at the next request.
 *
 * @param name          the name reported in decisions; default {@code "fixed_window"}
 * @param limit         permits per window, in [1, {@link Limit#MAX_COUNT}]
 * @param window        window length, whole microseconds in [1 µs, 366 days]
 * @param align         where windows start; default {@link Align#EPOCH}
 * @param countRejected whether rejected attempts are counted; default {@code false}
 */
public record FixedWindow(String name, long limit, Duration window, Align align, boolean countRejected)
        implements Limit {

    /** Where a fixed window starts. */
    public enum Align {
        /** Windows start at multiples of the window length since 1970-01-01T00:00:00Z. */
        EPOCH,
        /** A window starts at the first request after the previous window ended. */
        FIRST_REQUEST
    }

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public FixedWindow {
        Checks.name(name, "name");
        Checks.count(limit, "limit");
        Checks.micros(window, "window");
        Checks.notNull(align, "align");
    }

    /** {@code limit} permits per epoch-aligned {@code window}, counting admitted requests only. */
    public static FixedWindow of(long limit, Duration window) {
        return new FixedWindow(AlgorithmName.FIXED_WINDOW.text(), limit, window, Align.EPOCH, false);
    }

    @Override
    public String algorithm() {
        return AlgorithmName.FIXED_WINDOW.text();
    }

    @Override
    public long maxPermits() {
        return limit;
    }

    @Override
    public FixedWindow named(String name) {
        return new FixedWindow(name, limit, window, align, countRejected);
    }

    public FixedWindow withLimit(long limit) {
        return new FixedWindow(name, limit, window, align, countRejected);
    }

    public FixedWindow withWindow(Duration window) {
        return new FixedWindow(name, limit, window, align, countRejected);
    }

    public FixedWindow withAlign(Align align) {
        return new FixedWindow(name, limit, window, align, countRejected);
    }

    public FixedWindow withCountRejected(boolean countRejected) {
        return new FixedWindow(name, limit, window, align, countRejected);
    }
}
