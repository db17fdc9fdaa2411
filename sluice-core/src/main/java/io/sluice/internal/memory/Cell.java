package io.sluice.internal.memory;

import io.sluice.internal.algorithm.StateCell;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The state of one key under a rule of one limit whose algorithm steps in place ({@code InPlaceStep}): it sits
 * in the key's {@link Entry} and decisions overwrite it, so a decision allocates no state and no entry.
 * {@link InPlaceDecider} is the protocol decisions follow; this class holds the cell's version word and the
 * operations on it.
 *
 * <p>Thread safety: writers hold the cell's monitor, and only for as long as it takes to check the version and
 * copy five integers in ({@link #publish}): the step itself runs outside, on a copy. Readers take no lock: they
 * read the {@link #versionBeforeRead version}, copy the integers, and keep the copy only if the version is
 * {@link #unchangedSince unchanged} (a sequence lock: the version is odd while a write is under way). Whatever
 * takes the entry out of its {@link Holder} (a sweep, an eviction, a reset, or a path that works on immutable
 * states) does so holding the monitor and then {@link #retire retires} the cell for good, which leaves its
 * version odd: no optimistic read of it succeeds after that, and a writer that gets the monitor late finds it
 * {@link #retired} and looks the key up again. So no decision ever lands in a cell that has left its holder.
 *
 * <p>Why a monitor for writers, not a compare-and-set on the version: a writer that is descheduled mid-write would
 * leave readers and writers spinning on an odd version; with the monitor, HotSpot spins a bounded while and then
 * parks a waiting writer, and the readers, who see an odd version, wait on the monitor too instead of spinning.
 * A compare-and-set on an immutable state would allocate that state per decision, which is what this cell exists
 * to avoid; a {@code ReentrantLock} would add an object per key. The version is an {@code int} that fits in the
 * object header's gap, where the {@code retired} flag it replaced sat: the cell stays 48 bytes.
 */
final class Cell extends StateCell {

    private static final VarHandle VERSION;

    static {
        try {
            VERSION = MethodHandles.lookup().findVarHandle(Cell.class, "version", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Even: the integers are stable at this version. Odd: a write is under way, or (for good) the cell is retired;
     * under the monitor no write is ever half done, so there odd means retired. Written only under the monitor.
     * It wraps after 2^31 writes; an optimistic read is fooled only if exactly a multiple of 2^31 writes land
     * between its two reads of the version, which copy five integers apart.
     */
    @SuppressWarnings("unused")     // through VERSION
    private int version;

    /** The version before an optimistic read of the integers; odd when such a read cannot succeed. */
    int versionBeforeRead() {
        return (int) VERSION.getAcquire(this);
    }

    /** After an optimistic read of the integers: whether no write began since {@code before} was read. */
    boolean unchangedSince(int before) {
        VarHandle.loadLoadFence();      // the integers' reads come before the version's second read
        return (int) VERSION.getOpaque(this) == before;
    }

    /** The version, read holding the monitor. */
    int versionHeld() {
        return (int) VERSION.get(this);
    }

    /** Whether the cell's entry has left its holder; read and acted on only while holding the monitor. */
    boolean retired() {
        return (versionHeld() & 1) != 0;
    }

    /**
     * Holding the monitor, on a cell not retired: overwrites the integers and expiry with {@code from}'s, the
     * version odd while they change and two higher after.
     */
    void publish(StateCell from) {
        int v = versionHeld();
        VERSION.setOpaque(this, v + 1);
        VarHandle.storeStoreFence();    // readers see the odd version before any of the new integers
        copyFrom(from);
        VERSION.setRelease(this, v + 2);
    }

    /** Marks the cell retired: called holding the monitor, once the cell's entry has left its holder. */
    void retire() {
        VERSION.setRelease(this, versionHeld() | 1);
    }
}
