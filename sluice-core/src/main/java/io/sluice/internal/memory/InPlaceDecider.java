package io.sluice.internal.memory;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.internal.RuleEvaluator;
import io.sluice.internal.algorithm.InPlaceStep;
import io.sluice.internal.algorithm.StateCell;

/**
 * How a decision steps a key's {@link Cell}: on a private copy, outside the cell's monitor, then writing the
 * result back under the monitor only if it changed anything and nobody wrote the cell in between.
 *
 * <ol>
 *   <li>Read the cell optimistically (its version, the integers, the version again: {@link Cell}) into this
 *       thread's {@code seen} copy, and step a second copy, {@code work}, as the store's single-limit path does:
 *       the clock was read before (so the step may get a {@code now} a little behind the state's, which every
 *       in-place step treats as the pure step does, as no time having passed), and the {@link Decision} is built
 *       here, outside any lock.
 *   <li>If the step left the copy as it was (a rejection that records nothing, a peek), the decision is
 *       returned and the cell is never locked or written: <b>read-only decisions take no lock.</b>
 *   <li>Otherwise take the monitor: if the version is still the one read, publish the copy (five integers) and
 *       return; if another decision wrote in between, read again. After {@link #OPTIMISTIC_TRIES} lost races,
 *       step under the monitor, so a thread that keeps losing still finishes.
 * </ol>
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
 * in its holder, and only over the integers it was computed from (same version): a lost race is decided again,
 * never written over another decision's write.
 */
final class InPlaceDecider {

    /** Optimistic attempts before a decision steps under the monitor; a lost race means another decision wrote. */
    static final int OPTIMISTIC_TRIES = 3;

    /**
     * The two copies a decision steps; one pair per thread, since a decision never waits while holding them. A
     * thread-local rather than two objects per decision left to escape analysis: that works only where the step
     * is inlined, which a rule set of several algorithms (a megamorphic call) prevents. The cost moves to the
     * thread's first decision: about 100 bytes, once per pooled thread, but once per request for a server that
     * runs each request on a new (virtual) thread.
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
        Copies copies = COPIES.get();
        StateCell seen = copies.seen;
        StateCell work = copies.work;
        for (int attempt = 0; attempt < OPTIMISTIC_TRIES; attempt++) {
            int version = cell.versionBeforeRead();
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
                if (cell.versionHeld() == version) {
                    cell.publish(work);
                    return decision;
                }
                if (cell.retired()) {
                    return null;
                }
            }
        }
        synchronized (cell) {
            if (cell.retired()) {
                return null;
            }
            seen.copyFrom(cell);
            work.copyFrom(seen);
            Decision decision = step(work, inPlace, request, now);
            if (!work.sameAs(seen)) {
                cell.publish(work);
            }
            return decision;
        }
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
