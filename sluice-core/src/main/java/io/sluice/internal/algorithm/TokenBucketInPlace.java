package io.sluice.internal.algorithm;

import io.sluice.Decision;
import io.sluice.TokenBucket.Refill;

/**
 * {@link TokenBucketAlgorithm#step} on a {@link StateCell} holding (tokens, lastRefill, roundingError, refunded)
 * in (s0, s1, s2, s3); the refund clock s3 rides along untouched, and is 0 for a fresh bucket. The refill is the pure one's arithmetic line by line (refill, refillGreedy, refillInterval,
 * full), writing its result into the cell instead of a new {@code State}; the step then keeps that "after"
 * state (an admission), writes the fresh bucket (a rejection that records the key's creation), or puts the old
 * integers back. TokenBucketInPlacePropertiesTest holds it to the pure step, every refill style included.
 */
final class TokenBucketInPlace implements InPlaceStep<TokenBucketAlgorithm.State> {

    private final TokenBucketAlgorithm tb;

    TokenBucketInPlace(TokenBucketAlgorithm tb) {
        this.tb = tb;
    }

    @Override
    public void load(TokenBucketAlgorithm.State state, StateCell cell) {
        set(cell, state.tokens(), state.lastRefill(), state.roundingError());
        cell.s3 = state.refunded();
        cell.expiresAt = tb.expiresAt(state);
    }

    @Override
    public TokenBucketAlgorithm.State save(StateCell cell) {
        return new TokenBucketAlgorithm.State(cell.s0, cell.s1, cell.s2, cell.s3);
    }

    @Override
    public long grantable(StateCell cell, boolean live, long now, long permits) {
        long t0 = cell.s0;
        long t1 = cell.s1;
        long t2 = cell.s2;
        long t3 = cell.s3;
        refilled(cell, live, now, 0);
        long tokens = cell.s0;
        restore(cell, t0, t1, t2, t3);
        return Math.max(0, Math.min(permits, tokens));
    }

    @Override
    public Decision step(StateCell cell, boolean live, long now, long permits, long maxWaitMicros, boolean peek) {
        long t0 = cell.s0;
        long t1 = cell.s1;
        long t2 = cell.s2;
        long t3 = cell.s3;
        refilled(cell, live, now, permits);
        // The cell now holds `after`, the bucket refilled up to now less the permits (the admitted state).
        long after = cell.s0;
        if (permits == 0 || after < 0) {
            return notTaken(cell, live, now, permits, maxWaitMicros, peek, t0, t1, t2, t3);
        }
        // An admission from the tokens there are: the admitted state's fullAt is both its reset-after and its
        // expiry, computed once. (The rest is apart, in notTaken, to keep this method small enough for the JIT
        // to inline: HotSpot inlines a hot method of up to 325 bytes of bytecode.)
        long fullAt = tb.readyAt(after, cell.s1, cell.s2, tb.capacity);
        Decision decision = InPlaceStep.admitted(tb.limit(), peek, permits, 0, after,
                after >= tb.capacity ? 0 : TokenBucketAlgorithm.duration(fullAt, now));
        if (peek) {
            restore(cell, t0, t1, t2, t3);
        } else {
            cell.wrote(tb.expiresAtFull(fullAt, cell.s3), now);
        }
        return decision;
    }

    /**
     * {@link #step} for a step of 0 permits or a bucket short of {@code permits} ({@code after} below 0), the cell
     * holding {@code after}'s state and (t0, t1, t2, t3) the state the step was given: a reservation, a rejection
     * (which records a new key's creation), or what a step of 0 permits reports.
     */
    private Decision notTaken(StateCell cell, boolean live, long now, long permits, long maxWaitMicros, boolean peek,
                              long t0, long t1, long t2, long t3) {
        long after = cell.s0;
        long tokens = after + permits;
        Decision decision;
        boolean admitted;
        if (permits == 0) {
            decision = InPlaceStep.admitted(tb.limit(), peek, 0, 0, Math.max(0, tokens),
                    tb.resetAfter(tokens, cell.s1, cell.s2, now));
            admitted = false;   // a step of 0 permits commits its own state
        } else {
            decision = whenShort(cell, now, permits, after, maxWaitMicros, peek);
            admitted = decision.allowed();
        }
        if (peek) {
            restore(cell, t0, t1, t2, t3);
        } else if (admitted) {
            cell.wrote(tb.expiresAt(cell.s0, cell.s1, cell.s2, cell.s3), now);
        } else if (permits > 0 && !live && !tb.freshIsFull) {
            // The pure step's rejected state: fresh(now) for a key without state (see "Creation").
            fresh(cell, now);
            cell.wrote(tb.expiresAt(cell.s0, cell.s1, cell.s2, cell.s3), now);
        } else {
            restore(cell, t0, t1, t2, t3);
        }
        return decision;
    }

    private static void restore(StateCell cell, long tokens, long lastRefill, long roundingError, long refunded) {
        set(cell, tokens, lastRefill, roundingError);
        cell.s3 = refunded;
    }

    /**
     * The step's decision when the refilled bucket holds fewer than {@code permits} ({@code after} below 0):
     * admitted with the wait if the request may wait that long, else rejected. Apart from {@link #step} so that
     * the JIT inlines {@code step} (HotSpot inlines a hot method of up to 325 bytes of bytecode; step was 414).
     */
    private Decision whenShort(StateCell cell, long now, long permits, long after, long maxWaitMicros, boolean peek) {
        long tokens = after + permits;
        long wait = TokenBucketAlgorithm.duration(tb.readyAt(tokens, cell.s1, cell.s2, permits), now);
        boolean admitted = maxWaitMicros > 0 && wait != Arith.NEVER && wait <= maxWaitMicros
                && tb.capacity - after <= TokenBucketAlgorithm.MAX_DEFICIT;
        return admitted
                ? InPlaceStep.admitted(tb.limit(), peek, permits, wait, 0, tb.resetAfter(after, cell.s1, cell.s2, now))
                : InPlaceStep.rejected(tb.limit(), Math.max(0, tokens), wait,
                        tb.resetAfter(tokens, cell.s1, cell.s2, now));
    }

    /** TokenBucketAlgorithm.refilled: the state (fresh at now when not live) refilled up to now, less take. */
    private void refilled(StateCell cell, boolean live, long now, long take) {
        if (!live) {
            fresh(cell, now);
        }
        refill(cell, Math.max(now, cell.s1), take);
    }

    private void fresh(StateCell cell, long now) {
        long lastRefill = tb.style == Refill.INTERVAL_ALIGNED ? now - now % tb.period : now;
        set(cell, tb.limit().initialTokens(), lastRefill, 0);
        cell.s3 = 0;
    }

    /** TokenBucketAlgorithm.refill(State, at, take), from and into the cell. */
    private void refill(StateCell cell, long at, long take) {
        long tokens = cell.s0;
        long lastRefill = cell.s1;
        long elapsed = at - lastRefill;
        long missing = tb.capacity - tokens;
        if (missing <= 0) {
            full(cell, at, lastRefill + elapsed / tb.period * tb.period, take);
        } else if (tb.style == Refill.GREEDY) {
            refillGreedy(cell, at, elapsed, missing, take);
        } else {
            long periods = elapsed / tb.period;
            long periodStart = lastRefill + periods * tb.period;
            if (periods >= Arith.ceilDiv(missing, tb.refillTokens)) {
                full(cell, at, periodStart, take);
            } else {
                set(cell, tokens + periods * tb.refillTokens - take, periodStart, 0);
            }
        }
    }

    private void refillGreedy(StateCell cell, long at, long elapsed, long missing, long take) {
        long a = tb.a;
        long b = tb.b;
        if (elapsed == 0) {
            set(cell, cell.s0 - take, at, cell.s2);
            return;
        }
        long wholePeriods = elapsed < b ? 0 : elapsed / b;
        if (wholePeriods > 0 && tb.reaches(wholePeriods, missing)) {
            full(cell, at, at, take);
            return;
        }
        long fromRest = a * (elapsed - wholePeriods * b);
        long restTokens = fromRest < b ? 0 : fromRest / b;
        long carried = fromRest - restTokens * b + cell.s2;
        long added = wholePeriods * a + restTokens;
        if (carried >= b) {
            added++;
            carried -= b;
        }
        if (added >= missing) {
            full(cell, at, at, take);
            return;
        }
        set(cell, cell.s0 + added - take, at, carried);
    }

    private void full(StateCell cell, long at, long periodStart, long take) {
        set(cell, tb.capacity - take, tb.style == Refill.INTERVAL_ALIGNED ? periodStart : at, 0);
    }

    private static void set(StateCell cell, long tokens, long lastRefill, long roundingError) {
        cell.s0 = tokens;
        cell.s1 = lastRefill;
        cell.s2 = roundingError;
    }
}
