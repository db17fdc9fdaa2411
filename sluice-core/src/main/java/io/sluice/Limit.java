package io.sluice;

import java.time.Duration;

/**
 * One limit: an algorithm and its validated parameters, with a name that {@link Decision#limit()} reports.
 *
 * <p>Implementations are the immutable value classes of this package, one per algorithm:
 * {@link FixedWindow}, {@link SlidingLog}, {@link SlidingWindow}, {@link RollingWindow}, {@link TokenBucket},
 * {@link Gcra}, {@link LeakyBucket}, {@link SmoothBursty}, {@link SmoothWarmingUp}, {@link RefreshPeriod},
 * {@link Concurrency} and {@link CalendarWindow}. Each is built with a static {@code of(...)} factory and refined with {@code with...}
 * methods that return a validated copy; every invalid value throws {@link IllegalArgumentException} naming
 * the field and the accepted range. The interface is sealed: the stores, the rule files and the Lua scripts
 * know exactly these algorithms, and no other implementation could be decided.
 *
 * <p>Common bounds: counts (limits, capacities, permits) are at most {@link #MAX_COUNT}; durations are whole
 * microseconds between 1 µs and {@link #MAX_DURATION}. The bounds keep every algorithm's arithmetic exact in
 * 64-bit integers and in the IEEE doubles of the Redis Lua port.
 */
public sealed interface Limit permits FixedWindow, SlidingLog, SlidingWindow, RollingWindow, TokenBucket, Gcra,
        LeakyBucket, SmoothBursty, SmoothWarmingUp, RefreshPeriod, Concurrency, CalendarWindow {

    /** Largest limit, capacity or permit count accepted anywhere: 10^12. */
    long MAX_COUNT = 1_000_000_000_000L;

    /** Longest window, period or TTL accepted anywhere: 366 days. */
    Duration MAX_DURATION = Duration.ofDays(366);

    /** The limit's name within its rule; defaults to the algorithm name. */
    String name();

    /** The algorithm's name as used in rule files, e.g. {@code "token_bucket"}. */
    String algorithm();

    /**
     * The most permits one all-or-nothing request may ask for; a larger request could never be granted and
     * is rejected with {@link IllegalArgumentException}. {@link Long#MAX_VALUE} when any count can be
     * granted eventually (Guava's smooth limiters and {@code refresh_period} reservations only bound the
     * wait).
     */
    long maxPermits();

    /** A copy of this limit with another name. */
    Limit named(String name);
}
