package io.sluice.internal.algorithm;

/**
 * A window counter whose state can count permits admitted by another process: the transition behind
 * {@link io.sluice.Mode#synced}, where each node decides locally and periodically pushes what it admitted into
 * the shared state. Implemented by {@code fixed_window} and {@code sliding_window} ({@link io.sluice.Mode#SYNCABLE}).
 *
 * <p>Absorbing is not deciding: the permits were already admitted elsewhere, so they are counted whatever the
 * limit says (a count may pass the limit; it then rejects until its window is over). Permits are counted in the
 * window that contains {@code admittedAt} while that window still matters at {@code now}, and dropped once it is
 * over: a window that is over can no longer affect any decision. Each implementation's essay derives the rule.
 *
 * @param <S> the immutable state type
 */
public interface SyncableAlgorithm<S> extends Algorithm<S> {

    /**
     * The state after {@code permits} admitted at {@code admittedAt} by another node are added, as seen at
     * {@code now}. Permits admitted "after" {@code now} (a node whose clock runs ahead) count as admitted at
     * {@code now}. Returns {@code state} itself when nothing changes (no permits, or their window is over).
     *
     * @param permits    in [0, {@link io.sluice.Limit#MAX_COUNT} + 1]
     * @param admittedAt a time in [0, {@link Arith#MAX_TIME}]
     */
    S absorb(S state, long now, long permits, long admittedAt);

    /**
     * The time from which {@link #absorb} drops permits admitted at {@code admittedAt}, whatever the state:
     * from then on their window is over. May pass {@link Arith#MAX_TIME} (by up to two windows).
     */
    long absorbableUntil(long admittedAt);

    /** Start of the window {@code state}'s newest count belongs to (where a node files permits it admitted). */
    long windowStart(S state);

    /** The state's components in the order of its record (and of the Lua module's fields). */
    long[] fields(S state);

    /**
     * The state with these components, as {@link #fields} gives them.
     *
     * @throws IllegalArgumentException when there are not as many components as the state has, or a count is
     *                                  negative
     */
    S state(long[] fields);
}
