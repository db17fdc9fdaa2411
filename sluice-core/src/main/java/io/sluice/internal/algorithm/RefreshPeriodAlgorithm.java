package io.sluice.internal.algorithm;

import io.sluice.Limit;
import io.sluice.RefreshPeriod;

/*
 * refresh_period: Resilience4j's AtomicRateLimiter, per key, in microseconds instead of nanoseconds.
 *
 * Reference. resilience4j/resilience4j, resilience4j-ratelimiter/src/main/java/io/github/resilience4j/
 * ratelimiter/internal/AtomicRateLimiter.java: calculateNextState, nanosToWaitForPermission, divCeil,
 * reservePermissions; the tests replay AtomicRateLimiterTest's timelines.
 *
 * Model. Time since the key's origin (the moment Resilience4j would have created the limiter: the key's
 * first request) is cut into cycles of refreshPeriod P. The state is
 *
 *   origin             absolute micros of cycle 0's start
 *   activeCycle        the cycle of the last admitted request
 *   activePermissions  permits left in that cycle; negative when reservations borrowed from later cycles
 *
 * A request at cycle c first refreshes: if c > activeCycle, every elapsed cycle adds limitForPeriod L, but
 * never above L: available = min(active + (c - activeCycle) * L, L); debt is paid before anything is saved.
 * Then (nanosToWaitForPermission):
 *
 *   available >= permits   wait 0
 *   otherwise              wait = (start of c+1 - now) + fullCycles * P,
 *                          fullCycles = divCeil(permits - (available + L), L)   (0 when that is <= 0)
 *
 * and the request is admitted iff wait <= maxWait, taking the permits: available - permits, possibly
 * negative (reservePermissions). A reserved request uses its permits at now + wait, the start of the cycle
 * whose refill completes it.
 *
 * Worked example (AtomicRateLimiterTest.reservePermissionsUpfront: L = 3, P = 10,000 us, maxWait 12,000;
 * limiter created at 0, requests of 1 permit at 10,001 ... 10,009, all in cycle 1, which refreshed to 3):
 *
 *   now     available  wait                                         admitted  available after
 *   10,001  3          0                                            yes       2
 *   10,003  1          0                                            yes       0
 *   10,004  0          20,000 - 10,004 = 9,996   (fullCycles 0)     yes       -1
 *   10,006  -2         9,994                                        yes       -3
 *   10,007  -3         9,993 + divCeil(1, 3) * 10,000 = 19,993      no (> 12,000), state unchanged
 *
 *   cycle:   |     0      |     1      |     2      |     3
 *            0         10,000       20,000       30,000
 *                          ^^^ 3 used  ^ 3 reserved usable here; cycle 2 refreshes to min(-3 + 3, 3) = 0
 *
 * Mapping to the SPI.
 *   - A null state is an AtomicRateLimiter created at now: origin now, cycle 0, L permits.
 *   - maxWait 0 is acquirePermission with a zero timeout; maxWait > 0 is reservePermission/acquirePermission
 *     with that timeout. Resilience4j's rejected calculateNextState still stores the refreshed cycle; that
 *     refresh is idempotent (refreshing to c then to c' >= c equals refreshing to c' directly, as the cap
 *     is applied once the sum passes L either way), so returning the UNCHANGED input state is the same
 *     limiter, and is what the SPI asks.
 *   - A now before the state's active cycle (a clock that went backwards) is taken as the start of the
 *     active cycle: no time passed. All answers are then relative to that effective now.
 *   - permits = 0 is admitted and commits nothing. remaining = max(0, available) after the decision.
 *   - retryAfter is exact: the earliest time at which the same permits would be admitted as a try (maxWait 0, the SPI's definition) if
 *     nothing else happened. When permits <= L it is wait - maxWait (the usable moment does not move while
 *     we wait). When permits > L the usable moment moves once the refreshes reach the cap, so the answer
 *     can be "never" (Long.MAX_VALUE): e.g. any maxWait = 0 request for more than L permits. It is computed
 *     by evaluating the few candidate times where admission can start (see retryAfter()).
 *     On a key without state only a request for more than L permits can be rejected (a new key has L), and
 *     as the rejection stores nothing, every retry meets a new key again: retryAfter is "never". Such a
 *     request passes on a new key iff its maxWait covers the cycles it needs from now
 *     ((divCeil(permits, L) - 1) * P); storing the new key on rejection would let a retry pass once the
 *     phase advanced, but the SPI keeps rejections free of state changes.
 *   - resetAfter: time until a refresh brings the permits back to L; Long.MAX_VALUE ("never") when that
 *     refresh comes after MAX_TIME (a debt reserved up to the end of the clock, or one that a lowered
 *     limitForPeriod repays over centuries). Such a time is outside the clock domain, and a saturated
 *     cycleStart minus now would be an arbitrary number.
 *   - migrate: a limitForPeriod change is Resilience4j's changeLimitForPeriod: the state is kept as it is and
 *     the new L applies from the next refresh (also to cycles that elapsed before the change but were not
 *     refreshed yet, as in Resilience4j). A refreshPeriod change (Resilience4j has none) brings the state up
 *     to date at now under the previous parameters, keeps the origin, and recounts the active cycle under
 *     the new period, so the new cycles are aligned on the key's origin. A timeout change changes nothing.
 *
 * Guarantee, by usable time (now + wait). Without reservations at most L permits become usable per cycle.
 * With reservations Resilience4j lets a request combine what is left of its own cycle with the next cycle's
 * refill (available + L in the formula): with L = 10, 5 left and a reservation of 8 usable at the next
 * cycle's start, that cycle still refreshes to min(-3 + 10, 10) = 7, so 15 permits become usable in it.
 * What holds exactly is that no permit is handed out twice: by the end of cycle k (from the origin) at most
 * (k + 1) * L permits have become usable, and with requests of at most L permits, any n consecutive cycles
 * see at most (n + 1) * L. The properties test checks both.
 *
 * Expiry (deliberate phase difference). A state is "full" from the first refresh that brings it to L; the
 * key expires once it has also stayed idle for that whole cycle: expiresAt = start of cycle c_full + 1, where
 * c_full = activeCycle + max(1, divCeil(L - active, L)). No permit of that key is usable after c_full's start
 * (its debt is paid by then). The next request creates a key with a new origin, i.e. a new cycle phase, as a
 * freshly created AtomicRateLimiter would. Compared with keeping the old state, the new key decides every
 * request of at most L permits identically (admitted at once, same remaining) and only the cycle
 * boundaries differ: resetAfter, and the wait of a reservation for more than L permits, which is never
 * shorter for the new key, so the new key is never more permissive.
 *
 * Bounds and the Lua port. Two guards keep every stored integer exact in a double: a reservation is only
 * admitted if its usable time now + wait <= Arith.MAX_TIME (2^53, the end of the clock), and if the debt
 * stays within MAX_DEBT = 2^52 permits (the time guard alone bounds the debt by L * (cycles until
 * MAX_TIME + 1), so this one only matters above about half a permit per microsecond). So activePermissions
 * is in [-2^52, max(L, previous L)], cycle starts are <= 2^53, and L - activePermissions < 2^53. Products
 * that may still pass 2^53 (fullCycles * P in a wait, cycle * P for far candidates) are saturated with
 * Arith.mulSat/addSat; in Lua a double product that rounds beyond 2^53 still compares correctly against
 * MAX_TIME, so the port may compute them in doubles as long as it clamps before storing. retryAfter's
 * "never" and expiresAt beyond MAX_TIME are sentinels (Long.MAX_VALUE or a time past the clock).
 */
final class RefreshPeriodAlgorithm implements Algorithm<RefreshPeriodAlgorithm.State> {

    /** Largest debt (negative permits) a key may carry; see the essay. */
    static final long MAX_DEBT = 1L << 52;

    /**
     * @param origin            absolute micros where cycle 0 starts
     * @param activeCycle       the cycle the permits below belong to
     * @param activePermissions permits left in the active cycle, negative when reserved ahead
     */
    record State(long origin, long activeCycle, long activePermissions) {}

    /** The state refreshed at an effective now (never before the active cycle). */
    private record View(long origin, long now, long cycle, long available) {}

    private final RefreshPeriod limit;
    private final long permitsPerCycle;
    private final long periodMicros;

    RefreshPeriodAlgorithm(RefreshPeriod limit) {
        this.limit = limit;
        this.permitsPerCycle = limit.limitForPeriod();
        this.periodMicros = Arith.micros(limit.refreshPeriod());
    }

    @Override
    public Limit limit() {
        return limit;
    }

    @Override
    public Step<State> step(State state, long now, long permits, long maxWaitMicros) {
        State current = state != null ? state : fresh(now);
        View view = view(current, now);
        if (permits == 0) {
            return Step.allow(0, Math.max(0, view.available()), resetAfter(view, view.available()), state, state);
        }
        long waitMicros = waitFor(view, permits);
        if (admits(view, permits, waitMicros, maxWaitMicros)) {
            long left = view.available() - permits;
            State next = new State(current.origin(), view.cycle(), left);
            return Step.allow(waitMicros, Math.max(0, left), resetAfter(view, left), next, state);
        }
        // a rejection leaves no state behind, so on a new key the same request meets a new key every time
        long retryAfter = state == null ? Long.MAX_VALUE : retryAfter(current, view, permits, 0);
        return Step.reject(Math.max(0, view.available()), retryAfter, resetAfter(view, view.available()), state);
    }

    @Override
    public long grantable(State state, long now, long permits) {
        View view = view(state != null ? state : fresh(now), now);
        return Math.min(permits, Math.max(0, view.available()));
    }

    @Override
    public long expiresAt(State state) {
        long available = state.activePermissions();
        long cyclesToFull = available >= permitsPerCycle
                ? 0
                : Arith.ceilDiv(permitsPerCycle - available, permitsPerCycle);
        return cycleStart(state.origin(), Arith.addSat(state.activeCycle(), Math.max(1, cyclesToFull) + 1));
    }

    @Override
    public State migrate(State state, Limit previous, long now) {
        RefreshPeriod old = (RefreshPeriod) previous;
        if (state == null || old.refreshPeriod().equals(limit.refreshPeriod())) {
            return state; // changeLimitForPeriod: the new limit applies from the next refresh
        }
        View view = new RefreshPeriodAlgorithm(old).view(state, now);
        long cycle = (view.now() - state.origin()) / periodMicros;
        return new State(state.origin(), cycle, view.available());
    }

    private State fresh(long now) {
        return new State(now, 0, permitsPerCycle);
    }

    /** calculateNextState's refresh at an effective now that is never before the active cycle's start. */
    private View view(State state, long now) {
        long origin = state.origin();
        long effectiveNow = Math.max(now, cycleStart(origin, state.activeCycle()));
        long cycle = (effectiveNow - origin) / periodMicros;
        return new View(origin, effectiveNow, cycle, refreshed(state.activePermissions(), cycle - state.activeCycle()));
    }

    /** min(available + elapsedCycles * L, L) without overflow: compare cycles, not products. */
    private long refreshed(long available, long elapsedCycles) {
        if (elapsedCycles == 0) {
            return available; // within a cycle nothing is refilled, even above a lowered L
        }
        if (available >= permitsPerCycle) {
            return permitsPerCycle;
        }
        long cyclesToFull = Arith.ceilDiv(permitsPerCycle - available, permitsPerCycle);
        return elapsedCycles >= cyclesToFull ? permitsPerCycle : available + elapsedCycles * permitsPerCycle;
    }

    /** nanosToWaitForPermission, in micros, saturated. */
    private long waitFor(View view, long permits) {
        if (view.available() >= permits) {
            return 0;
        }
        long toNextCycle = cycleStart(view.origin(), view.cycle() + 1) - view.now();
        long missingAfterNextRefill = Arith.addSat(permits, -(view.available() + permitsPerCycle));
        long fullCycles = missingAfterNextRefill <= 0 ? 0 : Arith.ceilDiv(missingAfterNextRefill, permitsPerCycle);
        return Arith.addSat(Arith.mulSat(fullCycles, periodMicros), toNextCycle);
    }

    /** reservePermissions' test, plus the two bounds of the essay. */
    private boolean admits(View view, long permits, long waitMicros, long maxWaitMicros) {
        return waitMicros <= maxWaitMicros
                && waitMicros <= Arith.MAX_TIME - view.now()
                && Arith.addSat(view.available(), -permits) >= -MAX_DEBT;
    }

    /**
     * The earliest time after a rejection at which the same request is admitted, or Long.MAX_VALUE.
     *
     * Within one cycle the refreshed state is fixed, the usable moment U is fixed and the wait U - t shrinks
     * as t grows, so admission in cycle c starts at max(start(c), U(c) - maxWait). Before the refreshes reach
     * the cap L, U is the same in every cycle (each refill adds exactly L); from the first capped cycle on,
     * everything repeats one cycle later, so if that cycle admits nothing no later one does. The debt guard
     * holds from some cycle on. So the first admission is at one of: U - maxWait now, the start of the cycle
     * where the debt guard starts to hold, the start of the first capped cycle, or U - maxWait in that cycle.
     * We evaluate those candidates with the real decision and keep the earliest that admits.
     */
    private long retryAfter(State state, View view, long permits, long maxWaitMicros) {
        long usable = Arith.addSat(view.now(), waitFor(view, permits));
        long best = earliestAdmitting(state, view.now(), Long.MAX_VALUE, usable - Math.min(maxWaitMicros, usable),
                permits, maxWaitMicros);

        long debtFloor = Arith.addSat(permits, -MAX_DEBT);
        if (debtFloor > permitsPerCycle) { // later cycles hold at most L: the debt guard never holds there
            return best == Long.MAX_VALUE ? Long.MAX_VALUE : best - view.now();
        }
        if (view.available() < debtFloor) {
            long cycle = view.cycle() + Arith.ceilDiv(debtFloor - view.available(), permitsPerCycle);
            best = earliestAdmitting(state, view.now(), best, cycleStart(view.origin(), cycle), permits, maxWaitMicros);
        }

        long cappedCycle = view.available() >= permitsPerCycle
                ? view.cycle() + (view.available() > permitsPerCycle ? 1 : 0)
                : view.cycle() + Arith.ceilDiv(permitsPerCycle - view.available(), permitsPerCycle);
        long cappedStart = cycleStart(view.origin(), cappedCycle);
        if (cappedStart <= Arith.MAX_TIME) {
            best = earliestAdmitting(state, view.now(), best, cappedStart, permits, maxWaitMicros);
            View capped = new View(view.origin(), cappedStart, cappedCycle, permitsPerCycle);
            long cappedUsable = Arith.addSat(cappedStart, waitFor(capped, permits));
            best = earliestAdmitting(state, view.now(), best, cappedUsable - Math.min(maxWaitMicros, cappedUsable),
                    permits, maxWaitMicros);
        }
        return best == Long.MAX_VALUE ? Long.MAX_VALUE : best - view.now();
    }

    /** {@code candidate} if it is later than now, within the clock, admits and beats {@code best}. */
    private long earliestAdmitting(State state, long now, long best, long candidate, long permits, long maxWait) {
        if (candidate <= now || candidate >= best || candidate > Arith.MAX_TIME) {
            return best;
        }
        View view = view(state, candidate);
        return admits(view, permits, waitFor(view, permits), maxWait) ? candidate : best;
    }

    /**
     * Time from the view's now until a refresh brings {@code available} back to L; Arith.NEVER when that refresh
     * comes after the end of the clock (a debt that outlives MAX_TIME, e.g. after a lowered limitForPeriod): not
     * a time of the clock domain, and not one a Lua double could report exactly.
     */
    private long resetAfter(View view, long available) {
        if (available >= permitsPerCycle) {
            return 0;
        }
        long cycles = Arith.ceilDiv(permitsPerCycle - available, permitsPerCycle);
        long full = cycleStart(view.origin(), Arith.addSat(view.cycle(), cycles));
        return full > Arith.MAX_TIME ? Arith.NEVER : full - view.now();
    }

    private long cycleStart(long origin, long cycle) {
        return Arith.addSat(origin, Arith.mulSat(cycle, periodMicros));
    }
}
