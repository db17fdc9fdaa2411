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
 * <p>Thread safety: writers hold the cell's monitor, and make the version odd while they change the integers
 * ({@link #beginWrite}, {@link #endWrite}): a writer either steps the cell's own integers there, or copies in the
 * integers of a step it ran outside on a copy ({@link #publish}). Readers take no lock: they read the
 * {@link #versionBeforeRead version}, copy the integers, and keep the copy only if the version is
 * {@link #unchangedSince unchanged} (a sequence lock: the version is odd while a write is under way). Whatever
 * takes the entry out of its {@link Holder} (a sweep, an eviction, a reset, or a path that works on immutable
 * states) does so holding the monitor and then {@link #retire retires} the cell for good, which leaves its
 * version odd: no optimistic read of it succeeds after that, and a writer that gets the monitor late finds it
 * {@link #retired} and looks the key up again. So no decision ever lands in a cell that has left its holder.
 *
 * <p>The version word also carries one hint, {@link #READ_FIRST}: whether the next decision should first try the
 * lock-free read (the cell was last seen rejecting, or contended) or go straight to the monitor and step the
 * cell in place (one thread admitting). It is only a hint: either way is correct, and it changes only under the
 * monitor, as part of a write, so a reader that spans the change simply reads again.
 *
 * <p>Why a monitor for writers, not a compare-and-set on the version: a writer that is descheduled mid-write would
 * leave readers and writers spinning on an odd version; with the monitor, HotSpot spins a bounded while and then
 * parks a waiting writer, and the readers, who see an odd version, wait on the monitor too instead of spinning.
 * A compare-and-set on an immutable state would allocate that state per decision, which is what this cell exists
 * to avoid; a {@code ReentrantLock} would add an object per key. The version is an {@code int} that fits in the
 * object header's gap, where the {@code retired} flag it replaced sat, so the hint costs no memory either.
 */
final class Cell extends StateCell {

    /** The version's low bit: set while a write is under way, and for good once retired. */
    private static final int WRITING = 1;
    /** The hint bit (see the class comment); part of the version, so flipping it is seen as a write. */
    static final int READ_FIRST = 2;
    /** What each write adds to the version, above the two flag bits. */
    private static final int STEP = 4;

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
     * under the monitor no write is ever half done, so there odd means retired. Bit 1 is the {@link #READ_FIRST}
     * hint; writes count from bit 2. Written only under the monitor. It wraps after 2^30 writes; an optimistic
     * read is fooled only if exactly a multiple of 2^30 writes land between its two reads of the version, which
     * copy five integers apart.
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
        return (versionHeld() & WRITING) != 0;
    }

    /**
     * Holding the monitor, on a cell not retired: makes the version odd before any integer changes, and returns
     * the version it was, for {@link #endWrite}.
     */
    int beginWrite() {
        int v = versionHeld();
        VERSION.setOpaque(this, v | WRITING);
        VarHandle.storeStoreFence();    // readers see the odd version before any of the new integers
        return v;
    }

    /**
     * Holding the monitor, after {@link #beginWrite} returned {@code before}: the integers are stable again, at a
     * new even version that carries the hint {@code readFirst}.
     */
    void endWrite(int before, boolean readFirst) {
        VERSION.setRelease(this, ((before & ~(WRITING | READ_FIRST)) + STEP) | (readFirst ? READ_FIRST : 0));
    }

    /**
     * Holding the monitor, on a cell not retired: overwrites the integers and expiry with {@code from}'s, the
     * version odd while they change and one write higher after, with the hint {@code readFirst}.
     */
    void publish(StateCell from, boolean readFirst) {
        int v = beginWrite();
        copyFrom(from);
        endWrite(v, readFirst);
    }

    /** Marks the cell retired: called holding the monitor, once the cell's entry has left its holder. */
    void retire() {
        VERSION.setRelease(this, versionHeld() | WRITING);
    }
}
