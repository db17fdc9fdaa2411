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
 * Expiry: at now ≥ TAT, max(TAT, now) = now, exactly a new key; before it, a new key has more remaining. A
 * state refunded into lives on a while after (see "Settling a ticket" below), deciding as a new key meanwhile.
 * Migration keeps TAT (Gcra's Javadoc) and the refund clock; the new T and B judge it at once.
 *
 * Invariant proved by the property test: the permits whose use time (now + wait) lies in any [x, y] number at
 * most burst + floor((y − x) / T). Proof sketch: use times are non-decreasing; if the first such request saw
 * tat₀ (after max with its now) then tat₀ ≥ x (either it conformed at now ≥ x, or its use time
 * tat₀ + n·T − B ≥ x with n ≤ burst); the last one's use time y ≥ tat₀ + (Σn)·T − B.
 *
 * Lua: T, B ≤ 2^53 (Gcra validates burst·T ≤ 2^53) and n·T ≤ B, but TAT itself reaches now + B, up to 2^54
 * near the end of the clock and past 2^53 today already when B is near 2^53, where doubles hold only even
 * integers. The port (algorithms/gcra.lua) holds TAT as two exact parts, TAT − B (the allow_at of the last
 * admission, ≤ MAX_TIME) and that B, because a migration keeps TAT while B changes, and adds them only inside
 * differences with now. Redis stores TAT itself as one integer whenever it is at most 2^53 (the parts otherwise).
 */

/** {@code gcra}: redis_rate's allowN / allowAtMost with exact microseconds; see the derivation above. */
final class GcraAlgorithm implements Algorithm<GcraAlgorithm.State>, Settleable<GcraAlgorithm.State> {


    /**
     * @param tat      the theoretical arrival time, µs
     * @param refunded µs by which refunds have moved the TAT back since the state was created (the refund clock,
     *                 see "Settling a ticket" below); 0 for a key never refunded into
     */
    record State(long tat, long refunded) {

        /** A state never refunded into. */
        State(long tat) {
            this(tat, 0);
        }
    }

    /** Ticket.MAX_LIFETIME in µs: no ticket outlives it, so no refund clock need be kept longer. */
    static final long MAX_TICKET_LIFETIME = Arith.micros(io.sluice.Ticket.MAX_LIFETIME);

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
            return Step.allow(0, (now - allowAt) / interval, duration(newTat - now), admitted(state, newTat), state);
        }
        long wait = allowAt <= Arith.MAX_TIME ? duration(allowAt - now) : Arith.NEVER;
        if (maxWaitMicros > 0 && wait != Arith.NEVER && wait <= maxWaitMicros) {
            return Step.allow(wait, 0, duration(newTat - now), admitted(state, newTat), state);
        }
        return Step.reject(available(tat, now), wait, duration(tat - now), state);
    }

    /** The admitted state: the new TAT, with the refund clock of the state it came from. */
    private static State admitted(State state, long newTat) {
        return state == null || state.refunded() == 0 ? new State(newTat) : new State(newTat, state.refunded());
    }

    @Override
    public long grantable(State state, long now, long permits) {
        long tat = state == null ? now : Math.max(state.tat(), now);
        return Math.min(permits, available(tat, now));
    }

    @Override
    public long expiresAt(State state) {
        return expiresAt(state.tat(), state.refunded());
    }

    /** TAT, or for a state refunded into TAT + min(refunded, Ticket.MAX_LIFETIME) ("Life of the clock" below). */
    static long expiresAt(long tat, long refunded) {
        long until = refunded == 0 ? tat : tat + Math.min(refunded, MAX_TICKET_LIFETIME);
        return until > Arith.MAX_TIME ? Arith.NEVER : until;
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
     * Settling a ticket (Settleable). An extra charge of d permits moves the TAT on by d·T from max(TAT, now), as
     * d more admitted permits would, but unconditionally (the key is in debt: the next permit conforms d·T
     * later); it stops at MAX_TIME, "never" to this store.
     *
     * A refund of r permits may not simply move the TAT back by r·T. Unrolled, the TAT after admissions
     * (t_k, p_k) is max over k of (t_k + Σ_{j≥k} p_j·T): lowering the charge p_i by r lowers the terms k ≤ i by
     * r·T and leaves the later terms alone, and a later admission that found the key idle starts such a term.
     * Example, burst 3, T = 250 ms: charge 3 at 0 (TAT 750 ms); at 750 ms try 3 (TAT 1500 ms); moving the TAT
     * back by 3·T would admit 3 more at once, 6 in one instant. So a refund undoes only the part of its charge
     * no idle instant has swallowed since, and with several tickets open "since" must count the other refunds.
     *
     * The refund clock. The state keeps `refunded`, the µs by which refunds have moved the TAT back since the
     * state was created. V = TAT + refunded, the TAT the key would have had no refund been given, never goes
     * back: admissions and idleness move the TAT and V alike, a refund moves the TAT back and `refunded` on by
     * the same amount. The ticket's mark is V right after its charge, A + refunded(t), where A is the TAT the
     * charge left. At the settlement at now,
     *
     *     A' = mark − refunded(now) = A − (the µs all refunds since the charge moved the TAT back)
     *
     * and the TAT has been at least A' at every instant s since the charge: it only ever falls by refunds (an
     * idle instant raises it to s), and those since the charge add up to A − A'. The refund moves the TAT back by
     *
     *     back = min(r·T, A' − now)          (nothing when A' ≤ now)
     *
     * Soundness with any number of tickets (the property SettlePropertiesTest.gcra checks). Take the
     * settlements in the order they happen, and the history H in which every ticket settled so far had been
     * charged, at its own time, its estimate less what its settlement gave back (so at least its actual cost).
     * Claim: H's TAT is the real one less, at each instant s, the backs of the tickets charged before s and
     * settled after s; in particular it is the real one from the latest settlement on. Settling ticket i by back
     * lowers its charge in H by back: that moves H's TAT back by back at every instant of (t_i, now] unless one
     * of them was idle in H by less than back. None is: the real TAT at s is at least A − (the refunds in
     * (t_i, s]), and H's is lower only by backs of tickets settled in (s, now), so H's TAT at s is at least
     * A − (the refunds since the charge) = A' ≥ now + back ≥ s + back. So H's
     * TAT at now is the real TAT less back: the claim holds after the refund. H's TAT never exceeds the real one,
     * so every admission the store made conforms in H, and H is an ordinary GCRA run: its bound (burst +
     * floor((y − x)/T) permits used in any [x, y], derived above) holds for its charges, and with them for the
     * actual costs, which are no larger. A ticket never settled stays charged at its estimate, as in H.
     *
     * Example (the run that refused gcra before the refund clock): burst 3, T = 250 ms, at 0 try 1, charge 1 (mark
     * 500 ms), charge 1 (mark 750 ms); refund the first fully: A' = 500, back 250 ms, TAT 500 ms, refunded 250 ms;
     * at 266.318 ms try 1 (TAT 750 ms); refund the second fully: A' = 750 − 250 = 500 ms, back = 233.682 ms (not
     * the full 250 ms: the zero-cost history was idle at 266.318 ms), TAT 516.318 ms, as that history's.
     *
     * Life of the clock. `refunded` only grows while the state lives, so a state that has been refunded into
     * expires at TAT + refunded (by then V ≤ now, and every mark of its life, at most V, gives A' ≤ now in
     * whatever state follows), or at TAT + Ticket.MAX_LIFETIME when sooner: every ticket of its life was charged
     * at or before its TAT, so has expired by then, and a store never settles an expired ticket. Until then a TAT
     * before now decides as now, as for no state. A refund leaves the TAT at or after now (TAT − back ≥ A' − back
     * ≥ now); `refunded` is kept
     * below MAX_TIME by giving back less (never more). An extra charge and a migration keep `refunded`. A state
     * dropped early (a reset, a memory store's eviction) forgets the clock as it forgets the charges.
     */
    @Override
    public long mark(State admitted, long now) {
        return Math.min(Arith.MAX_TIME, admitted.tat() + admitted.refunded());
    }

    @Override
    public State settle(State state, long now, long mark, long estimate, long actual) {
        if (actual > estimate) {
            long tat = state == null ? now : Math.max(state.tat(), now);
            long refunded = state == null ? 0 : state.refunded();
            return new State(Math.min(Arith.MAX_TIME, Arith.addSat(tat, Arith.mulSat(actual - estimate, interval))),
                    refunded);
        }
        if (actual == estimate || state == null) {
            return state;
        }
        long undoable = mark - state.refunded() - now;      // A' − now
        long ahead = state.tat() - now;
        long back = Math.min(Math.min(Arith.mulSat(estimate - actual, interval), undoable),
                Math.min(ahead, Arith.MAX_TIME - state.refunded()));
        if (back <= 0) {
            return state;
        }
        return new State(state.tat() - back, state.refunded() + back);
    }
}
