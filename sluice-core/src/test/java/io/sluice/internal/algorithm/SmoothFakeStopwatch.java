package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Drives one smooth_* key the way Guava's RateLimiterTest drives a RateLimiter with its FakeStopwatch: the
 * key is created at the start time, acquire sleeps the wait (so the next request's now includes it), and
 * every sleep is logged as Guava does: "R0.20" for a wait of the limiter, "U1.00" for the user's sleep.
 */
final class SmoothFakeStopwatch {
    private SmoothAlgorithm algorithm;
    private SmoothAlgorithm.State state;
    private long now;
    private final List<String> events = new ArrayList<>();

    /** A key created at {@code start}, like RateLimiter.create on a stopwatch reading {@code start}. */
    SmoothFakeStopwatch(Limit limit, long start) {
        this.algorithm = (SmoothAlgorithm) (Algorithm<?>) Algorithms.of(limit);
        this.now = start;
        this.state = algorithm.fresh(start);
    }

    /** Guava's acquire(permits): never rejected, sleeps the wait; returns the wait in seconds. */
    double acquire(long permits) {
        Step<SmoothAlgorithm.State> step = algorithm.step(state, now, permits, Long.MAX_VALUE);
        assertThat(step.allowed()).isTrue();
        state = step.admitted();
        sleep("R", step.waitMicros());
        return step.waitMicros() / 1_000_000.0;
    }

    double acquire() {
        return acquire(1);
    }

    /** Guava's tryAcquire(permits, timeout): negative timeouts count as zero, as in Guava. */
    boolean tryAcquire(long permits, long timeoutMicros) {
        Step<SmoothAlgorithm.State> step = algorithm.step(state, now, permits, Math.max(0, timeoutMicros));
        if (!step.allowed()) {
            assertThat(step.rejected()).isSameAs(state);
            return false;
        }
        state = step.admitted();
        sleep("R", step.waitMicros());
        return true;
    }

    boolean tryAcquire() {
        return tryAcquire(1, 0);
    }

    /** Guava's setRate (or any parameter change): the store's migrate at now. */
    void setLimit(Limit limit) {
        SmoothAlgorithm next = (SmoothAlgorithm) (Algorithm<?>) Algorithms.of(limit);
        state = next.migrate(state, algorithm.limit(), now);
        algorithm = next;
    }

    void sleepMillis(long millis) {
        sleep("U", millis * 1000);
    }

    long now() {
        return now;
    }

    SmoothAlgorithm.State state() {
        return state;
    }

    /** The events since the last call, joined as Guava's assertEvents prints them. */
    String readEventsAndClear() {
        String joined = String.join(", ", events);
        events.clear();
        return joined;
    }

    private void sleep(String caption, long micros) {
        now += micros;
        events.add(caption + String.format(Locale.ROOT, "%3.2f", micros / 1_000_000.0));
    }
}
