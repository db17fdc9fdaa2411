package io.sluice.internal.algorithm;

import io.sluice.Limit;
import io.sluice.TokenBucket;
import io.sluice.TokenBucket.Refill;

/*
 * token_bucket: Bucket4j's bandwidth, in integer microseconds.
 *
 * Model. A bucket holds at most `capacity` tokens; a request for n permits takes n tokens. Tokens come back
 * at refillTokens per refillPeriod in one of three styles:
 *
 *   GREEDY            ..1..1..1..1..1..1..   one token as soon as its share of the period has passed
 *   INTERVAL          .....R.....R.....R..   all R tokens when a whole period has passed since the last
 *                     ^first request           refill; periods start at the key's first request
 *   INTERVAL_ALIGNED  |....R|....R|....R|    the same, periods start at multiples of the period since 1970
 *
 * The state is three integers, as in Bucket4j's BucketState64BitsInteger: `tokens` (negative after
 * reservations), `lastRefill` (µs) and, for GREEDY, `roundingError`, the partial token carried between
 * refills so that no fraction of a token is ever lost or invented.
 *
 * GREEDY refill. Let the rate refillTokens / refillPeriodµs reduce to a/b (TokenBucket guarantees a·b ≤ 2^53).
 * After `elapsed` µs the bucket gains floor((a·elapsed + roundingError) / b) tokens and keeps the remainder as
 * the new roundingError, in [0, b). This is exactly Bucket4j's
 *     divided = refillTokens * duration + roundingError; added = divided / period; roundingError = divided % period
 * because with the unreduced fraction the remainder is always a multiple of gcd. Worked example, 3 tokens per
 * second (a = 3, b = 1_000_000), bucket of 10 holding 2:
 *     +500_000 µs: 3·500_000 + 0       = 1_500_000 → +1 token (3), roundingError 500_000
 *     +200_000 µs: 3·200_000 + 500_000 = 1_100_000 → +1 token (4), roundingError 100_000
 *     a request for 6 lacks 2 tokens: it is ready after ceil((2·1_000_000 − 100_000) / 3) = 633_334 µs.
 * To keep every product below 2^53 (Lua doubles) `elapsed` is split into whole b-periods (a tokens each) and
 * a rest < b, so a·rest < a·b ≤ 2^53 and the remainder sum stays < 2b.
 *
 * INTERVAL refill. now −= (now − lastRefill) mod period, as Bucket4j's incompleteIntervalCorrection: k whole
 * periods add k·refillTokens and lastRefill advances by k·period, keeping the phase.
 *
 * Full bucket. Reaching capacity clears roundingError (Bucket4j resetBandwidth) and then, deliberately unlike
 * Bucket4j's local bucket, INTERVAL forgets its phase: a full bucket refilled at `at` gets lastRefill = at, so
 * its next period starts at the first request that finds it full. That is what a fresh key would do, so a
 * full bucket IS a fresh key and may be dropped; it is also what Bucket4j's own distributed buckets do with
 * ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO), which deletes the bucket
 * the moment it is full. (Keeping the phase would make INTERVAL keys live forever: a full bucket at another
 * phase than `now` decides later requests differently from a new key.) GREEDY already sets lastRefill = at;
 * INTERVAL_ALIGNED stays on the epoch grid, which a fresh key shares.
 *
 * Reservations (maxWait > 0), as Bucket4j's reserveAndCalculateTimeToSleep: when tokens < permits, the wait
 * until the deficit permits − tokens has been refilled is computed (GREEDY: smallest w with
 * a·w + roundingError ≥ deficit·b; INTERVAL: the end of the current period plus ceil(deficit / R) − 1 more
 * periods) and, when it is ≤ maxWait, the tokens are taken now and go negative. Bucket4j floors the greedy
 * wait in nanoseconds (it may wake up to 1 ns early); Sluice rounds up, so at now + wait the tokens are there.
 * Two bounds keep the arithmetic exact: a reservation must be usable by MAX_TIME and may not leave the bucket
 * more than 2^53 tokens below full (capacity − tokens ≤ 2^53 always).
 *
 * Reported numbers. remaining = max(0, tokens after). retryAfter (rejected) = the wait until the deficit is
 * refilled, i.e. when the same request would pass as a try (Bucket4j's nanosToWaitForRefill). resetAfter =
 * time until the bucket is full again (Bucket4j's calculateFullRefillingTime). Durations longer than MAX_TIME
 * (285 years, e.g. 10^12 tokens at one per day) are reported as Long.MAX_VALUE, "never".
 *
 * Expiry. With initialTokens == capacity the state is a fresh key from the moment the bucket is full again
 * (tokens = capacity, roundingError = 0, and lastRefill = the request time, or the same aligned period start),
 * so it expires then and dropping it changes nothing.
 *
 * With initialTokens < capacity no state is ever a fresh key: a full bucket admits more than a new one. What
 * the state then describes is "this key has been seen, and when": Bucket4j's bucket object, created once with
 * initialTokens and full again after an idle spell. Dropping it would bring the key back with initialTokens
 * (a key idle until full would come back short of tokens, visibly unlike a bucket that kept its state), so
 * the state never expires on its own (expiresAt = NEVER: Redis keeps it until MAX_TIME, the memory store
 * until maxKeys evicts it). That is one 3-integer entry per distinct key, the price of initialTokens.
 *
 * Creation. For the same reason the key's creation is recorded by its first decision, admitted or not: a
 * step on no state commits fresh(now) as its `rejected` state (the one state a rejection may change, as
 * count_rejected's attempts do). Otherwise a bucket whose initialTokens is below the permits asked (e.g. 0)
 * would never admit: every rejection committed nothing, so the next request found a new bucket again and the
 * refill never began. A peek (0 permits) still creates nothing. With initialTokens == capacity the fresh
 * bucket is the same as no state, so nothing is committed.
 *
 * Migration (TokenBucket Javadoc, Bucket4j TokensInheritanceStrategy.AS_IS): the state is first refilled up to
 * now under the previous parameters (Bucket4j refills before replaceConfiguration), then tokens are capped at
 * the new capacity and lastRefill is kept, so the refill continues from it. roundingError is kept when the
 * style stays GREEDY with the same reduced rate a/b and dropped otherwise: the bucket loses less than one
 * token. (Bucket4j rescales it with `(long) roundingScale * roundingError`, which truncates the scale first,
 * so it mostly drops or multiplies it too; an exact rescale needs products up to 2^90.) Moving to
 * INTERVAL_ALIGNED or changing its period snaps lastRefill to the period start containing now, as for a
 * fresh key.
 *
 * Not reproduced: Bucket4j's several bandwidths per bucket (use several limits in one rule), adaptive initial
 * tokens, forceAddTokens, and its floating-point fallbacks on overflow (the bounds above make them needless).
 *
 * Invariants: tokens ≤ capacity; capacity − tokens ≤ 2^53; 0 ≤ roundingError < b and 0 unless GREEDY and not
 * full; INTERVAL_ALIGNED lastRefill is a multiple of the period. Permits admitted with use time (now + wait)
 * in any [x, y] ≤ capacity + refill(y − x + 1 µs); tries alone ≤ capacity + refill(y − x), where
 * refill(d) = ceil(a·d / b) (GREEDY) or refillTokens · ceil(d / period) (INTERVAL styles).
 *
 * Lua: every intermediate is below 2^53 in magnitude except lastRefill + duration and the sum
 * q·b + ceil(...) in greedyMicros (up to 2^53 + b); the port compares them with MAX_TIME by subtracting first.
 */

/** {@code token_bucket}: Bucket4j's bandwidth refill and reservations; see the derivation above. */
final class TokenBucketAlgorithm implements Algorithm<TokenBucketAlgorithm.State>, Settleable<TokenBucketAlgorithm.State> {

    /** Most tokens the bucket may be below full (after reservations): keeps counts exact in doubles. */
    static final long MAX_DEFICIT = Arith.MAX_TIME;

    /**
     * @param tokens        tokens in the bucket after the last refill; negative after reservations
     * @param lastRefill    time of the last refill, µs (INTERVAL: the start of the current period)
     * @param roundingError GREEDY's partial token, in units of 1/b token, in [0, b)
     * @param refunded      the refund clock: µs of refill that the tokens refunds put back would have taken, since
     *                      the state was created (see "Settling a ticket" below); 0 for a key never refunded into
     */
    record State(long tokens, long lastRefill, long roundingError, long refunded) {

        /** A state never refunded into. */
        State(long tokens, long lastRefill, long roundingError) {
            this(tokens, lastRefill, roundingError, 0);
        }

        /** This state with the refund clock of {@code from}. */
        State clockOf(State from) {
            return from.refunded == refunded ? this : new State(tokens, lastRefill, roundingError, from.refunded);
        }
    }

    private final TokenBucket limit;
    final Refill style;
    final long capacity;
    final long refillTokens;
    final long period;
    /** The reduced refill rate a/b: a tokens per b µs. */
    final long a;
    final long b;
    /** initialTokens == capacity: no state and a full bucket mean the same (see "Expiry" above). */
    final boolean freshIsFull;
    /** MAX_TIME / b: the most whole periods b a duration may hold. */
    private final long maxWholePeriods;
    private final TokenBucketInPlace inPlace;

    TokenBucketAlgorithm(TokenBucket limit) {
        this.limit = limit;
        this.style = limit.refill();
        this.capacity = limit.capacity();
        this.refillTokens = limit.refillTokens();
        this.period = Arith.micros(limit.refillPeriod());
        long g = gcd(refillTokens, period);
        this.a = refillTokens / g;
        this.b = period / g;
        this.freshIsFull = limit.initialTokens() == capacity;
        this.maxWholePeriods = Arith.MAX_TIME / b;
        this.inPlace = new TokenBucketInPlace(this);
    }

    @Override
    public InPlaceStep<State> inPlace() {
        return inPlace;
    }

    @Override
    public TokenBucket limit() {
        return limit;
    }

    @Override
    public Step<State> step(State state, long now, long permits, long maxWaitMicros) {
        // One allocation: `after` is the bucket refilled up to now and less the permits, which is the state an
        // admission commits; the refilled bucket itself is `after` with `permits` more tokens (same times).
        State after = refilled(state, now, permits);
        long tokens = after.tokens() + permits;
        if (permits == 0) {
            return Step.allow(0, Math.max(0, tokens), resetAfter(tokens, after, now), state, state);
        }
        // A rejection records the key's creation (see "Creation" above): the bucket refills from now on.
        State rejected = state == null && !freshIsFull ? fresh(now) : state;
        if (after.tokens() >= 0) {
            return Step.allow(0, after.tokens(), resetAfter(after.tokens(), after, now), after, rejected);
        }
        long wait = duration(readyAt(tokens, after, permits), now);
        boolean reservable = maxWaitMicros > 0 && wait != Arith.NEVER && wait <= maxWaitMicros
                && capacity - after.tokens() <= MAX_DEFICIT;
        if (reservable) {
            return Step.allow(wait, 0, resetAfter(after.tokens(), after, now), after, rejected);
        }
        return Step.reject(Math.max(0, tokens), wait, resetAfter(tokens, after, now), rejected);
    }

    @Override
    public long grantable(State state, long now, long permits) {
        return Math.max(0, Math.min(permits, refilled(state, now, 0).tokens()));
    }

    @Override
    public long expiresAt(State state) {
        // With initialTokens < capacity a full bucket admits more than a fresh key: keeping it is the only way
        // a key idle until full comes back full (see "Expiry" above).
        return expiresAt(state.tokens(), state.lastRefill(), state.roundingError(), state.refunded());
    }

    /**
     * {@link #expiresAt(State)} of the state (tokens, lastRefill, roundingError, refunded): when it is full, or
     * for a state refunded into min(refunded, Ticket.MAX_LIFETIME) later ("Life of the clock" below).
     */
    long expiresAt(long tokens, long lastRefill, long roundingError, long refunded) {
        return freshIsFull ? expiresAtFull(readyAt(tokens, lastRefill, roundingError, capacity), refunded)
                : Arith.NEVER;
    }

    /**
     * {@link #expiresAt(long, long, long, long)} of a state whose {@link #readyAt readyAt(capacity)} is {@code full},
     * for a caller that computed it already.
     */
    long expiresAtFull(long full, long refunded) {
        if (!freshIsFull || full > Arith.MAX_TIME) {
            return Arith.NEVER;
        }
        long until = refunded == 0 ? full : full + Math.min(refunded, GcraAlgorithm.MAX_TICKET_LIFETIME);
        return until > Arith.MAX_TIME ? Arith.NEVER : until;
    }

    @Override
    public State migrate(State state, Limit previous, long now) {
        if (state == null) {
            return null;
        }
        TokenBucketAlgorithm old = new TokenBucketAlgorithm((TokenBucket) previous);
        long at = Math.max(now, state.lastRefill());
        State s = old.refill(state, at);
        long tokens = Math.max(Math.min(s.tokens(), capacity), capacity - MAX_DEFICIT);
        boolean sameGreedyRate = style == Refill.GREEDY && old.style == Refill.GREEDY && a == old.a && b == old.b;
        long roundingError = sameGreedyRate && tokens < capacity ? s.roundingError() : 0;
        long lastRefill = s.lastRefill();
        if (style == Refill.INTERVAL_ALIGNED && (old.style != Refill.INTERVAL_ALIGNED || old.period != period)) {
            lastRefill = at - at % period;
        }
        return new State(tokens, lastRefill, roundingError, state.refunded());
    }

    /**
     * The state refilled up to now, less {@code take} tokens; a now before lastRefill means no time passed; no
     * state is a fresh bucket created at now.
     *
     * <p>A state at or past its expiry needs no test of its own: it only expires when initialTokens ==
     * capacity, and then refilling it gives the fresh key exactly: expiresAt = readyAt(state, capacity) =
     * lastRefill + w, where w is the least time after which refill() reaches capacity (GREEDY: least w with a·w + roundingError ≥ missing·b, and refillGreedy's
     * added = floor((a·elapsed + roundingError) / b) ≥ missing from then on; INTERVAL styles: w = ceil(missing /
     * R) periods, and refillInterval is full from that many periods on). So at now ≥ expiresAt (≥ lastRefill)
     * refill(state, now) is full(now, …) = (capacity, now, 0), or for INTERVAL_ALIGNED (capacity, now − now mod
     * period, 0) since lastRefill is on the grid: both are fresh(now). That saves computing readyAt on every
     * decision. TokenBucketPropertiesTest.aStateAtOrAfterExpiresAtDecidesLikeNoState checks it for both kinds.
     */
    private State refilled(State state, long now, long take) {
        State s = state == null ? fresh(now) : state;
        State r = refill(s, Math.max(now, s.lastRefill()), take);
        return s.refunded() == 0 ? r : r.clockOf(s);    // the refund clock rides along (no allocation without it)
    }

    private State fresh(long now) {
        long lastRefill = style == Refill.INTERVAL_ALIGNED ? now - now % period : now;
        return new State(limit.initialTokens(), lastRefill, 0);
    }

    /** Bucket4j's refill up to {@code at >= s.lastRefill()}. */
    State refill(State s, long at) {
        return refill(s, at, 0);
    }

    /** {@link #refill(State, long)} less {@code take} tokens, in one allocation. */
    private State refill(State s, long at, long take) {
        long elapsed = at - s.lastRefill();
        long missing = capacity - s.tokens();
        if (missing <= 0) {
            return full(at, s.lastRefill() + elapsed / period * period, take);
        }
        return style == Refill.GREEDY ? refillGreedy(s, at, elapsed, missing, take)
                : refillInterval(s, at, elapsed, missing, take);
    }

    /*
     * The greedy refill with as few 64-bit divisions as the numbers allow (they are most of a decision's time):
     * a quotient known to be 0 is not divided for, "wholePeriods ≥ ceil(missing / a)" is the product
     * wholePeriods·a ≥ missing (its 128-bit high half tells an overflow, which is ≥ 2^63 > missing), and the
     * carry of (a·rest mod b) + roundingError < 2b is one comparison. The values are Bucket4j's exactly (the
     * property test against its formula checks it). algorithms/token_bucket.lua keeps the plain form of the
     * same arithmetic (floor_div and ceil_div on doubles), which computes the same values; RedisMemoryEquivalenceIT
     * compares the two.
     */
    private State refillGreedy(State s, long at, long elapsed, long missing, long take) {
        if (elapsed == 0) {
            return new State(s.tokens() - take, at, s.roundingError());   // nothing to add, nothing carried
        }
        long wholePeriods = elapsed < b ? 0 : elapsed / b;
        if (wholePeriods > 0 && reaches(wholePeriods, missing)) {
            return full(at, at, take);
        }
        long fromRest = a * (elapsed - wholePeriods * b);        // < a·b ≤ 2^53
        long restTokens = fromRest < b ? 0 : fromRest / b;
        long carried = fromRest - restTokens * b + s.roundingError();   // < 2b
        long added = wholePeriods * a + restTokens;              // wholePeriods·a < missing ≤ 2^53 here
        if (carried >= b) {
            added++;
            carried -= b;
        }
        if (added >= missing) {
            return full(at, at, take);
        }
        return new State(s.tokens() + added - take, at, carried);
    }

    /** Whether {@code wholePeriods} periods of {@code a} tokens make up {@code missing}: wholePeriods·a ≥ missing. */
    boolean reaches(long wholePeriods, long missing) {
        long product = wholePeriods * a;
        return Math.multiplyHigh(wholePeriods, a) != 0 || product < 0 || product >= missing;
    }

    private State refillInterval(State s, long at, long elapsed, long missing, long take) {
        long periods = elapsed / period;
        long periodStart = s.lastRefill() + periods * period;
        if (periods >= Arith.ceilDiv(missing, refillTokens)) {
            return full(at, periodStart, take);
        }
        return new State(s.tokens() + periods * refillTokens - take, periodStart, 0);
    }

    /**
     * A full bucket less {@code take} tokens; INTERVAL forgets its phase (see above), INTERVAL_ALIGNED keeps the
     * epoch grid. The roundingError is cleared at capacity, before the take, as Bucket4j's resetBandwidth.
     */
    private State full(long at, long periodStart, long take) {
        return new State(capacity - take, style == Refill.INTERVAL_ALIGNED ? periodStart : at, 0);
    }

    /**
     * When a bucket of {@code tokens} tokens with the times (lastRefill, roundingError) of {@code times} holds
     * {@code target} tokens, or Arith.NEVER past MAX_TIME: the step knows the refilled bucket as its state less
     * the permits.
     */
    private long readyAt(long tokens, State times, long target) {
        return readyAt(tokens, times.lastRefill(), times.roundingError(), target);
    }

    /** {@link #readyAt(long, State, long)} with the times given as integers. */
    long readyAt(long tokens, long lastRefill, long roundingError, long target) {
        long deficit = target - tokens;
        if (deficit <= 0) {
            return lastRefill;
        }
        if (target > capacity) {
            return Arith.NEVER;
        }
        long micros = style == Refill.GREEDY ? greedyMicros(deficit, roundingError) : intervalMicros(deficit);
        if (micros == Arith.NEVER || micros > Arith.MAX_TIME - lastRefill) {
            return Arith.NEVER;
        }
        return lastRefill + micros;
    }

    /** Smallest w with a·w + roundingError ≥ deficit·b, computed with products below 2^53; or Arith.NEVER. */
    private long greedyMicros(long deficit, long roundingError) {
        if (a == 1) {
            // One token per b µs (10/s, 100/s, 1000/min...): w = deficit·b − roundingError, which is what the
            // general form below gives with q = deficit and rest = −roundingError, without dividing by 1.
            return deficit > maxWholePeriods ? Arith.NEVER : deficit * b - roundingError;
        }
        long q = deficit < a ? 0 : deficit / a;
        if (q > maxWholePeriods) {
            return Arith.NEVER;
        }
        long rest = (deficit - q * a) * b - roundingError;       // in (−b, a·b)
        long restMicros;
        if (rest >= 0) {
            // ceil(rest / a); rest + a < 2^54. Up to a it is 1 (0 for 0) without a division: a bucket that refills
            // more than a token per µs, short of less than one µs's refill, is full the next µs.
            restMicros = rest <= a ? (rest == 0 ? 0 : 1) : (rest + a - 1) / a;
        } else {
            restMicros = -rest < a ? 0 : -(-rest / a);
        }
        return q * b + restMicros;
    }

    /** From the start of the current period: ceil(deficit / R) period ends; or Arith.NEVER. */
    private long intervalMicros(long deficit) {
        long periods = Arith.ceilDiv(deficit, refillTokens);
        return periods > Arith.MAX_TIME / period ? Arith.NEVER : periods * period;
    }

    /** Time until a bucket of {@code tokens} tokens with the times of {@code times} is full again. */
    private long resetAfter(long tokens, State times, long now) {
        return resetAfter(tokens, times.lastRefill(), times.roundingError(), now);
    }

    /** {@link #resetAfter(long, State, long)} with the times given as integers. */
    long resetAfter(long tokens, long lastRefill, long roundingError, long now) {
        return tokens >= capacity ? 0 : duration(readyAt(tokens, lastRefill, roundingError, capacity), now);
    }

    /** {@code at − now}, at least 0; Arith.NEVER for Arith.NEVER or longer than MAX_TIME. */
    static long duration(long at, long now) {
        if (at == Arith.NEVER) {
            return Arith.NEVER;
        }
        long d = Math.max(0, at - now);
        return d > Arith.MAX_TIME ? Arith.NEVER : d;
    }

    private static long gcd(long x, long y) {
        while (y != 0) {
            long t = x % y;
            x = y;
            y = t;
        }
        return x;
    }

    /*
     * Settling a ticket (Settleable). The bucket is first refilled up to now, as a step would. An extra charge of
     * d permits takes d more tokens unconditionally (Bucket4j's forceAddTokens with a negative count, or
     * consumeIgnoringRateLimits): tokens may go below zero, down to capacity − MAX_DEFICIT like a reservation, and
     * the refill pays the debt off before anything is admitted.
     *
     * A refund is gcra's (GcraAlgorithm's settlement has the derivation and the proof), with "the bucket is full
     * again" as the TAT: a token bucket is a GCRA whose idle instants are those where it is full, and what a
     * smaller charge would have lost is the refill that arrived while the bucket was full. Example, capacity 5,
     * 2 per second: charge 5 at 0 (empty); at 1 s take the 2 refilled tokens; putting 5 back at 1 s would admit
     * 7 in an instant, where a charge of 0 leaves a full bucket the refill cannot overfill.
     *
     * The refund clock `refunded` counts, in µs, the refill that the tokens refunds put back would have taken:
     * ⌈k·b/a⌉ for k tokens (GREEDY), ⌈k/R⌉ whole periods (INTERVAL styles), never less than the tokens. The mark
     * is A + refunded right after the charge, A = fullAt of the admitted state (the first µs its refill fills it;
     * at most MAX_TIME); at the settlement A' = mark − refunded(now) is A moved back by at least every refund
     * since. The bucket's deficit (capacity − tokens, in fine units of 1/b token for GREEDY) has not been below
     * the refill still to come before A' since the charge, and the refund gives back at most the refill due
     * strictly before A' after now:
     *
     *     GREEDY      k = min(r, ⌊a·(A' − 1 − now) / b⌋)
     *     INTERVAL    k = min(r, R·(⌈(A' − now) / P⌉ − 1))     the period ends in (now, A') on A's own grid
     *
     * "Strictly before A'" because A is the first µs the refill reaches capacity: the charge left a deficit D
     * with a·(A − 1 − t) < D (GREEDY) or R·(periods to A − 1) < D (INTERVAL), so what the refund puts back is
     * below the smallest deficit since the charge: in the history where each settled ticket had cost what it
     * gave back, the bucket is never full anywhere this refund reaches back to. That is what keeps the INTERVAL
     * styles exact: INTERVAL forgets its phase when full (see above), and a history that would have been full
     * where the real bucket was not would refill at other instants. Counting period ends on A's grid (A' is on it
     * too: the clock moves in whole periods) rather than the state's keeps a refund after a phase change from
     * counting one end too many: once the bucket has been full since the charge, the ends of A's grid before
     * A' were all refilled (R·ends + refunds ≥ D), so none is left after now.
     *
     * Life of the clock, as gcra's: a state refunded into expires min(refunded, Ticket.MAX_LIFETIME) after it is
     * full (with initialTokens < capacity it never expires anyway), deciding as a fresh key meanwhile; the clock
     * is kept below MAX_TIME by refunding nothing rather than more; a migration and an extra charge keep it. No
     * state takes no refund: it is a key reset or dropped since the charge. A refund never fills the bucket (the
     * room above is below the deficit); the full branch only writes a full bucket as `full` would.
     */
    @Override
    public long mark(State admitted, long now) {
        return Math.min(Arith.addSat(fullAt(admitted), admitted.refunded()), Arith.MAX_TIME);
    }

    /** When {@code s} is full again: the time its refill brings it to capacity. */
    private long fullAt(State s) {
        return readyAt(s.tokens(), s.lastRefill(), s.roundingError(), capacity);
    }

    /** Tokens the refill brings strictly after now and strictly before {@code until} (A' above), on until's grid. */
    private long roomBefore(long until, long now) {
        if (style == Refill.GREEDY) {
            return until - 1 > now ? Arith.mulDivFloor(a, until - 1 - now, b) : 0;
        }
        return until > now ? Arith.mulSat(Arith.ceilDiv(until - now, period) - 1, refillTokens) : 0;
    }

    /** µs the refill takes to bring {@code tokens} tokens, rounded up (whole periods for the INTERVAL styles). */
    private long clockOf(long tokens) {
        return style == Refill.GREEDY ? Arith.mulDivCeil(tokens, b, a)
                : Arith.mulSat(Arith.ceilDiv(tokens, refillTokens), period);
    }

    @Override
    public State settle(State state, long now, long mark, long estimate, long actual) {
        if (actual == estimate || (state == null && actual < estimate)) {
            return state;
        }
        State s = refilled(state, now, 0);
        if (actual > estimate) {
            long tokens = Math.max(capacity - MAX_DEFICIT, s.tokens() - (actual - estimate));
            return new State(tokens, s.lastRefill(), s.roundingError(), s.refunded());
        }
        long refund = Math.min(estimate - actual, roomBefore(mark - s.refunded(), now));
        if (refund <= 0) {
            return state;
        }
        long clock = clockOf(refund);
        if (clock > Arith.MAX_TIME - s.refunded()) {
            return state;
        }
        long tokens = s.tokens() + refund;
        if (tokens >= capacity) {
            State f = full(Math.max(now, s.lastRefill()), s.lastRefill(), 0);
            return new State(f.tokens(), f.lastRefill(), 0, s.refunded() + clock);
        }
        return new State(tokens, s.lastRefill(), s.roundingError(), s.refunded() + clock);
    }
}
