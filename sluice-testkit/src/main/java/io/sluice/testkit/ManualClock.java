package io.sluice.testkit;

import io.sluice.Clock;
import io.sluice.Sleeper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves only when told, and a {@link Sleeper} that "sleeps" by moving it, recording every
 * sleep so tests can assert the exact timeline of waits (as Guava's RateLimiterTest does with its fake
 * stopwatch). Thread-safe.
 */
public final class ManualClock implements Clock, Sleeper {

    private final AtomicLong micros;
    private final List<Long> sleeps = new ArrayList<>();

    /** A clock at {@code startMicros} since the epoch. */
    public ManualClock(long startMicros) {
        this.micros = new AtomicLong(startMicros);
    }

    /** A clock at 2026-01-01T00:00:00Z, so epoch-aligned windows start at predictable times. */
    public ManualClock() {
        this(1_767_225_600_000_000L);
    }

    @Override
    public long nowMicros() {
        return micros.get();
    }

    /** Moves the clock forward (or back, for negative values). */
    public ManualClock advance(Duration d) {
        micros.addAndGet(d.toNanos() / 1_000);
        return this;
    }

    public ManualClock advanceMicros(long delta) {
        micros.addAndGet(delta);
        return this;
    }

    public ManualClock advanceMillis(long delta) {
        return advanceMicros(delta * 1_000);
    }

    public ManualClock setMicros(long value) {
        micros.set(value);
        return this;
    }

    /** Records the sleep and moves the clock by it. */
    @Override
    public void sleepMicros(long sleep) {
        synchronized (sleeps) {
            sleeps.add(sleep);
        }
        if (sleep > 0) {
            micros.addAndGet(sleep);
        }
    }

    /** The sleeps recorded since the last call, in microseconds; clears the record. */
    public List<Long> takeSleeps() {
        synchronized (sleeps) {
            List<Long> out = new ArrayList<>(sleeps);
            sleeps.clear();
            return out;
        }
    }
}
