package io.sluice.internal.algorithm;

import io.sluice.Gcra;
import io.sluice.Limit;

/*
 * gcra: the generic cell rate algorithm of go-redis/redis_rate v10 (script_allow_n.lua, script_allow_at_most.lua,
 * after Pavel Pravosud's redis-gcra), in integer microseconds.
 *
 * Model. Permits are emitted one every T = ceil(period / limit) µs (the emission interval). The state is one
 * instant, the theoretical arrival time TAT: when the key would be idle again had every admitted permit been
 * spaced T apart. A burst of `burst` permits may arrive early, so the burst offset is B = burst · T.
 *
 *     tat      = max(TAT, now)            (a new key: TAT = now)
 *     new_tat  = tat + n·T
 *     allow_at = new_tat − B              the earliest instant this request conforms
 *     admit iff allow_at ≤ now;  then TAT := new_tat
 *
 *          allow_at        now              tat           new_tat
 *     ---------|------------|----------------|---------------|---->
 *              |<-- remaining·T -->|               |<--- n·T --->|
 *              |<----------------------- B ------------------->|
 *
 * Worked example (redis_rate's TestAllow, PerSecond(10): T = 100_000 µs, B = 1_000_000 µs), all at now = t:
 *     allow 1   new_tat = t + 100_000,   allow_at = t − 900_000  → remaining 9, reset_after 100 ms
 *     allow 2   new_tat = t + 300_000,   allow_at = t − 700_000  → remaining 7, reset_after 300 ms
 *     allow 7   new_tat = t + 1_000_000, allow_at = t            → remaining 0, reset_after 1 s
 *     allow 1   new_tat = t + 1_100_000, allow_at = t + 100_000  → rejected, retry_after 100 ms, reset_after 1 s
 *
 * Reported numbers, as redis_rate: on admission remaining = floor((now − allow_at) / T) (redis_rate returns
 * the float diff / T and Redis truncates it to an integer: the same for diff ≥ 0) and reset_after =
 * new_tat − now. On rejection retry_after = allow_at − now and reset_after = tat − now. A cost of 0 is a peek:
 * remaining = floor((now − (tat − B)) / T), reset_after = tat − now, nothing written.
 *
 * AllowAtMost(n) is grantable + step: grantable = min(n, floor((now − (tat − B)) / T)), then step charges
 * exactly that many. redis_rate's script charges the fractional `remaining` (new_tat = tat + T · 2.5 when 2.5
 * permits remain) while reporting the truncated count; with an integer T Sluice charges whole permits only.
 *
 * Reservations (maxWait > 0), the classic GCRA schedule: a request with allow_at > now is admitted when
 * allow_at − now ≤ maxWait; TAT advances by n·T exactly as if it had conformed and the caller waits until
 * allow_at, when it conforms. The next request is judged behind it. The reservation must also be usable by
 * MAX_TIME (allow_at ≤ MAX_TIME), which bounds TAT by MAX_TIME + B.
 *
 * Deliberate differences from redis_rate:
 *  - integer microseconds and an integer T rounded up (Gcra's Javadoc): remaining is exact, not a float, and
 *    no float time since 2017 with its precision limit in 2048;
 *  - remaining on a rejection is what is available now (the SPI), where redis_rate always reports 0;
 *  - a request for more than burst can never conform; redis_rate still reports retry_after = allow_at − now
 *    (99 s for 1000 permits of PerSecond(10)), Sluice reports Long.MAX_VALUE ("never"), and the facade refuses
 *    such requests anyway (maxPermits = burst);
 *  - durations longer than MAX_TIME are reported as Long.MAX_VALUE.
 *
 * Expiry: at now ≥ TAT, max(TAT, now) = now, exactly a new key; before it, a new key has more remaining.
 * Migration keeps TAT (Gcra's Javadoc); the new T and B judge it at once.
 *
 * Invariant proved by the property test: the permits whose use time (now + wait) lies in any [x, y] number at
 * most burst + floor((y − x) / T). Proof sketch: use times are non-decreasing; if the first such request saw
 * tat₀ (after max with its now) then tat₀ ≥ x (either it conformed at now ≥ x, or its use time
 * tat₀ + n·T − B ≥ x with n ≤ burst); the last one's use time y ≥ tat₀ + (Σn)·T − B.
 *
 * Lua: T, B ≤ 2^53 (Gcra validates burst·T ≤ 2^53) and n·T ≤ B, but TAT itself reaches now + B, up to 2^54
 * near the end of the clock and past 2^53 today already when B is near 2^53, where doubles hold only even
 * integers. The port (algorithms/gcra.lua) stores TAT as two exact parts, TAT − B (the allow_at of the last
 * admission, ≤ MAX_TIME) and that B, because a migration keeps TAT while B changes, and adds them only inside
 * differences with now.
 */

/** {@code gcra}: redis_rate's allowN / allowAtMost with exact microseconds; see the derivation above. */
final class GcraAlgorithm implements Algorithm<GcraAlgorithm.State>, Settleable<GcraAlgorithm.State> {


    /** @param tat the theoretical arrival time, µs */
    record State(long tat) {}

    private final Gcra limit;
    /** Emission interval T, µs. */
    final long interval;
    /** Burst offset B = burst · T, µs. */
    final long burstOffset;
    private final GcraInPlace inPlace;

    GcraAlgorithm(Gcra limit) {
        this.limit = limit;
        this.interval = Arith.ceilDiv(Arith.micros(limit.period()), limit.limit());
        this.burstOffset = limit.burst() * interval;
        this.inPlace = new GcraInPlace(this);
    }

    @Override
    public InPlaceStep<State> inPlace() {
        return inPlace;
    }

    @Override
    public Gcra limit() {
        return limit;
    }

    @Override
    public Step<State> step(State state, long now, long permits, long maxWaitMicros) {
        long tat = state == null ? now : Math.max(state.tat(), now);
        if (permits == 0) {
            return Step.allow(0, available(tat, now), duration(tat - now), state, state);
        }
        if (permits > limit.burst()) {
            return Step.reject(available(tat, now), Arith.NEVER, duration(tat - now), state);
        }
        long newTat = tat + permits * interval;
        long allowAt = newTat - burstOffset;
        if (allowAt <= now) {
            return Step.allow(0, (now - allowAt) / interval, duration(newTat - now), new State(newTat), state);
        }
        long wait = allowAt <= Arith.MAX_TIME ? duration(allowAt - now) : Arith.NEVER;
        if (maxWaitMicros > 0 && wait != Arith.NEVER && wait <= maxWaitMicros) {
            return Step.allow(wait, 0, duration(newTat - now), new State(newTat), state);
        }
        return Step.reject(available(tat, now), wait, duration(tat - now), state);
    }

    @Override
    public long grantable(State state, long now, long permits) {
        long tat = state == null ? now : Math.max(state.tat(), now);
        return Math.min(permits, available(tat, now));
    }

    @Override
    public long expiresAt(State state) {
        return state.tat() > Arith.MAX_TIME ? Arith.NEVER : state.tat();
    }

    @Override
    public State migrate(State state, Limit previous, long now) {
        return state;
    }

    /** Whole permits that conform now: floor((now − (tat − B)) / T), at least 0. */
    long available(long tat, long now) {
        long slack = now - tat + burstOffset;
        return slack <= 0 ? 0 : slack / interval;
    }

    static long duration(long micros) {
        return micros > Arith.MAX_TIME ? Arith.NEVER : Math.max(0, micros);
    }

    /*
     * Settling a ticket (Settleable). The mark is the TAT the charge left, A. An extra charge of d permits
     * moves the TAT on by d·T from max(TAT, now), as d more admitted permits would, but unconditionally (the
     * key is in debt: the next permit conforms d·T later); it stops at MAX_TIME, "never" to this store.
     *
     * A refund of r permits may not simply move the TAT back by r·T. Write the TAT after admissions
     * (t_k, p_k) as max over k of (t_k + Σ_{j≥k} p_j·T): lowering the charge p_i by r lowers the terms k ≤ i by
     * r·T and leaves the later terms alone, and a later admission that found the key idle (t_k past the TAT)
     * starts such a term. Example, burst 3, T = 250 ms: charge 3 at 0 (A = 750 ms); at 750 ms try 3 (TAT
     * 1500 ms); refunding 3·T now would make the TAT 750 ms and admit 3 more at once, 6 in one instant.
     * The rule below: while the charge's advance still lies ahead (A > now) no later admission found the key
     * idle (each came before A, hence before the TAT), so every later term is at most now + Σ_{j>i} p_j·T =
     * TAT − (A − now); the TAT the final cost gives is then at most TAT − min(r·T, A − now), and that is the
     * TAT written: the part of the charge still ahead of now is undone, the part already elapsed is not.
     * With A <= now there is nothing left to undo. It never goes below now (TAT >= A). A TAT at now is no
     * state. (A reset between charge and settlement already forgave the charge; then TAT < A may hold and the
     * refund may give back what the reset gave back: resets are the operator's, and forgive more anyway.)
     *
     * NOT SOUND with several tickets open, so Settling refuses gcra (SettlePropertiesTest.gcra, disabled, found
     * it): the argument holds for one refund, but a refund of an earlier ticket moves every later charge back
     * by what it undid, and a later ticket's A is then stale, larger than where its charge now ends. "Each later
     * admission came before A" no longer says it came before the TAT of the final costs, and the refund undoes
     * too much. Example, burst 3, T = 250 ms, at 0: try 1, charge 1 (A₁ = 500 ms), charge 1 (A₂ = 750 ms);
     * refund the first fully (TAT 500 ms); at 266.318 ms try 1 (TAT 750 ms); refund the second fully: the rule
     * writes 750 − min(250, 750 − 266.318) = 500 ms, but with both charges at 0 the key was idle at 266.318 ms
     * and the TAT is 516.318 ms; 2 more pass at 266.318 ms and 1 at 500 ms, 4 in [266.318, 500] ms where the
     * bound is 3. A sound rule needs what (TAT, A, now) cannot tell: how far refunds since the charge moved it.
     */
    @Override
    public long mark(State admitted, long now) {
        return Math.min(admitted.tat(), Arith.MAX_TIME);
    }

    @Override
    public State settle(State state, long now, long mark, long estimate, long actual) {
        if (actual > estimate) {
            long tat = state == null ? now : Math.max(state.tat(), now);
            return new State(Math.min(Arith.MAX_TIME, Arith.addSat(tat, Arith.mulSat(actual - estimate, interval))));
        }
        if (actual == estimate || state == null || state.tat() <= now || mark <= now) {
            return state;
        }
        long back = Math.min(Arith.mulSat(estimate - actual, interval), mark - now);
        long tat = Math.max(now, state.tat() - back);
        return tat <= now ? null : new State(tat);
    }
}
