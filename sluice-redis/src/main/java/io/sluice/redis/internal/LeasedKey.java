package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.internal.algorithm.Arith;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node's lease of one (rule, key) in {@link LeasedMode}: the permits it holds and until when, the rejection
 * it remembers, the requests waiting for the lease call in flight, and the spending rate that sizes the next
 * batch. Every field is guarded by the object's monitor. Times are local microseconds ({@link LeasedMode}'s
 * clock); durations reported to callers count down from the moment the reply arrived, so they never end before
 * Redis's.
 */
final class LeasedKey {

    /** A request waiting for a lease call, and its decision to complete. */
    record Waiter(Request request, long arrivedAt, CompletableFuture<Decision> decision) {}

    /** Permits leased and not spent, usable while {@code now < expiresAt}. */
    long held;
    long expiresAt;
    /** The limit, reset-after and arrival of the last lease call that granted permits. */
    String limit;
    long resetAfter;
    long leasedAt;
    /** The last reply that granted nothing, remembered until {@code rejectUntil}; null when none. */
    Decision rejection;
    long rejectedAt;
    long rejectUntil;
    /** Whether a lease call is in flight, and the requests waiting for it, in arrival order. */
    boolean calling;
    final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
    /** Permits spent per second, averaged over lease calls; 0 until measured. */
    double rate;
    boolean rated;
    boolean measuring;
    long measuredFrom;
    long spentSince;
    long lastBatch;
    long lastUsed;
    /** Swept, reset or superseded: callers look the key up again. */
    boolean removed;

    /** The decision the entry makes without Redis, or null when the request needs a lease call. */
    Decision decideLocally(Request request, long now, AtomicLong expired) {
        expire(now, expired);
        Decision spent = serve(request, now, false);
        if (spent != null) {
            return spent;
        }
        if (rejection != null) {
            if (now < rejectUntil) {
                return rejected(now);
            }
            rejection = null;
        }
        return null;
    }

    /**
     * Spends the request from the lease when it covers it (a best-effort request: when it holds any), and the
     * lease has not ended unless {@code evenIfEnded}.
     */
    Decision serve(Request request, long now, boolean evenIfEnded) {
        if (!evenIfEnded && now >= expiresAt) {
            return null;
        }
        long p = request.permits();
        if (request.op() == Request.Op.TRY_AT_MOST ? held > 0 : held >= p) {
            return spend(Math.min(p, held), now);
        }
        return null;
    }

    /**
     * Starts a lease call for the waiting requests: measures the rate since the previous call, sizes the
     * batch and marks the call in flight. Returns the permits to ask for.
     */
    long startLease(long now, LeasePlan plan) {
        if (measuring) {
            long elapsed = Math.max(1, now - measuredFrom);
            double sample = spentSince * 1e6 / elapsed;
            // Weight 1/2 per call, more after a pause: a key idle for a TTL or longer starts over.
            double weight = rated ? Math.max(0.5, Math.min(1, (double) elapsed / plan.ttlMicros())) : 1;
            rate = rate + weight * (sample - rate);
            rated = true;
        }
        measuring = true;
        measuredFrom = now;
        spentSince = 0;
        long need = -held;
        for (Waiter w : waiting) {
            need = Math.min(Limit.MAX_COUNT, need + w.request.permits());
        }
        long batch = batch(Math.max(1, need), plan);
        lastBatch = batch;
        calling = true;
        return batch;
    }

    /** The rate × TTL, at most twice the previous batch and the plan's cap, at least what the request needs. */
    long batch(long need, LeasePlan plan) {
        double expected = Math.ceil(rate * plan.ttlMicros() / 1e6);
        long want = expected >= Limit.MAX_COUNT ? Limit.MAX_COUNT : (long) expected;
        long grown = lastBatch == 0 ? 1 : Math.min(Limit.MAX_COUNT, 2 * lastBatch);
        return Math.max(need, Math.max(1, Math.min(want, Math.min(grown, plan.maxBatch()))));
    }

    /** Adds a lease call's reply: granted permits join the lease, a grant of nothing is remembered. */
    void absorb(Decision reply, long sentAt, long now, LeasePlan plan, AtomicLong expired) {
        expire(now, expired);
        long granted = reply.allowed() ? reply.granted() : 0;
        if (granted > 0) {
            // sentAt + lifetime is never after the moment Redis forgets the charge: see LeasePlan.
            long until = Arith.addSat(sentAt, plan.lifetime(reply, sentAt));
            // Permits still held from before keep their own, earlier end: the merged lease ends first.
            expiresAt = held > 0 ? Math.min(expiresAt, until) : until;
            held += granted;
            limit = reply.limit();
            resetAfter = reply.resetAfterMicros();
            leasedAt = now;
            rejection = null;
        } else {
            rejection = reply;
            rejectedAt = now;
            rejectUntil = Arith.addSat(now, Math.min(reply.retryAfterMicros(), plan.ttlMicros()));
        }
    }

    /**
     * The decision of a waiting request the lease call's permits did not cover, when Redis ran out: its
     * remembered rejection when it granted nothing; after a partial grant, a rejection whose retry-after is
     * the reply's resetAfter (by then every limit is full again; the reply of a best-effort call does not say
     * when the missing permits come back, so this is an upper bound).
     */
    Decision rejectedAfterLease(Request request, Decision reply, long now) {
        if (!reply.allowed() || reply.granted() == 0) {
            return rejected(now);
        }
        long elapsed = now - leasedAt;
        long reset = countDown(reply.resetAfterMicros(), elapsed);
        return new Decision(false, 0, held, Math.max(1, reset), reset, 0, reply.limit(), Decision.NO_LEASE,
                Decision.Source.LEASE);
    }

    private Decision spend(long n, long now) {
        held -= n;
        spentSince += n;
        return new Decision(true, n, held, 0, countDown(resetAfter, now - leasedAt), 0, limit,
                Decision.NO_LEASE, Decision.Source.LEASE);
    }

    private Decision rejected(long now) {
        long elapsed = now - rejectedAt;
        Decision r = rejection;
        return new Decision(false, 0, r.remaining(), Math.max(1, countDown(r.retryAfterMicros(), elapsed)),
                countDown(r.resetAfterMicros(), elapsed), 0, r.limit(), Decision.NO_LEASE,
                Decision.Source.LEASE);
    }

    void expire(long now, AtomicLong expired) {
        if (held > 0 && now >= expiresAt) {
            expired.addAndGet(held);
            held = 0;
        }
    }

    /** Marks the entry removed when nothing depends on it: no call in flight, no lease, no rejection, idle. */
    synchronized boolean dropIfIdle(long now, long idleMicros, AtomicLong expired) {
        boolean leaseGone = held == 0 || now >= expiresAt;
        boolean rejectionGone = rejection == null || now >= rejectUntil;
        if (!calling && leaseGone && rejectionGone && now - lastUsed >= idleMicros) {
            expire(now, expired);
            removed = true;
            return true;
        }
        return false;
    }

    /** Counts what a removed entry still holds as lost. */
    void drop(AtomicLong expired) {
        removed = true;
        expired.addAndGet(held);
        held = 0;
    }

    private static long countDown(long micros, long elapsed) {
        return micros == Arith.NEVER ? Arith.NEVER : Math.max(0, micros - Math.max(0, elapsed));
    }
}
