package io.sluice.internal.memory;

import io.sluice.internal.algorithm.StateCell;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The state of one key under a rule of one limit whose algorithm steps in place ({@code InPlaceStep}): it sits
 * in the key's {@link Entry} and decisions overwrite it, so a decision allocates no state and no entry.
 *
 * <p>Thread safety: a spin lock of its own guards the integers, since decisions change them without swapping
 * the entry. Whatever takes the entry out of its {@link Holder} (a sweep, an eviction, a reset, or a path that
 * works on immutable states) does so holding this lock and then retires the cell for good, so a decision that
 * locks it late sees {@code false} from {@link #lock} and looks the key up again: no decision ever lands in a
 * cell that has left its holder. The lock is held for one in-place step, never across a wait; a waiter spins
 * briefly, then yields, so a holder that lost its processor gets it back.
 */
final class Cell extends StateCell {

    private static final int FREE = 0;
    private static final int HELD = 1;
    /** Terminal: the cell's entry left its holder (the state word doubles as the "retired" flag: no field more). */
    private static final int RETIRED = 2;
    private static final int SPINS = 64;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Cell.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through STATE
    private volatile int state;

    /** Takes the lock; false (without it) when the cell is retired. */
    boolean lock() {
        for (int spins = 0; ; spins++) {
            int s = (int) STATE.getVolatile(this);
            if (s == FREE && STATE.compareAndSet(this, FREE, HELD)) {
                return true;
            }
            if (s == RETIRED) {
                return false;
            }
            if (spins < SPINS) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    void unlock() {
        STATE.setRelease(this, FREE);
    }

    /** Releases the lock for good: called by the holder of the lock once the cell's entry has left its holder. */
    void retire() {
        STATE.setRelease(this, RETIRED);
    }
}
