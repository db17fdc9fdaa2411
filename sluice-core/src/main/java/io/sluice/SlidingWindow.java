package io.sluice;

import java.time.Duration;

/**
 * {@code sliding_window}: the two-counter weighted approximation of a sliding log (Cloudflare, Figma).
 *
 * <p>The estimate for the window ending now is {@code previous × (1 − elapsed/window) + current}, where
 * {@code previous} and {@code current} count admitted permits in the epoch-aligned windows before and
 * containing now. Guarantee: never more than {@code limit} per aligned window, and the estimate assumes the
 * previous window's requests were spread evenly, so a sliding interval can exceed {@code limit} when they
 * were not (Cloudflare measured 0.003% of requests wrongly allowed). Memory: two counters per key.
 *
 * <p>Changing the limit keeps both counters; changing the window restarts counting at the next request.
 *
 * @param name   default {@code "sliding_window"}
 * @param limit  permits per window, in [1, {@link Limit#MAX_COUNT}]
 * @param window window length, whole microseconds in [1 µs, 366 days]
 */
public record SlidingWindow(String name, long limit, Duration window) implements Limit {

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public SlidingWindow {
        Checks.name(name, "name");
        Checks.count(limit, "limit");
        Checks.micros(window, "window");
    }

    public static SlidingWindow of(long limit, Duration window) {
        return new SlidingWindow(AlgorithmName.SLIDING_WINDOW.text(), limit, window);
    }

    @Override
    public String algorithm() {
        return AlgorithmName.SLIDING_WINDOW.text();
    }

    @Override
    public long maxPermits() {
        return limit;
    }

    @Override
    public SlidingWindow named(String name) {
        return new SlidingWindow(name, limit, window);
    }

    public SlidingWindow withLimit(long limit) {
        return new SlidingWindow(name, limit, window);
    }

    public SlidingWindow withWindow(Duration window) {
        return new SlidingWindow(name, limit, window);
    }
}
