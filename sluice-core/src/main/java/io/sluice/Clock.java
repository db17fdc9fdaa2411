package io.sluice;

/**
 * The time source of a store: integer microseconds since the Unix epoch.
 *
 * <p>Algorithms never read a clock; the store that runs them asks its {@code Clock} once per decision and
 * passes the value in. Tests inject a manual clock (see {@code io.sluice.testkit.ManualClock}); the
 * in-memory store uses {@link #system()} by default.
 *
 * <p>Implementations must be thread-safe. A clock may step backwards (NTP, a manual clock); every
 * algorithm treats a time earlier than its state as "no time has passed" and never as negative elapsed
 * time.
 */
@FunctionalInterface
public interface Clock {

    /** Current time, microseconds since 1970-01-01T00:00:00Z. */
    long nowMicros();

    /**
     * The system clock: wall-clock time read once at class load, advanced by {@link System#nanoTime()}.
     * It is monotonic within one JVM and aligned to the Unix epoch, which the epoch-aligned algorithms
     * ({@code fixed_window}, {@code interval_aligned} refill) need. It does not follow later NTP steps of
     * the wall clock; for a process that lives for months, inject your own clock if that matters.
     */
    static Clock system() {
        return SystemClock.INSTANCE;
    }
}

/** Package-private implementation of {@link Clock#system()}. */
enum SystemClock implements Clock {
    INSTANCE;

    private final long wallMicrosAtStart;
    private final long nanoAtStart;

    SystemClock() {
        java.time.Instant now = java.time.Instant.now();
        this.nanoAtStart = System.nanoTime();
        this.wallMicrosAtStart = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    @Override
    public long nowMicros() {
        return wallMicrosAtStart + (System.nanoTime() - nanoAtStart) / 1_000;
    }
}
