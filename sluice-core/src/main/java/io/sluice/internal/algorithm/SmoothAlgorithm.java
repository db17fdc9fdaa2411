package io.sluice.internal.algorithm;

import io.sluice.Limit;

/*
 * Guava's smooth rate limiters, per key: the part shared by smooth_bursty and smooth_warming_up.
 *
 * Reference. google/guava, guava/src/com/google/common/util/concurrent/SmoothRateLimiter.java and
 * RateLimiter.java (tryAcquire, canAcquire, reserveAndGetWaitLength). Every formula below is Guava's,
 * evaluated with the same double operations in the same order, so that a Lua port (IEEE doubles) and this
 * class give the same bits as Guava for the same inputs. The tests replay the event logs of Guava's
 * RateLimiterTest.
 *
 * Model. A key remembers two numbers:
 *
 *   storedPermits         permits saved up while the key was idle, in [0, maxPermits] (a double)
 *   nextFreeTicketMicros  the moment the NEXT request may proceed (absolute epoch micros)
 *
 * The limiter does not remember when the last request came, but when the next one may: a request is
 * granted as soon as the next free ticket has come, whatever its size, and pushes the ticket back by the
 * time its permits cost. "Each request pays for the previous one": acquire(100) on an idle 1/s key proceeds
 * at once, and the request after it waits 100 s.
 *
 * While the ticket lies in the past the key is idle, and the idle time is turned into stored permits, one
 * per coolDownIntervalMicros, up to maxPermits ("resync"). A request spends stored permits first and fresh
 * ones for the rest. Fresh permits cost stableIntervalMicros = 1e6 / permitsPerSecond each; what stored
 * permits cost is the subclass's choice (storedPermitsToWaitTime, the integral of a cost curve over the
 * permits taken):
 *
 *   smooth_bursty      nothing: saved permits are a free burst of up to maxBurstSeconds of work;
 *   smooth_warming_up  more than fresh ones: a key that has been idle is "cold" and slow (see that class).
 *
 * Worked example (smooth_bursty, 5 permits/s, stableInterval 200,000 us, maxPermits 5):
 *
 *   now (us)   request         stored  ticket before  admitted  wait      ticket after  stored after
 *   0          acquire(1)      0       0 (fresh key)  yes       0         200,000       0
 *   0          acquire(1)      0       200,000        yes       200,000   400,000       0
 *   200,000    tryAcquire(1)   0       400,000        no        retry after 200,000
 *   3,000,000  acquire(3)      5 *     3,000,000      yes       0         3,000,000     2
 *   3,000,000  acquire(4)      2       3,000,000      yes       0         3,400,000     0
 *
 *   * resync: (3,000,000 - 400,000) / 200,000 = 13 idle permits, capped at maxPermits = 5.
 *
 *          ticket                           stored
 *   ------x-------------------------->  0 .. maxPermits, grows while now > ticket
 *          |<- idle: resync adds ->|
 *                                  now: a request is admitted iff ticket - maxWait <= now
 *
 * Mapping to the SPI (Guava's methods, per key):
 *   - A null state is a RateLimiter created long ago and idle since: nextFreeTicket = now and maxPermits
 *     stored, what Guava's resync makes of any limiter idle long enough (absent(now); see "Expiry" for why
 *     not a limiter created at `now`). fresh(now) is a limiter created at `now` (storedPermits as Guava's
 *     doSetRate leaves a new limiter: bursty 0; warming up maxPermits, i.e. cold, the same as absent); the
 *     tests replay Guava's timelines from it. Guava's stopwatch counts from creation and ours is absolute;
 *     every Guava formula uses only differences of times (now - ticket) or compares times, so shifting all
 *     times by the creation moment changes nothing, except where Guava saturates at Long.MAX_VALUE (see
 *     "Saturation").
 *   - step(permits, maxWait) is tryAcquire(permits, maxWait): admitted iff ticket - maxWait <= now
 *     (canAcquire); then reserveEarliestAvailable, and the wait is max(oldTicket - now, 0) where oldTicket
 *     is the resynced ticket BEFORE this reservation. maxWait = 0 is tryAcquire(permits); maxWait =
 *     Long.MAX_VALUE is acquire(permits) (always admitted; ticket - Long.MAX_VALUE cannot overflow since
 *     tickets are >= 0). Guava's permits are an int, ours a long: (double) permits plays the role of Guava's
 *     implicit int-to-double conversion.
 *   - A rejected request changes nothing (Guava's tryAcquire returns before resync). retryAfter is exact
 *     and, as the SPI defines it, for the same permits as a try (no wait): the ticket does not move while
 *     nothing is admitted, so a tryAcquire passes from the ticket on, ticket - now from now, and not one
 *     microsecond earlier.
 *   - permits = 0 (inspection; Guava rejects 0 permits) is admitted and commits nothing: `admitted` is the
 *     input state (null stays null), so an inspection never creates a key or moves its creation time.
 *   - remaining: floor(storedPermits) at `now` (after this decision) when the ticket has come, else 0.
 *     These are the saved permits. Guava also lets any ONE request through once the ticket has come
 *     (it pays later); remaining does not count that request, so an idle fresh bursty key reports 0.
 *   - resetAfter: time until the key is "full": idle with storedPermits == maxPermits. That is the state
 *     every idle key converges to; for warming up it is also exactly a fresh (cold) key.
 *   - grantable: any n when the ticket has come (Guava admits every size then), else 0.
 *   - migrate: Guava's setRate at `now`: resync at the OLD parameters, then doSetRate: storedPermits scaled by
 *     newMaxPermits / oldMaxPermits (oldMaxPermits == 0 gives the new-limiter value), ticket kept. Changing
 *     warmup, coldFactor or maxBurstSeconds is treated the same way (Guava's doSetRate recomputes
 *     maxPermits from them). Equal parameters (e.g. only the name changed) keep the state untouched.
 *     Guava's special case for an infinite old maxPermits cannot occur: rates are finite here.
 *
 * Exact full time. fullAt(state) is the first microsecond at which resync gives exactly maxPermits, i.e.
 * the least idle d >= 1 with stored + (double) d / coolDown >= maxPermits, evaluated with resync's own
 * double expression. The predicate is monotone in d, so we start from ceil((max - stored) * coolDown)
 * (off by at most a few units) and step to the exact boundary. A key that can never fill within the clock
 * domain (only with absurdly small rates whose interval is infinite) reports Long.MAX_VALUE ("never").
 *
 * Expiry (expiresAt = fullAt). A full idle key stays full forever, so all full keys behave alike from then on,
 * and a store drops the state then: at and after fullAt, resync(state, now) = (maxPermits, now) = absent(now),
 * so dropping it is invisible (the properties tests compare a key that kept its state with one that dropped
 * it). That is why no state means "idle and full" rather than "created now": for smooth_warming_up the two
 * are the same (a new Guava limiter is cold, maxPermits stored), but a new Guava bursty limiter starts with 0
 * stored permits, and if no state meant that, a bursty key idle long enough to have saved a full burst would
 * come back after its state was dropped serving one request and then making the caller wait, where Guava's
 * limiter serves the saved burst at once. The price: a bursty key seen for the first time can spend a full
 * burst at once, as a Guava limiter created before its first request and left idle would; maxBurstSeconds = 0
 * gives a limiter without saved permits, where the two meanings coincide.
 *
 * Saturation. Guava saturates the ticket at Long.MAX_VALUE (LongMath.saturatedAdd); we saturate it at the
 * end of our clock, Arith.MAX_TIME = 2^53, so that every stored time is exact in a Lua double. This only
 * differs from Guava when a reservation pushes the ticket past the year 2255; such a key then rejects every
 * bounded request until MAX_TIME, and acquire() reports a wait of MAX_TIME - now. Guava adds the stored and
 * fresh costs with a plain long addition, which could wrap when the fresh cost saturates at Long.MAX_VALUE
 * (rate times permits beyond 2^63); we add with saturation.
 *
 * Invariants: 0 <= storedPermits <= maxPermits (except for Guava's rounding in the migrate rescaling,
 * which can leave stored a few ulps above maxPermits until the next resync clamps it); the ticket never
 * moves backwards and never exceeds MAX_TIME; a rejected request leaves the state unchanged.
 * Rate (checked by the properties tests): order the admitted requests by usable time (now + wait; that is
 * also the admission order). For any m consecutive ones, the permits of all but the last are at most
 * s_first + (u_last - u_first + (m - 1) us) / stableInterval for smooth_bursty, where s_first <= maxPermits
 * is what the first one found stored after its resync, and (u_last - u_first + 3 (m - 1) us) /
 * stableInterval for smooth_warming_up. Why: request k moves the ticket by its cost, so u_k+1 - u_k >= cost_k;
 * a bursty permit costs stableInterval unless it was stored, and stored ones only come from idle time past
 * the ticket at one per stableInterval (telescoping leaves s_first); a warming-up permit never costs less
 * than stableInterval, stored or not. The extra microseconds are Guava's (long) truncations, under 1 us per
 * truncated term (one for bursty, up to three for warming up); the last request is unbounded, as "each
 * request pays for the previous one".
 *
 * Lua port notes. Times are integers <= 2^53 + fill time; storedPermits and all intermediates are doubles
 * used exactly as here. Java's (long) cast of a non-negative double must be emulated: NaN -> 0, >= 2^63 ->
 * Long.MAX_VALUE, else truncation (math.floor for these non-negative values); the saturated results are then
 * clamped to MAX_TIME by min(), which gives the same answer in doubles. Long.MAX_VALUE results ("never")
 * are a sentinel, not a time.
 */
abstract class SmoothAlgorithm implements Algorithm<SmoothAlgorithm.State> {

    /** Returned by {@link #expiresAt} and as resetAfter when the key never fills within the clock domain. */


    /**
     * @param storedPermits        saved permits, in [0, maxPermits]
     * @param nextFreeTicketMicros when the next request may proceed, absolute micros in [0, MAX_TIME]
     */
    record State(double storedPermits, long nextFreeTicketMicros) {}

    /** Guava's stableIntervalMicros: 1e6 / permitsPerSecond. */
    final double stableIntervalMicros;
    /** Guava's maxPermits for these parameters. */
    final double maxPermits;

    SmoothAlgorithm(double stableIntervalMicros, double maxPermits) {
        this.stableIntervalMicros = stableIntervalMicros;
        this.maxPermits = maxPermits;
    }

    /** Guava's {@code SECONDS.toMicros(1L) / permitsPerSecond}. */
    static double stableIntervalMicros(double permitsPerSecond) {
        return 1_000_000L / permitsPerSecond;
    }

    /** The wait that spending {@code permitsToTake} of {@code storedPermits} costs (Guava's integral). */
    abstract long storedPermitsToWaitTime(double storedPermits, double permitsToTake);

    /** Micros of idleness that add one stored permit. */
    abstract double coolDownIntervalMicros();

    /** Stored permits of a newly created Guava limiter (doSetRate with oldMaxPermits == 0). */
    abstract double initialStoredPermits();

    /** The transition for a previous limit of the same type, to replay Guava's setRate. */
    abstract SmoothAlgorithm withLimit(Limit previous);

    @Override
    public Step<State> step(State state, long now, long permits, long maxWaitMicros) {
        State current = state != null ? state : absent(now);
        if (permits == 0) {
            return Step.allow(0, remaining(current, now), resetAfter(current, now), state, state);
        }
        long ticket = current.nextFreeTicketMicros();
        if (ticket - maxWaitMicros > now) { // Guava's canAcquire(now, timeout) is false
            return Step.reject(0, ticket - now, resetAfter(current, now), state);
        }
        State synced = resync(current, now);
        State reserved = reserve(synced, permits);
        long waitMicros = Math.max(synced.nextFreeTicketMicros() - now, 0);
        return Step.allow(waitMicros, remaining(reserved, now), resetAfter(reserved, now), reserved, state);
    }

    @Override
    public long grantable(State state, long now, long permits) {
        State current = state != null ? state : absent(now);
        return current.nextFreeTicketMicros() <= now ? permits : 0;
    }

    @Override
    public long expiresAt(State state) {
        return fullAt(state);
    }

    @Override
    public State migrate(State state, Limit previous, long now) {
        if (state == null || previous.named(limit().name()).equals(limit())) {
            return state;
        }
        SmoothAlgorithm old = withLimit(previous);
        State synced = old.resync(state, now);
        double stored = old.maxPermits == 0.0
                ? initialStoredPermits()
                : synced.storedPermits() * maxPermits / old.maxPermits;
        return new State(stored, synced.nextFreeTicketMicros());
    }

    /** A limiter created at {@code now}, as Guava's {@code RateLimiter.create} (the tests' Guava timelines). */
    State fresh(long now) {
        return new State(initialStoredPermits(), now);
    }

    /** What no state means: a key idle long enough to be full, so dropping a full state changes nothing. */
    State absent(long now) {
        return new State(maxPermits, now);
    }

    /** Guava's resync: idle time since the ticket becomes stored permits, and the ticket moves to now. */
    State resync(State state, long now) {
        long ticket = state.nextFreeTicketMicros();
        if (now <= ticket) {
            return state;
        }
        double newPermits = (now - ticket) / coolDownIntervalMicros();
        return new State(Math.min(maxPermits, state.storedPermits() + newPermits), now);
    }

    /** Guava's reserveEarliestAvailable after resync: stored permits first, then fresh ones. */
    private State reserve(State synced, long permits) {
        double required = permits;
        double stored = synced.storedPermits();
        double storedToSpend = Math.min(required, stored);
        double freshPermits = required - storedToSpend;
        long waitMicros = Arith.addSat(storedPermitsToWaitTime(stored, storedToSpend),
                truncate(freshPermits * stableIntervalMicros));
        long ticket = Math.min(Arith.addSat(synced.nextFreeTicketMicros(), waitMicros), Arith.MAX_TIME);
        return new State(stored - storedToSpend, ticket);
    }

    /** Saved permits usable at now, or 0 while the ticket is in the future. */
    private long remaining(State committed, long now) {
        State synced = resync(committed, now);
        return synced.nextFreeTicketMicros() <= now ? (long) Math.floor(synced.storedPermits()) : 0;
    }

    private long resetAfter(State committed, long now) {
        long full = fullAt(committed);
        return full == Arith.NEVER ? Arith.NEVER : Math.max(0, full - now);
    }

    /** The first time at which resync leaves exactly maxPermits stored (see the essay), or Arith.NEVER. */
    long fullAt(State state) {
        double stored = state.storedPermits();
        long ticket = state.nextFreeTicketMicros();
        if (stored == maxPermits) {
            return ticket;
        }
        if (stored > maxPermits) { // a few ulps above after a rescale: one idle microsecond clamps it
            return afterTicket(ticket, 1);
        }
        double estimate = (maxPermits - stored) * coolDownIntervalMicros();
        if (!(estimate <= Arith.MAX_TIME)) { // also NaN and infinity
            return Arith.NEVER;
        }
        long idle = Math.max(1, (long) Math.ceil(estimate));
        while (idle > 1 && fillsAfter(stored, idle - 1)) {
            idle--;
        }
        while (!fillsAfter(stored, idle)) {
            idle++;
        }
        return afterTicket(ticket, idle);
    }

    /**
     * {@code ticket + idle}, or "never" when that is past the end of the clock: no clock reading reaches it, and
     * a Lua double could not hold it exactly (2^53 + 1 rounds down), so memory and Redis report the same.
     */
    private static long afterTicket(long ticket, long idle) {
        return idle > Arith.MAX_TIME - ticket ? Arith.NEVER : ticket + idle;
    }

    /** Whether resync after {@code idleMicros} (>= 1) reaches maxPermits: resync's own expression. */
    private boolean fillsAfter(double stored, long idleMicros) {
        return stored + idleMicros / coolDownIntervalMicros() >= maxPermits;
    }

    /** Java's (long) cast of a non-negative double: NaN gives 0, values at or above 2^63 saturate. */
    static long truncate(double micros) {
        return (long) micros;
    }
}
