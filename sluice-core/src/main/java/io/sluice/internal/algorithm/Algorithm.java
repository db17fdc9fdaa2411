package io.sluice.internal.algorithm;

import io.sluice.Limit;

/**
 * One limit's pure state transition. Implementations are immutable, hold only validated parameters, never
 * read a clock and never mutate a state: every method returns new values.
 *
 * <p>A {@code null} state means "no state": a key never seen, or one whose state expired. Times are
 * microseconds since the epoch in [0, {@link Arith#MAX_TIME}]; a {@code now} earlier than the state's own
 * times is treated as no time having passed.
 *
 * @param <S> the immutable state type
 */
public interface Algorithm<S> {

    /** The limit (parameters) this transition enforces. */
    Limit limit();

    /**
     * Decides a request for {@code permits} (0 is a pure inspection that always passes) at {@code now}.
     *
     * @param maxWaitMicros 0 to admit only permits usable now; otherwise the longest wait a reservation may
     *                      have ({@link Long#MAX_VALUE}: unbounded). Algorithms that cannot reserve ignore it.
     */
    Step<S> step(S state, long now, long permits, long maxWaitMicros);

    /**
     * The largest {@code n} in [0, permits] for which {@code step(state, now, n, 0)} admits: the best-effort
     * partial grant.
     */
    long grantable(S state, long now, long permits);

    /** The time from which {@code state} (non-null) means the same as no state, so a store may drop it. */
    long expiresAt(S state);

    /**
     * The state to use under this algorithm's parameters, given one written under {@code previous} (a limit
     * of the same algorithm and name). Each algorithm documents what it keeps.
     */
    S migrate(S state, Limit previous, long now);

    /**
     * The same transition on a mutable {@link StateCell}, or null when this algorithm has none (then a store
     * allocates a state per change, as {@link #step} does).
     */
    default InPlaceStep<S> inPlace() {
        return null;
    }

    /** Returns the lease's permits; only {@code concurrency} holds leases. */
    default Release<S> release(S state, long now, long lease) {
        return new Release<>(false, state);
    }

    /** The outcome of {@link #release}: whether the lease was held, and the new state. */
    record Release<S>(boolean released, S state) {}
}
