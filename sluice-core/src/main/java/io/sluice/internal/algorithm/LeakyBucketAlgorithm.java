package io.sluice.internal.algorithm;

import io.sluice.LeakyBucket;
import io.sluice.Limit;

/*
 * leaky_bucket: nginx limit_req (src/http/modules/ngx_http_limit_req_module.c, ngx_http_limit_req_lookup and
 * ngx_http_limit_req_account, nginx ≥ 1.15.7 with delay=), with time in microseconds instead of milliseconds.
 *
 * Model (nginx's own). Each key has an `excess` in milli-requests and the time `last` it was last leaked. The
 * excess leaks at the rate: limit·1000 milli-requests per period. A request adds 1000; the first request of a
 * key (a new nginx node) passes with excess 0.
 *
 *     leak   = floor(limit·1000 · elapsed / period)              elapsed = now − last, 0 if now ≤ last
 *     excess = max(0, excess − leak + 1000) + (n − 1)·1000       (nginx: n = 1; a new key: (n − 1)·1000)
 *     reject, changing nothing,       if excess > burst·1000
 *     wait   = floor((excess − delay·1000) · period / (limit·1000))   if excess > delay·1000, else 0
 *
 * nginx works in ms with rate in milli-requests per second: leak = rate·ms/1000 and
 * delay = (excess − delay)·1000/rate ms. Both are floored; Sluice floors the same quantities in µs, so waits
 * and leaks agree with nginx to the millisecond and Sluice is exact to the microsecond. `nodelay` is
 * delay = burst (nginx stores a huge delay; no admitted excess exceeds burst, so they agree).
 *
 * Worked example (nginx's documentation: rate=1r/s burst=5; limit = 1, period = 1 s), 7 requests at t = 0:
 *     #1 new key: excess 0, wait 0          #2 excess 1000, wait 1 s        ...
 *     #6 excess 5000, wait 5 s              #7 excess 6000 > 5000: rejected, nothing changes
 * At t = 2.5 s the excess 5000 has leaked 2500: a request gets excess 3500 and waits 3.5 s.
 *
 * The `last` quirk. nginx writes `if (ms) lr->last = now;`: `last` moves only when time moved forward. When
 * the clock went back (elapsed clamped to 0) keeping the later `last` means the same interval is not leaked
 * twice once the clock catches up. The flip side, kept as in nginx: every admission with elapsed > 0 moves
 * `last` to now and discards the fraction of a milli-request not yet leaked, so each admitted request loses
 * less than 1/1000 of a request of leak (the rate is at most 0.1% slower under a steady stream; in µs this
 * is finer than nginx's per-ms truncation). Rejections and peeks write nothing, so they lose nothing.
 * (nginx also treats a clock jump back of more than 60 s as 1 ms elapsed; Sluice treats any now before
 * `last` as no time passed, per the Algorithm contract.)
 *
 * maxWait. An admission whose wait exceeds maxWait (or ends after MAX_TIME) is rejected with the state
 * unchanged, so maxWait = 0 (tryAcquire) admits only requests that need no delay: the first request and then
 * those within `delay` (nginx's pass-through zone); reserve/acquire get nginx's delayed requests.
 *
 * Reported numbers. remaining = floor((burst·1000 − excess) / 1000) after an admission: the requests the queue
 * still takes now (delayed or not); on a rejection or a peek, the same count for the current state
 * (requests whose excess would stay ≤ burst·1000). retryAfter = time until the same request would be
 * admitted with no wait (Long.MAX_VALUE if it never can: n − 1 > delay + the rounding slack, e.g. n ≥ 2 with
 * the default delay=0, since every permit after the first is delayed). resetAfter = time until the state
 * means the same as no state (below).
 *
 * Expiry. A drained key is not a fresh one: with excess 0 leaked at `last`, a request at `last` gets excess
 * 1000 while a new key gets 0. The state equals a new key once leak ≥ excess + 1000, i.e. the excess has
 * drained and one more emission interval (period/limit) has passed:
 *     expiresAt = last + ceil((excess + 1000) · period / (limit·1000))
 * From then on every request sees excess (n − 1)·1000 and moves `last` to now, exactly as a new key.
 *
 * Migration (LeakyBucket's Javadoc; nginx keeps its zone's nodes across reloads the same way): excess and
 * `last` are kept and the new rate leaks from `last` on. An excess above the new burst·1000 rejects requests
 * until it has leaked below it.
 *
 * Invariants (property-tested), with time not going back: excess ≤ burst·1000 (without migration); for any
 * two admitted requests i < j that are both delayed (excess > delay·1000), their use times u = now + wait
 * satisfy u_j − u_i > (n_{i+1} + … + n_j) · period/limit − 1 µs: the delayed stream leaves at the rate (the
 * real-valued excess gains at least n·1000 minus the real leak per admission, the wait is linear in it, and
 * only the final floor loses < 1 µs). For one-permit requests, the permits used in any [x, y] number at most
 * burst + 1 + floor((y − x) · limit / period): θ = now + (excess + 1000) · period / (limit·1000) behaves as a
 * GCRA TAT with burst + 1 and each use time is ≤ θ − period/limit. A batch of n is used when its last permit
 * is due, so its first permits may count in a later window than their due time; the spacing bound covers it.
 *
 * Lua: limit·1000 and excess are ≤ 10^12 (≈ 2^40) and the period ≤ 2^45, but the products in the leak
 * (limit·1000 · elapsed ≤ 2^93) and the wait (excess · period ≤ 2^85) are not exact in doubles: the port needs
 * an exact mul_div (e.g. 24-bit limbs), as Arith.mulDivFloor/mulDivCeil do here with BigInteger.
 */

/** {@code leaky_bucket}: nginx limit_req's excess, burst and delay; see the derivation above. */
final class LeakyBucketAlgorithm implements Algorithm<LeakyBucketAlgorithm.State>, Settleable<LeakyBucketAlgorithm.State> {

    private static final long ONE = 1000;

    /**
     * @param excess milli-requests queued above the rate, as nginx's {@code lr->excess}
     * @param last   when the excess was last leaked, µs (nginx's {@code lr->last})
     */
    record State(long excess, long last) {}

    private final LeakyBucket limit;
    private final long period;
    /** Milli-requests leaked per period: limit · 1000. */
    private final long leakPerPeriod;
    private final long burstMilli;
    private final long delayMilli;
    /** The largest excess admitted with a zero wait (the wait floors to 0 slightly above delay). */
    private final long noWaitMilli;

    LeakyBucketAlgorithm(LeakyBucket limit) {
        this.limit = limit;
        this.period = Arith.micros(limit.period());
        this.leakPerPeriod = limit.limit() * ONE;
        this.burstMilli = limit.burst() * ONE;
        this.delayMilli = (limit.nodelay() ? limit.burst() : limit.delay()) * ONE;
        this.noWaitMilli = Math.min(burstMilli, delayMilli + Arith.ceilDiv(leakPerPeriod, period) - 1);
    }

    @Override
    public LeakyBucket limit() {
        return limit;
    }

    @Override
    public Step<State> step(State state, long now, long permits, long maxWaitMicros) {
        long base = baseExcess(state, now);
        long resetNow = state == null ? 0 : until(expiresAt(state), now);
        if (permits == 0) {
            return Step.allow(0, room(base), resetNow, state, state);
        }
        long excess = base + (permits - 1) * ONE;
        long wait = excess <= burstMilli ? delay(excess) : Arith.NEVER;
        if (wait == Arith.NEVER || wait > maxWaitMicros || wait > Arith.MAX_TIME - now) {
            return Step.reject(room(base), retryAfter(state, now, permits), resetNow, state);
        }
        long last = state == null || now > state.last() ? now : state.last(); // nginx: if (ms) lr->last = now
        State after = new State(excess, last);
        return Step.allow(wait, (burstMilli - excess) / ONE, until(expiresAt(after), now), after, state);
    }

    @Override
    public long grantable(State state, long now, long permits) {
        long base = baseExcess(state, now);
        if (permits <= 0 || base > noWaitMilli) {
            return 0;
        }
        return Math.min(permits, (noWaitMilli - base) / ONE + 1);
    }

    @Override
    public long expiresAt(State state) {
        long drained = Arith.mulDivCeil(state.excess() + ONE, period, leakPerPeriod);
        return drained > Arith.MAX_TIME - state.last() ? Arith.NEVER : state.last() + drained;
    }

    @Override
    public State migrate(State state, Limit previous, long now) {
        return state;
    }

    /** The excess a one-permit request would leave now: max(0, excess − leak + 1000); 0 for a new key. */
    private long baseExcess(State state, long now) {
        if (state == null) {
            return 0;
        }
        long leak = now > state.last() ? Arith.mulDivFloor(leakPerPeriod, now - state.last(), period) : 0;
        return leak >= state.excess() + ONE ? 0 : state.excess() + ONE - leak;
    }

    /** Requests the queue takes on top of a state whose next one-permit request leaves {@code base}. */
    private long room(long base) {
        return base > burstMilli ? 0 : (burstMilli - base) / ONE + 1;
    }

    /** nginx's ngx_http_limit_req_account delay, in µs. */
    private long delay(long excess) {
        return excess <= delayMilli ? 0 : Arith.mulDivFloor(excess - delayMilli, period, leakPerPeriod);
    }

    /** Time until {@code permits} would pass with no wait, if nothing else happened; Arith.NEVER if it cannot. */
    private long retryAfter(State state, long now, long permits) {
        long allowedBase = noWaitMilli - (permits - 1) * ONE;
        if (allowedBase < 0 || state == null) {
            return Arith.NEVER; // a new key admits every request it ever will at once
        }
        long leakNeeded = state.excess() + ONE - allowedBase;
        if (leakNeeded <= 0) {
            return 0;
        }
        long elapsedNeeded = Arith.mulDivCeil(leakNeeded, period, leakPerPeriod);
        return elapsedNeeded > Arith.MAX_TIME - state.last() ? Arith.NEVER : until(state.last() + elapsedNeeded, now);
    }

    private static long until(long at, long now) {
        return at == Arith.NEVER ? Arith.NEVER : Math.max(0, at - now);
    }

    /*
     * Settling a ticket (Settleable). The mark is when the queue the charge left would have drained, A
     * (expiresAt of the admitted state). In nginx's terms the queue's level at now is L = max(0, excess + 1000
     * − leak) milli-requests (baseExcess: what a one-permit request sees). A refund of r permits lowers it by
     * min(1000·r, leak over [now, A)): as for GCRA (whose derivation this is, the level being the TAT scaled),
     * only the part of the charge still queued ahead of now can be taken out; a queue that has drained past
     * the charge since (A <= now) and filled again holds later requests only. L' <= 0 is an empty queue, no
     * state. The new
     * state is (max(0, L' − 1000), now): last moves to now with the leak applied, which loses less than one
     * milli-request of leak to rounding (the queue drains no faster than before: never more admitted), and an
     * L' below 1000 is kept as 1000 (the state cannot hold less than one queued request). An extra charge of d
     * permits is the admission of d permits without the burst test: excess = L + 1000·(d − 1), capped at
     * MAX_EXCESS so the port's products stay in range (a queue of 10^9 requests is "never" already).
     *
     * NOT SOUND, so Settling refuses leaky_bucket: with several tickets open the mark goes stale as gcra's did
     * before its refund clock (GcraAlgorithm's settlement), and a random run found a refund admitting one request
     * past the burst bound. A sound rule needs that clock in the state and a proof that survives nginx's rounding
     * (each admission moves `last` to now and drops the fraction of a milli-request not yet leaked).
     */
    private static final long MAX_EXCESS = 1_000_000_000_000L;

    @Override
    public long mark(State admitted, long now) {
        return Math.min(expiresAt(admitted), Arith.MAX_TIME);
    }

    @Override
    public State settle(State state, long now, long mark, long estimate, long actual) {
        if (actual == estimate || (state == null && actual < estimate)) {
            return state;
        }
        long base = baseExcess(state, now);
        long last = state == null || now > state.last() ? now : state.last();
        if (actual > estimate) {
            long excess = Arith.addSat(base, Arith.mulSat(actual - estimate - 1, ONE));
            return new State(Math.min(MAX_EXCESS, excess), last);
        }
        if (mark <= now) {
            return state;
        }
        long ahead = Arith.mulDivFloor(leakPerPeriod, mark - now, period);
        long level = base - Math.min(Arith.mulSat(estimate - actual, ONE), ahead);
        return level <= 0 ? null : new State(Math.max(0, level - ONE), last);
    }
}
