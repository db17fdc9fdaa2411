package io.sluice.internal.memory;

import io.sluice.internal.algorithm.StateCell;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The state of one key under a rule of one limit whose algorithm steps in place ({@code InPlaceStep}): it sits
 * in the key's {@link Entry} and decisions overwrite it, so a decision allocates no state and no entry.
 * {@link InPlaceDecider} is the protocol decisions follow; this class holds the cell's version word and the
 * operations on it.
 *
 * <p>Thread safety: the version word is both a sequence lock for readers and the writers' lock. A writer takes
 * the write by one compare-and-set of the version from an even value to the same value made odd
 * ({@link #tryBeginWrite}), changes the integers (stepping them in place, or copying in the integers of a step it
 * ran on a copy) and ends the write with the next even value ({@link #endWrite}). Readers take no lock: they read
 * the {@link #versionBeforeRead version}, copy the integers, and keep the copy only if the version is
 * {@link #unchangedSince unchanged}. Whatever takes the entry out of its {@link Holder} (a sweep, an eviction, a
 * reset, or a path that works on immutable states) does so holding the write ({@link #beginWrite}) and then
 * {@link #retireHeld retires} the cell for good: its version stays odd and negative, no optimistic read of it
 * succeeds after that, no compare-and-set takes it, and a writer that waited for it finds it {@link #retired}
 * and looks the key up again. So no decision ever lands in a cell that has left its holder.
 *
 * <p>The version word also carries one hint, {@link #READ_FIRST}: whether the next decision should first try the
 * lock-free read (the cell was last seen rejecting, or contended) or take the write at once and step the cell in
 * place (one thread admitting). It is only a hint: either way is correct, and it changes only as part of a write,
 * so a reader that spans the change simply reads again.
 *
 * <p>Why a compare-and-set, not the cell's monitor: an uncontended monitor costs two atomic instructions (enter
 * and exit, HotSpot's lightweight locking in JDK 17), the compare-and-set one, and on the development machine one
 * atomic instruction was about 6 ns of the 20-odd a decision takes besides reading the clock (docs/memory-store.md). The price is what a monitor
 * did for free: a thread that finds a write under way waits for it by spinning, yields its core after a few
 * spins and parks briefly after many yields ({@link #versionWhenSettled}), so that a writer descheduled mid-write (its write is a few dozen
 * instructions) gets the core back rather than being spun against. A compare-and-set on an immutable state
 * (Bucket4j's way) would allocate that state per decision, which is what this cell exists to avoid; a
 * {@code ReentrantLock} would add an object per key. The version is an {@code int} in the object header's gap,
 * so neither the lock nor the hint costs memory.
 */
final class Cell extends StateCell {

    /** The version's low bit: set while a write is under way, and for good once retired. */
    static final int WRITING = 1;
    /** The hint bit (see the class comment); part of the version, so flipping it is seen as a write. */
    static final int READ_FIRST = 2;
    /** What each write adds to the version, above the two flag bits. */
    private static final int STEP = 4;
    /** The bits that count writes: 2 to 30 (they wrap within them). */
    private static final int COUNT = 0x7FFF_FFFC;
    /** The sign bit: set, with {@link #WRITING}, on a retired cell; a retired version is negative. */
    private static final int RETIRED = Integer.MIN_VALUE;
    /** Spins on a write under way before each further wait yields the core. */
    private static final int SPINS = 64;
    /**
     * Waits, spins included, after which each further wait parks the thread briefly instead of yielding: with more
     * threads than cores on one key, yielding alone keeps every waiter runnable and burning its share of the cores
     * while the writer waits for one (the spin, yield, park back-off of StampedLock and Agrona's idle strategies).
     */
    private static final int YIELDS = SPINS + 64;
    /** One park of a waiter that spun and yielded in vain: about one scheduler tick's worth of a writer's delay. */
    private static final long PARK_NANOS = 50_000;

    private static final VarHandle VERSION;

    static {
        try {
            VERSION = MethodHandles.lookup().findVarHandle(Cell.class, "version", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Even: the integers are stable at this version. Odd: a write is under way, or (negative, for good) the cell
     * is retired. Bit 1 is the {@link #READ_FIRST} hint; writes count in bits 2 to 30. It wraps after 2^29
     * writes; an optimistic read is fooled only if exactly a multiple of 2^29 writes land between its two reads
     * of the version, which copy five integers apart.
     */
    @SuppressWarnings("unused")     // through VERSION
    private int version;

    /** Whether {@code version}, as read or as returned by {@link #beginWrite}, is a retired cell's. */
    static boolean retired(int version) {
        return version < 0;
    }

    /** The version before an optimistic read of the integers, or before {@link #tryBeginWrite}. */
    int versionBeforeRead() {
        return (int) VERSION.getAcquire(this);
    }

    /** After an optimistic read of the integers: whether no write began since {@code before} was read. */
    boolean unchangedSince(int before) {
        VarHandle.loadLoadFence();      // the integers' reads come before the version's second read
        return (int) VERSION.getOpaque(this) == before;
    }

    /** Whether the cell's entry has left its holder (for good). */
    boolean retired() {
        return retired(versionBeforeRead());
    }

    /**
     * The version once no write is under way: even, or a retired cell's. Spins a little on a write under way
     * (a step or a copy of five integers), then yields the core between reads, for a writer that lost it, and
     * parks between reads once yielding has not let the writer finish either.
     */
    int versionWhenSettled() {
        for (int spins = 0; ; spins++) {
            int v = versionBeforeRead();
            if ((v & WRITING) == 0 || retired(v)) {
                return v;
            }
            if (spins < SPINS) {
                Thread.onSpinWait();
            } else if (spins < YIELDS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(PARK_NANOS);
            }
        }
    }

    /**
     * Takes the write if the version is still {@code seen} (even: no write under way, not retired): true when
     * taken, and the caller must then {@link #endWrite} (or {@link #abandonWrite}, or {@link #retireHeld}) it.
     */
    boolean tryBeginWrite(int seen) {
        if ((seen & WRITING) != 0 || !VERSION.compareAndSet(this, seen, seen | WRITING)) {
            return false;
        }
        VarHandle.storeStoreFence();    // readers see the odd version before any of the new integers
        return true;
    }

    /**
     * Takes the write, waiting for one under way to end; returns the version it was taken at, or a
     * {@link #retired(int) retired} version (and takes nothing) when the cell is retired.
     */
    int beginWrite() {
        for (;;) {
            int v = versionWhenSettled();
            if (retired(v) || tryBeginWrite(v)) {
                return v;
            }
        }
    }

    /**
     * Ends a write taken at {@code before}: the integers are stable again, at a new even version (one write
     * higher) that carries the hint {@code readFirst}.
     */
    void endWrite(int before, boolean readFirst) {
        VERSION.setRelease(this, (((before & COUNT) + STEP) & COUNT) | (readFirst ? READ_FIRST : 0));
    }

    /** Ends a write taken at {@code before} that changed nothing: the version is {@code before} again. */
    void abandonWrite(int before) {
        VERSION.setRelease(this, before);
    }

    /** Retires the cell, holding its write, once the cell's entry has left its holder: for good. */
    void retireHeld() {
        VERSION.setRelease(this, RETIRED | WRITING);
    }
}
