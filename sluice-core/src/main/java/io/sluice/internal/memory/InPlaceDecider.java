package io.sluice.internal.memory;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.internal.RuleEvaluator;
import io.sluice.internal.algorithm.InPlaceStep;
import io.sluice.internal.algorithm.StateCell;

/**
 * How a decision steps a key's {@link Cell}: in place, holding the cell's write, when the cell shows no contention,
 * or on a private copy, writing back only if it changed anything, when the cell was last seen rejecting or
 * contended. The cell's {@link Cell#READ_FIRST} hint, read with the version, chooses. No path takes a monitor: a
 * write is taken by one compare-and-set of the version ({@link Cell}).
 *
 * <p><b>In place</b> (the hint clear: one thread admitting, the common case). Take the write by a compare-and-set
 * from the version just read (the version becomes odd), run the algorithm's step on the cell's own integers, and
 * end the write with the next even version. No thread-local, no copy, no comparison, one atomic instruction: the
 * step reads and writes the cell as it would a copy, and the odd version sends any optimistic reader round again.
 * The clock was read before, as on the other path, so the step may get a {@code now} a little behind the state's,
 * which every in-place step treats as the pure step does, as no time having passed. The write sets the hint when
 * the decision was a rejection (the next one likely writes nothing, and the lock-free read answers it without
 * taking the write). If the compare-and-set fails (another decision wrote since the read, or is writing), the
 * decision goes the copy path, whose write sets the hint: the cell is contended.
 *
 * <p><b>On a copy</b> (the hint set):
 * <ol>
 *   <li>Read the cell optimistically (its version once no write is under way, the integers, the version again:
 *       {@link Cell}) into this thread's {@code seen} copy, and step a second copy, {@code work}; the
 *       {@link Decision} is built here, outside any write.
 *   <li>If the step left the copy as it was (a rejection that records nothing, a peek), the decision is
 *       returned and the cell is never written: <b>read-only decisions take no lock and write nothing.</b>
 *   <li>Otherwise take the write by a compare-and-set from the version read, copy the five integers in and end the
 *       write; if another decision wrote in between, the compare-and-set fails and the decision starts again from
 *       step 1. After {@link #OPTIMISTIC_TRIES} lost races it waits for the write ({@link Cell#beginWrite}) and
 *       steps in place.
 * </ol>
 * Every path is lock-free: a decision that loses a race does so because another decision wrote. Holding the write
 * only to copy five integers in is what keeps two threads admitting on one key from waiting on each other for
 * whole steps (730–980 ns per call when every decision stepped under the cell's monitor; issue 13), so a contended
 * cell keeps the hint. A copy-path admission that won its first try clears it on one write in 64 (the version's
 * count picks which), so a key that stopped rejecting, or whose contention ended, goes back to stepping in place;
 * if the contention goes on, the next in-place attempt fails its compare-and-set or loses its race and the copy
 * path sets the hint again. (One in eight made two threads admitting on one key take 1,015 ns per call, one in 64
 * 809 ns, in two quiet runs of 2026-11-26, both with the monitor; how soon an uncontended key returns to the
 * in-place path matters less: 64 admissions.)
 *
 * <p>Why a read-only decision is sound. Its copy was validated: the cell held those integers throughout the
 * interval between the two reads of its version, and no write began in it. The cell was in its holder when the
 * decision found it; if it left the holder since (a settle, a sweep, an eviction, a reset), it left holding the
 * cell's write, and the version proves the retirement that follows came after the validation, so nothing was
 * written between the moment it left and the copy. Either way, at some instant within the decision's call (the
 * end of the validation, or just before the cell left its holder) the key's state was the copy: a decision that
 * writes nothing is the decision made at that instant. A rejection from a cell retired a moment later is a
 * rejection made just before the retirement.
 *
 * <p>A decision that writes lands only in a cell that is not retired (a retired version is odd for good, so no
 * compare-and-set takes it), that is, still in its holder: in place, it steps the integers it holds the write
 * over; on a copy, only over the integers it was computed from (the compare-and-set from the version it read): a
 * lost race is decided again, never written over another decision's write.
 */
final class InPlaceDecider {

    /** Optimistic attempts before a decision waits for the write and steps in place; a lost race means another wrote. */
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
        // The hint clear and the write taken at once (this also fails on a write under way, or a retired cell).
        if ((version & Cell.READ_FIRST) == 0 && cell.tryBeginWrite(version)) {
            return inPlace(cell, version, false, inPlace, request, now);
        }
        return onCopy(cell, inPlace, request, now);
    }

    /**
     * The in-place path, holding the write taken at {@code before}: steps the cell's own integers and ends the
     * write with the hint set when {@code contended} or when the decision is a rejection.
     */
    private static Decision inPlace(Cell cell, int before, boolean contended, InPlaceStep<Object> inPlace,
                                    Request request, long now) {
        Decision decision = null;
        try {
            decision = step(cell, inPlace, request, now);
        } finally {
            // Steps do not throw for a valid request; if one did, the write must still end.
            cell.endWrite(before, contended || decision == null || !decision.allowed());
        }
        return decision;
    }

    /** The copy path (see the class comment). */
    private static Decision onCopy(Cell cell, InPlaceStep<Object> inPlace, Request request, long now) {
        Copies copies = COPIES.get();
        StateCell seen = copies.seen;
        StateCell work = copies.work;
        for (int attempt = 0; attempt < OPTIMISTIC_TRIES; attempt++) {
            int version = cell.versionWhenSettled();
            if (Cell.retired(version)) {
                return null;
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
            if (cell.tryBeginWrite(version)) {
                boolean calm = attempt == 0 && decision.allowed() && (version & CLEAR_HINT_MASK) == CLEAR_HINT_MASK;
                cell.copyFrom(work);
                cell.endWrite(version, !calm);
                return decision;
            }
        }
        int version = cell.beginWrite();
        return Cell.retired(version) ? null : inPlace(cell, version, true, inPlace, request, now);
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
