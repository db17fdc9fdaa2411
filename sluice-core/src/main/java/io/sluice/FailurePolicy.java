package io.sluice;

import java.util.Objects;

/**
 * What a rule decides when its store cannot: Redis timed out, refused the connection, or its circuit breaker
 * is open. Every decision made under a policy carries it as its {@link Decision#source()}.
 *
 * <ul>
 * <li>{@link #raise()} (the default): the call throws the store's exception (its future fails);</li>
 * <li>{@link #failOpen()}: admit, as Envoy's rate limit filter does unless told otherwise;</li>
 * <li>{@link #failClosed()}: reject, with a retry-after of the time until the store's circuit breaker may let a
 * call through again (the rest of its cool-down; at least 1 µs);</li>
 * <li>{@link #localFallback(double)}: decide in a local in-memory limiter that enforces the given share of
 * every limit, e.g. {@code 1.0 / expectedNodes}, so the fleet together stays near the limit.</li>
 * </ul>
 *
 * <p>The in-memory store never fails, so the policy only matters for remote stores. Immutable.
 */
public final class FailurePolicy {

    /** The four policies. */
    public enum Kind { RAISE, FAIL_OPEN, FAIL_CLOSED, LOCAL_FALLBACK }

    private static final FailurePolicy RAISE = new FailurePolicy(Kind.RAISE, 1.0);
    private static final FailurePolicy OPEN = new FailurePolicy(Kind.FAIL_OPEN, 1.0);
    private static final FailurePolicy CLOSED = new FailurePolicy(Kind.FAIL_CLOSED, 1.0);

    private final Kind kind;
    private final double share;

    private FailurePolicy(Kind kind, double share) {
        this.kind = kind;
        this.share = share;
    }

    /** Store failures surface as exceptions. The default. */
    public static FailurePolicy raise() {
        return RAISE;
    }

    /** Admit every request while the store cannot decide. */
    public static FailurePolicy failOpen() {
        return OPEN;
    }

    /** Reject every request while the store cannot decide. */
    public static FailurePolicy failClosed() {
        return CLOSED;
    }

    /**
     * Decide locally under every limit scaled by {@code share} (counts and rates multiplied, rounded down;
     * windows and periods unchanged) while the store cannot decide. The local state starts empty at the first
     * failure and is kept across outages.
     *
     * @throws IllegalArgumentException unless {@code share} is in (0, 1]
     */
    public static FailurePolicy localFallback(double share) {
        return new FailurePolicy(Kind.LOCAL_FALLBACK, Checks.finite(share, "fallback_share", 0, 1));
    }

    public Kind kind() {
        return kind;
    }

    /** The share of each limit the local fallback enforces; 1 for the other policies. */
    public double share() {
        return share;
    }

    /** The policy's name as in rule files: {@code raise}, {@code fail_open}, {@code fail_closed}, {@code local_fallback}. */
    public String name() {
        return kind.name().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FailurePolicy p && p.kind == kind && p.share == share;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, share);
    }

    @Override
    public String toString() {
        return kind == Kind.LOCAL_FALLBACK ? "local_fallback(" + share + ")" : name();
    }
}
