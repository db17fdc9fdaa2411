package io.sluice.internal.memory;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.internal.RuleEvaluator;
import io.sluice.internal.algorithm.InPlaceStep;
import io.sluice.internal.algorithm.StateCell;

/**
 * How a decision steps a key's {@link Cell}: in place under the cell's monitor when the cell shows no contention,
 * or on a private copy outside the monitor, writing back only if it changed anything, when the cell was last seen
 * rejecting or contended. The cell's {@link Cell#READ_FIRST} hint, read with the version, chooses.
 *
 * <p><b>In place</b> (the hint clear: one thread admitting, the common case). Take the monitor, make the version
 * odd, run the algorithm's step on the cell's own integers, make the version even again (one write higher) and
 * release. No thread-local, no copy, no comparison: the step reads and writes the cell as it would a copy, and the
 * odd version sends any optimistic reader round again. The clock was read before the monitor, as on the other
 * path, so the step may get a {@code now} a little behind the state's, which every in-place step treats as the
 * pure step does, as no time having passed. The write sets the hint again when the decision was a rejection (the
 * next one likely writes nothing, and the lock-free read answers it without the monitor) or when the version moved
 * between the read before the monitor and the monitor (another decision wrote in between: the cell is contended).
 *
 * <p><b>On a copy</b> (the hint set):
 * <ol>
 *   <li>Read the cell optimistically (its version, the integers, the version again: {@link Cell}) into this
 *       thread's {@code seen} copy, and step a second copy, {@code work}; the {@link Decision} is built here,
 *       outside any lock.
 *   <li>If the step left the copy as it was (a rejection that records nothing, a peek), the decision is
 *       returned and the cell is never locked or written: <b>read-only decisions take no lock.</b>
 *   <li>Otherwise take the monitor: if the version is still the one read, publish the copy (five integers) and
 *       return; if another decision wrote in between, read again. After {@link #OPTIMISTIC_TRIES} lost races,
 *       step in place under the monitor, so a thread that keeps losing still finishes.
 * </ol>
 * Holding the monitor only to copy five integers in is what keeps two threads admitting on one key from
 * inflating and parking on it for whole steps (730–980 ns per call when every decision stepped under the
 * monitor; issue 13), so a contended cell keeps the hint. A copy-path admission that won its first try clears
 * it on one write in 64 (the version's count picks which), so a key that stopped rejecting, or whose contention
 * ended, goes back to stepping in place; if the contention goes on, the next in-place decision sees the version
 * move under it and sets the hint again, so a contended key pays the in-place path about once per 64 writes. (One
 * in eight made two threads admitting on one key take 1,015 ns per call, one in 64 809 ns, in two quiet runs of
 * 2026-11-26; how soon an uncontended key returns to the in-place path matters less: 64 admissions.)
 *
 * <p>Why a read-only decision is sound. Its copy was validated: the cell held those integers throughout the
 * interval between the two reads of its version, and no write began in it. The cell was in its holder when the
 * decision found it; if it left the holder since (a settle, a sweep, an eviction, a reset), it left under the
 * monitor, and the version proves the retirement that follows came after the validation, so nothing was written
 * between the moment it left and the copy. Either way, at some instant within the decision's call (the end of
 * the validation, or just before the cell left its holder) the key's state was the copy: a decision that writes
 * nothing is the decision made at that instant. A rejection from a cell retired a moment later is a rejection
 * made just before the retirement.
 *
 * <p>A decision that writes lands only in a cell that is not retired (checked under the monitor), that is, still
 * in its holder: in place, it steps the integers it holds the monitor over; on a copy, only over the integers it
 * was computed from (same version): a lost race is decided again, never written over another decision's write.
 */
final class InPlaceDecider {

    /** Optimistic attempts before a decision steps under the monitor; a lost race means another decision wrote. */
    static final int OPTIMISTIC_TRIES = 3;

    /** The version's write count, of which a copy-path admission clears the hint on one value in 64. */
    private static final int CLEAR_HINT_MASK = 63 << 2;

    /**
     * The two copies a decision on the copy path steps; one pair per thread, since a decision never waits while
     * holding them. A thread-local rather than two objects per decision left to escape analysis: that works only
     * where the step is inlined, which a rule set of several algorithms (a megamorphic call) prevents. The cost
     * moves to the thread's first decision on a contended or rejecting key: about 100 bytes, once per pooled
     * thread, but once per request for a server that runs each request on a new (virtual) thread.
     */
    private static final class Copies {
        final StateCell seen = new StateCell();
        final StateCell work = new StateCell();
    }

    private static final ThreadLocal<Copies> COPIES = ThreadLocal.withInitial(Copies::new);

    private InPlaceDecider() {}

    /**
     * Decides {@code request} at {@code now} on {@code cell}, writing back what the step changed; null when the
     * cell was retired, for the caller to look the key up again.
     */
    static Decision decide(Cell cell, InPlaceStep<Object> inPlace, Request request, long now) {
        int version = cell.versionBeforeRead();
        if ((version & (Cell.READ_FIRST | 1)) == Cell.READ_FIRST) {
            return onCopy(cell, version, inPlace, request, now);
        }
        return inPlace(cell, version, false, inPlace, request, now);
    }

    /**
     * The in-place path: steps the cell's own integers under its monitor. {@code seen} is the version read before
     * taking the monitor; the hint is set after the step when {@code contended}, when the version moved since
     * {@code seen}, or when the decision is a rejection.
     */
    private static Decision inPlace(Cell cell, int seen, boolean contended, InPlaceStep<Object> inPlace,
                                    Request request, long now) {
        synchronized (cell) {
            if (cell.retired()) {
                return null;
            }
            int before = cell.beginWrite();
            Decision decision = null;
            try {
                decision = step(cell, inPlace, request, now);
            } finally {
                // Steps do not throw for a valid request; if one did, the version must still end even.
                cell.endWrite(before, contended || before != seen || decision == null || !decision.allowed());
            }
            return decision;
        }
    }

    /** The copy path (see the class comment), from {@code version}, read before and carrying the hint. */
    private static Decision onCopy(Cell cell, int version, InPlaceStep<Object> inPlace, Request request,
                                   long now) {
        Copies copies = COPIES.get();
        StateCell seen = copies.seen;
        StateCell work = copies.work;
        for (int attempt = 0; attempt < OPTIMISTIC_TRIES; attempt++) {
            if (attempt > 0) {
                version = cell.versionBeforeRead();
            }
            if ((version & 1) != 0) {
                break;      // a write under way, or retired: the monitor tells which
            }
            seen.copyFrom(cell);
            if (!cell.unchangedSince(version)) {
                continue;
            }
            work.copyFrom(seen);
            Decision decision = step(work, inPlace, request, now);
            if (work.sameAs(seen)) {
                return decision;
            }
            synchronized (cell) {
                int held = cell.versionHeld();
                if (held == version) {
                    boolean calm = attempt == 0 && decision.allowed() && (held & CLEAR_HINT_MASK) == CLEAR_HINT_MASK;
                    cell.publish(work, !calm);
                    return decision;
                }
                if ((held & 1) != 0) {
                    return null;    // retired
                }
            }
        }
        return inPlace(cell, version, true, inPlace, request, now);
    }

    /**
     * {@code MemoryStore.decideOne}'s lines for a cell: the same expiry test, permits and step, on the cell's
     * state at {@code now}.
     */
    static Decision step(StateCell cell, InPlaceStep<Object> inPlace, Request request, long now) {
        boolean live = now < cell.expiresAt();
        long permits = request.permits();
        if (request.op() == Request.Op.TRY_AT_MOST) {
            permits = Math.max(Math.min(permits, inPlace.grantable(cell, live, now, permits)), 1);
        }
        return inPlace.step(cell, live, now, permits, RuleEvaluator.maxWaitOf(request),
                request.op() == Request.Op.PEEK);
    }
}
