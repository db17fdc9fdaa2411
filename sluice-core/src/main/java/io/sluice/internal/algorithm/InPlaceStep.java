package io.sluice.internal.algorithm;

import io.sluice.Decision;
import io.sluice.Limit;

/**
 * An algorithm's step run on a {@link StateCell} instead of immutable states, for the memory store's
 * single-limit path, where a new state object per decision was most of the bytes allocated. The pure
 * {@link Algorithm#step} stays the specification (the Lua ports follow it); an in-place step must give, for
 * every state and request, the decision {@code RuleEvaluator} makes from the pure step and leave in the cell
 * the state it would commit. A property test per algorithm holds it to that ({@code InPlaceStepPropertiesTest}).
 *
 * <p>"The state" below is {@code live ? save(cell) : null}: a store passes {@code live = false} for a cell
 * whose state has expired, or that holds none, and the step then decides as for a key without state.
 *
 * @param <S> the algorithm's immutable state type
 */
public interface InPlaceStep<S> {

    /** Overwrites {@code cell} with {@code state} (non-null), its expiry included. */
    void load(S state, StateCell cell);

    /** The immutable state the cell holds (which must hold one). */
    S save(StateCell cell);

    /** {@link Algorithm#grantable} on the state. */
    long grantable(StateCell cell, boolean live, long now, long permits);

    /**
     * Steps the state for {@code permits} and, unless {@code peek}, writes into the cell the state the store
     * would commit when that differs from the state (the admitted state when allowed, else the rejected one),
     * with its expiry (a state written already expired leaves none: {@link StateCell#wrote}). A step that commits
     * nothing leaves the cell as it was, an expired state included.
     *
     * @return the decision of a rule of this one limit: allowed with {@code peek ? 0 : permits} granted, or
     *         rejected with the step's retry-after
     */
    Decision step(StateCell cell, boolean live, long now, long permits, long maxWaitMicros, boolean peek);

    /** An admitted decision of a rule of the one limit {@code limit}, as {@code RuleEvaluator} reports it. */
    static Decision admitted(Limit limit, boolean peek, long permits, long waitMicros, long remaining,
                             long resetAfterMicros) {
        return new Decision(true, peek ? 0 : permits, remaining, 0, resetAfterMicros, waitMicros, limit.name(),
                Decision.NO_LEASE);
    }

    /** A rejected decision of a rule of the one limit {@code limit}, as {@code RuleEvaluator} reports it. */
    static Decision rejected(Limit limit, long remaining, long retryAfterMicros, long resetAfterMicros) {
        return new Decision(false, 0, remaining, retryAfterMicros, resetAfterMicros, 0, limit.name(),
                Decision.NO_LEASE);
    }
}
