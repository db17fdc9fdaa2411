package io.sluice.internal.memory;

import io.sluice.internal.algorithm.StateCell;

/**
 * The state of one key under a rule of one limit whose algorithm steps in place ({@code InPlaceStep}): it sits
 * in the key's {@link Entry} and decisions overwrite it, so a decision allocates no state and no entry.
 *
 * <p>Thread safety: the cell's own monitor guards its integers, since decisions change them without swapping the
 * entry. Whatever takes the entry out of its {@link Holder} (a sweep, an eviction, a reset, or a path that works
 * on immutable states) does so holding the monitor and then {@link #retire retires} the cell for good, so a
 * decision that gets the monitor late finds it {@link #retired} and looks the key up again: no decision ever
 * lands in a cell that has left its holder. The monitor is held for one in-place step, never across a wait.
 *
 * <p>Why a monitor: an uncontended {@code synchronized} costs one compare-and-set to enter and one to leave and
 * allocates nothing, like the compare-and-set it replaces; under contention HotSpot spins a bounded while, then
 * parks the waiter, so threads hammering one key take turns instead of burning a core. A compare-and-set on an
 * immutable state would allocate that state per decision, which is what this cell exists to avoid; a
 * {@code ReentrantLock} would add an object per key and one per contended wait.
 */
final class Cell extends StateCell {

    /** Set under the monitor once the cell's entry has left its holder; never cleared. */
    private boolean retired;

    /** Whether the cell's entry has left its holder; read and acted on only while holding the monitor. */
    boolean retired() {
        return retired;
    }

    /** Marks the cell retired: called holding the monitor, once the cell's entry has left its holder. */
    void retire() {
        retired = true;
    }
}
