package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.SmoothBurstyAlgorithmTest.assertStep;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * refresh_period against Resilience4j's AtomicRateLimiterTest (resilience4j/resilience4j,
 * resilience4j-ratelimiter/src/test/java/io/github/resilience4j/ratelimiter/internal/
 * AtomicRateLimiterTest.java), in microseconds where Resilience4j uses nanoseconds. Its limiters are created
 * at time 0 and first used later; here that is the state (origin 0, cycle 0, limitForPeriod). Its
 * {@code metrics.getNanosToWait()} is the wait of one permit, i.e. the retryAfter of a 1-permit request
 * with maxWait 0, and {@code getAvailablePermissions()} the refreshed (possibly negative) permits, which we
 * read from the admitted state of a reservation or from remaining.
 */
class RefreshPeriodAlgorithmTest {
    private static final long CYCLE = 250_000;

    private static RefreshPeriodAlgorithm algorithm(long limitForPeriod, long periodMicros) {
        return new RefreshPeriodAlgorithm(RefreshPeriod.of(limitForPeriod, Duration.ofNanos(periodMicros * 1000)));
    }

    private static RefreshPeriodAlgorithm.State createdAtZero(long limitForPeriod) {
        return new RefreshPeriodAlgorithm.State(0, 0, limitForPeriod);
    }

    private final RefreshPeriodAlgorithm onePerCycle = algorithm(1, CYCLE);

    /** metrics.getNanosToWait(): the wait for one permit now. */
    private long waitForOne(RefreshPeriodAlgorithm algorithm, RefreshPeriodAlgorithm.State state, long now) {
        Step<RefreshPeriodAlgorithm.State> step = algorithm.step(state, now, 1, 0);
        return step.allowed() ? 0 : step.retryAfterMicros();
    }

    // ---- Resilience4j's AtomicRateLimiterTest timelines ----

    @Test
    void r4jPermissionsInFirstCycle() {
        assertThat(onePerCycle.step(createdAtZero(1), CYCLE - 10, 0, 0).remaining()).isEqualTo(1);
    }

    @Test
    void r4jAcquireAndRefresh() {
        RefreshPeriodAlgorithm.State state = createdAtZero(1);
        Step<RefreshPeriodAlgorithm.State> first = onePerCycle.step(state, CYCLE, 1, 0);
        assertStep(first, true, 0, 0, 0, CYCLE);
        state = first.admitted();
        assertThat(waitForOne(onePerCycle, state, CYCLE)).isEqualTo(CYCLE);
        assertStep(onePerCycle.step(state, CYCLE, 1, 0), false, 0, 0, CYCLE, CYCLE);

        Step<RefreshPeriodAlgorithm.State> third = onePerCycle.step(state, CYCLE * 2, 1, 0);
        assertStep(third, true, 0, 0, 0, CYCLE);
        state = third.admitted();
        assertStep(onePerCycle.step(state, CYCLE * 2, 1, 0), false, 0, 0, CYCLE, CYCLE);
    }

    @Test
    void r4jReserveAndRefresh() {
        RefreshPeriodAlgorithm.State state = onePerCycle.step(createdAtZero(1), CYCLE, 1, CYCLE).admitted();
        Step<RefreshPeriodAlgorithm.State> reserved = onePerCycle.step(state, CYCLE, 1, CYCLE);
        assertStep(reserved, true, CYCLE, 0, 0, 2 * CYCLE);
        state = reserved.admitted();
        assertThat(state.activePermissions()).isEqualTo(-1);
        assertThat(waitForOne(onePerCycle, state, CYCLE)).isEqualTo(2 * CYCLE);

        assertThat(onePerCycle.step(state, CYCLE * 2 + 10, 0, 0).remaining()).isZero();
        assertThat(waitForOne(onePerCycle, state, CYCLE * 2 + 10)).isEqualTo(CYCLE - 10);
    }

    @Test
    void r4jReserveFewThenSkipCyclesBeforeRefreshNonBlocking() {
        RefreshPeriodAlgorithm.State state = createdAtZero(1);
        Step<RefreshPeriodAlgorithm.State> permission = onePerCycle.step(state, CYCLE, 1, CYCLE);
        assertThat(permission.waitMicros()).isZero();
        state = permission.admitted();
        assertThat(waitForOne(onePerCycle, state, CYCLE)).isEqualTo(CYCLE);

        Step<RefreshPeriodAlgorithm.State> reservation = onePerCycle.step(state, CYCLE, 1, CYCLE);
        assertThat(reservation.waitMicros()).isPositive().isLessThanOrEqualTo(CYCLE);
        state = reservation.admitted();
        assertThat(state.activePermissions()).isEqualTo(-1);
        assertThat(waitForOne(onePerCycle, state, CYCLE)).isEqualTo(CYCLE * 2);

        Step<RefreshPeriodAlgorithm.State> additional = onePerCycle.step(state, CYCLE, 1, CYCLE);
        assertThat(additional.allowed()).isFalse();
        assertThat(additional.rejected()).isSameAs(state);
        assertThat(additional.retryAfterMicros()).isEqualTo(2 * CYCLE); // as a try: usable 2 cycles from now

        assertThat(onePerCycle.step(state, CYCLE * 6 + 10, 0, 0).remaining()).isEqualTo(1);
        assertThat(waitForOne(onePerCycle, state, CYCLE * 6 + 10)).isZero();
    }

    @Test
    void r4jRejectedByTimeoutNonBlocking() {
        RefreshPeriodAlgorithm.State state = onePerCycle.step(createdAtZero(1), CYCLE, 1, 0).admitted();
        assertThat(waitForOne(onePerCycle, state, CYCLE)).isEqualTo(CYCLE);
        Step<RefreshPeriodAlgorithm.State> failed = onePerCycle.step(state, CYCLE, 1, 0);
        assertThat(failed.allowed()).isFalse();
        assertThat(failed.remaining()).isZero();
        assertThat(onePerCycle.step(state, CYCLE * 2 - 1, 0, 0).remaining()).isZero();
        assertThat(waitForOne(onePerCycle, state, CYCLE * 2 - 1)).isEqualTo(1);
    }

    @Test
    void r4jChangePermissionsLimitBetweenCycles() {
        RefreshPeriodAlgorithm.State state = onePerCycle.step(createdAtZero(1), CYCLE, 1, CYCLE).admitted();
        state = onePerCycle.step(state, CYCLE, 1, CYCLE).admitted();
        assertThat(state.activePermissions()).isEqualTo(-1);
        assertThat(waitForOne(onePerCycle, state, CYCLE)).isEqualTo(CYCLE * 2);

        RefreshPeriodAlgorithm twoPerCycle = algorithm(2, CYCLE);
        state = twoPerCycle.migrate(state, onePerCycle.limit(), CYCLE);
        assertThat(state.activePermissions()).isEqualTo(-1);
        assertThat(waitForOne(twoPerCycle, state, CYCLE)).isEqualTo(CYCLE);

        assertThat(twoPerCycle.step(state, CYCLE * 2 + 10, 0, 0).remaining()).isEqualTo(1);
        assertThat(waitForOne(twoPerCycle, state, CYCLE * 2 + 10)).isZero();
    }

    @Test
    void r4jReservePermissionsUpfront() {
        long cycle = 10_000;
        RefreshPeriodAlgorithm algorithm = algorithm(3, cycle);
        RefreshPeriodAlgorithm.State state = createdAtZero(3);
        List<Long> timesToWait = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            Step<RefreshPeriodAlgorithm.State> step = algorithm.step(state, cycle + i + 1, 1, 12_000);
            timesToWait.add(step.allowed() ? step.waitMicros() : -1L);
            state = step.allowed() ? step.admitted() : step.rejected();
        }
        assertThat(timesToWait).containsExactly(0L, 0L, 0L, cycle - 4, cycle - 5, cycle - 6, -1L, -1L, -1L);
        assertThat(state.activePermissions()).isEqualTo(-3);
    }

    @Test
    void r4jReserveManyCyclesIfWeightGreaterThanLimitPerPeriod() {
        Step<RefreshPeriodAlgorithm.State> step = onePerCycle.step(createdAtZero(1), CYCLE, 3, 5 * CYCLE);
        assertThat(step.waitMicros()).isEqualTo(2 * CYCLE).isGreaterThan(CYCLE);
        assertThat(step.admitted().activePermissions()).isEqualTo(-2);
    }

    /** notSpyRawTest with explicit times: 1 per cycle, then limitForPeriod 2 from the next refresh. */
    @Test
    void r4jRawCycleCounting() {
        RefreshPeriodAlgorithm.State state = onePerCycle.step(null, 1_000, 1, 0).admitted(); // origin 1,000
        assertThat(onePerCycle.step(state, 1_000 + CYCLE - 1, 1, 0).allowed()).isFalse();
        state = onePerCycle.step(state, 1_000 + CYCLE, 1, 0).admitted();
        assertThat(onePerCycle.step(state, 1_000 + CYCLE, 1, 0).allowed()).isFalse();
        RefreshPeriodAlgorithm two = algorithm(2, CYCLE);
        state = two.migrate(state, onePerCycle.limit(), 1_000 + CYCLE + 5);
        assertThat(two.step(state, 1_000 + CYCLE + 5, 1, 0).allowed()).isFalse(); // this cycle keeps its 0
        state = two.step(state, 1_000 + 2 * CYCLE, 1, 0).admitted();
        state = two.step(state, 1_000 + 2 * CYCLE, 1, 0).admitted();
        assertThat(two.step(state, 1_000 + 2 * CYCLE, 1, 0).allowed()).isFalse();
        assertThat(state).isEqualTo(new RefreshPeriodAlgorithm.State(1_000, 2, 0));
    }

    // ---- SPI fields and edge cases ----

    private final RefreshPeriodAlgorithm tenPerSecond = algorithm(10, 1_000_000);

    @Test
    void freshKeyStartsItsOwnPhase() {
        Step<RefreshPeriodAlgorithm.State> first = tenPerSecond.step(null, 300_000, 4, 0);
        assertStep(first, true, 0, 6, 0, 1_000_000);
        assertThat(first.admitted()).isEqualTo(new RefreshPeriodAlgorithm.State(300_000, 0, 6));
        assertThat(first.rejected()).isNull();
        Step<RefreshPeriodAlgorithm.State> tooMany = tenPerSecond.step(first.admitted(), 800_000, 7, 0);
        assertStep(tooMany, false, 0, 6, 500_000, 500_000);
        assertThat(tooMany.rejected()).isSameAs(first.admitted());
        assertThat(tenPerSecond.grantable(first.admitted(), 800_000, 7)).isEqualTo(6);
        assertThat(tenPerSecond.grantable(first.admitted(), 1_300_000, 70)).isEqualTo(10);
        assertThat(tenPerSecond.grantable(null, 0, 70)).isEqualTo(10);
    }

    @Test
    void reservationCarriesTheRestOfItsCycle() {
        // Resilience4j's available + L: 5 left and a reservation of 8 is usable at the next cycle's start,
        // which still refreshes to 7: 15 permits usable in that cycle (see the essay's guarantee)
        RefreshPeriodAlgorithm.State state = new RefreshPeriodAlgorithm.State(0, 0, 5);
        Step<RefreshPeriodAlgorithm.State> reserved = tenPerSecond.step(state, 400_000, 8, 600_000);
        assertStep(reserved, true, 600_000, 0, 0, 1_600_000);
        assertThat(reserved.admitted().activePermissions()).isEqualTo(-3);
        assertThat(tenPerSecond.step(reserved.admitted(), 1_000_000, 7, 0).allowed()).isTrue();
        assertThat(tenPerSecond.step(reserved.admitted(), 1_000_000, 8, 0).allowed()).isFalse();
    }

    @Test
    void reservationsAcrossSeveralCycles() {
        RefreshPeriodAlgorithm.State state = new RefreshPeriodAlgorithm.State(0, 0, 10);
        // 35 at 0.25 s: 10 now, 10 + 10 + 5 from cycles 1..3: usable at 3 s; 5 left in cycle 3
        Step<RefreshPeriodAlgorithm.State> step = tenPerSecond.step(state, 250_000, 35, Long.MAX_VALUE);
        assertStep(step, true, 2_750_000, 0, 0, 3_750_000);
        state = step.admitted();
        assertThat(state.activePermissions()).isEqualTo(-25);
        assertStep(tenPerSecond.step(state, 3_000_000, 5, 0), true, 0, 0, 0, 1_000_000);
        assertStep(tenPerSecond.step(state, 2_999_999, 5, 0), false, 0, 0, 1, 1_000_001);
        // the same request with 1 s of patience passes from 2 s on (usable at 3 s, minus 1 s of patience);
        // retry-after is for a try: 3 s
        Step<RefreshPeriodAlgorithm.State> patient = tenPerSecond.step(state, 250_000, 5, 1_000_000);
        assertStep(patient, false, 0, 0, 2_750_000, 3_750_000);
        assertThat(tenPerSecond.step(state, 2_000_000, 5, 1_000_000).allowed()).isTrue();
        assertThat(tenPerSecond.step(state, 1_999_999, 5, 1_000_000).allowed()).isFalse();
    }

    @Test
    void retryAfterOfMoreThanOneCycleOfPermits() {
        RefreshPeriodAlgorithm.State state = new RefreshPeriodAlgorithm.State(0, 0, 3);
        // 25 > L with no patience: never
        assertThat(tenPerSecond.step(state, 100_000, 25, 0).retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
        // 25 with 1.5 s of patience: the usable moment is 3 s while permits accumulate (3 + 10 + 10 + 10),
        // so the request passes from 1.5 s on
        Step<RefreshPeriodAlgorithm.State> step = tenPerSecond.step(state, 100_000, 25, 1_500_000);
        assertThat(step.retryAfterMicros()).isEqualTo(Long.MAX_VALUE); // as a try, 25 > L never passes
        assertThat(tenPerSecond.step(state, 1_500_000, 25, 1_500_000).allowed()).isTrue();
        assertThat(tenPerSecond.step(state, 1_499_999, 25, 1_500_000).allowed()).isFalse();
        // 25 with 0.9 s: from cycle 1 on the key is full (10), and then 25 always needs the rest of the
        // current cycle plus one whole cycle (10 + 10 + 5): more than 1 s, so never
        assertThat(tenPerSecond.step(state, 100_000, 25, 900_000).retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
        for (long t = 100_000; t < 5_000_000; t += 50_000) {
            assertThat(tenPerSecond.step(state, t, 25, 900_000).allowed()).isFalse();
        }
        // with 1 s (and 1 us) the window is the last microsecond of each cycle from cycle 1 on... first at
        // 1.999999 s, where the usable moment is 3 s; before cycle 1 it is 3 s as well, too far
        Step<RefreshPeriodAlgorithm.State> edge = tenPerSecond.step(state, 100_000, 25, 1_000_001);
        assertThat(edge.retryAfterMicros()).isEqualTo(Long.MAX_VALUE); // as a try: never
        assertThat(tenPerSecond.step(state, 1_999_999, 25, 1_000_001).waitMicros()).isEqualTo(1_000_001);
        assertThat(tenPerSecond.step(state, 1_999_998, 25, 1_000_001).allowed()).isFalse();
    }

    @Test
    void inspectionCommitsNothing() {
        Step<RefreshPeriodAlgorithm.State> onNull = tenPerSecond.step(null, 5, 0, 0);
        assertStep(onNull, true, 0, 10, 0, 0);
        assertThat(onNull.admitted()).isNull();
        RefreshPeriodAlgorithm.State owing = new RefreshPeriodAlgorithm.State(0, 0, -4);
        Step<RefreshPeriodAlgorithm.State> inDebt = tenPerSecond.step(owing, 100, 0, 0);
        assertStep(inDebt, true, 0, 0, 0, 1_999_900);
        assertThat(inDebt.admitted()).isSameAs(owing);
    }

    @Test
    void timeGoingBackwardsMeansNoTimePassed() {
        RefreshPeriodAlgorithm.State state = new RefreshPeriodAlgorithm.State(1_000_000, 3, 0); // cycle 3 = 4 s
        // at 2 s the key is taken to be at 4 s: nothing refilled, the next boundary is 1 s away
        assertStep(tenPerSecond.step(state, 2_000_000, 1, 0), false, 0, 0, 1_000_000, 1_000_000);
        Step<RefreshPeriodAlgorithm.State> reserved = tenPerSecond.step(state, 2_000_000, 1, 1_000_000);
        assertStep(reserved, true, 1_000_000, 0, 0, 2_000_000);
        assertThat(reserved.admitted()).isEqualTo(new RefreshPeriodAlgorithm.State(1_000_000, 3, -1));
        assertThat(tenPerSecond.step(state, 0, 0, 0).remaining()).isZero();
    }

    @Test
    void expiresAfterAWholeIdleCycleAtFull() {
        RefreshPeriodAlgorithm.State used = new RefreshPeriodAlgorithm.State(0, 2, 4); // full at 3 s
        assertThat(tenPerSecond.expiresAt(used)).isEqualTo(4_000_000);
        RefreshPeriodAlgorithm.State owing = new RefreshPeriodAlgorithm.State(0, 2, -15); // full at 5 s
        assertThat(tenPerSecond.expiresAt(owing)).isEqualTo(6_000_000);
        RefreshPeriodAlgorithm.State aboveLoweredLimit = new RefreshPeriodAlgorithm.State(0, 2, 50);
        assertThat(tenPerSecond.expiresAt(aboveLoweredLimit)).isEqualTo(4_000_000);
        // from then on a request of at most L decides as on a new key; only the phase differs
        for (long t : new long[] {6_000_000, 6_700_000}) {
            Step<RefreshPeriodAlgorithm.State> old = tenPerSecond.step(owing, t, 10, 0);
            Step<RefreshPeriodAlgorithm.State> fresh = tenPerSecond.step(null, t, 10, 0);
            assertThat(old.allowed()).isEqualTo(fresh.allowed()).isTrue();
            assertThat(old.remaining()).isEqualTo(fresh.remaining()).isZero();
        }
        assertThat(tenPerSecond.step(owing, 6_700_000, 15, Long.MAX_VALUE).waitMicros()).isEqualTo(300_000);
        assertThat(tenPerSecond.step(null, 6_700_000, 15, Long.MAX_VALUE).waitMicros()).isEqualTo(1_000_000);
    }

    @Test
    void guardsAtTheEndOfTheClockAndOfTheDebt() {
        RefreshPeriodAlgorithm.State state = new RefreshPeriodAlgorithm.State(0, 0, 10);
        // a reservation usable after MAX_TIME is rejected even with unbounded patience, for good
        long periods = Arith.MAX_TIME / 1_000_000;
        Step<RefreshPeriodAlgorithm.State> far = tenPerSecond.step(state, 0, 10 * (periods + 2), Long.MAX_VALUE);
        assertThat(far.allowed()).isFalse();
        assertThat(far.retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
        Step<RefreshPeriodAlgorithm.State> last = tenPerSecond.step(state, 0, 10 * (periods + 1), Long.MAX_VALUE);
        assertThat(last.allowed()).isTrue();
        assertThat(last.waitMicros()).isEqualTo(periods * 1_000_000);
        // debt: at a million permits per microsecond the time guard alone would not bound it
        RefreshPeriodAlgorithm huge = algorithm(Limit.MAX_COUNT, 1);
        RefreshPeriodAlgorithm.State deep =
                new RefreshPeriodAlgorithm.State(0, 0, -RefreshPeriodAlgorithm.MAX_DEBT + 5);
        Step<RefreshPeriodAlgorithm.State> tooDeep = huge.step(deep, 0, 6, Long.MAX_VALUE);
        assertThat(tooDeep.allowed()).isFalse();
        // as a try, 6 permits need the debt repaid: 4,504 refills of 10^12 later
        assertThat(tooDeep.retryAfterMicros()).isEqualTo(4504);
        assertThat(huge.step(deep, 1, 6, Long.MAX_VALUE).allowed()).isTrue();
        assertThat(huge.step(deep, 0, 5, Long.MAX_VALUE).allowed()).isTrue();
        assertThat(huge.step(null, 0, Long.MAX_VALUE, Long.MAX_VALUE).retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void extremeTimesAndCounts() {
        long year = Duration.ofDays(366).toNanos() / 1000;
        RefreshPeriodAlgorithm widest = algorithm(Limit.MAX_COUNT, year);
        Step<RefreshPeriodAlgorithm.State> atEnd = widest.step(null, Arith.MAX_TIME, Limit.MAX_COUNT, 0);
        // full again a year after MAX_TIME: outside the clock, so "never"
        assertStep(atEnd, true, 0, 0, 0, Long.MAX_VALUE);
        assertThat(widest.expiresAt(atEnd.admitted())).isEqualTo(Arith.MAX_TIME + 2 * year);
        Step<RefreshPeriodAlgorithm.State> beyond = widest.step(atEnd.admitted(), Arith.MAX_TIME, 1, Long.MAX_VALUE);
        assertThat(beyond.allowed()).isFalse();
        assertThat(beyond.retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
        assertStep(widest.step(null, 0, Limit.MAX_COUNT + 1, 0), false, 0, Limit.MAX_COUNT, Long.MAX_VALUE, 0);
    }

    @Test
    void aResetAfterTheEndOfTheClockIsNever() {
        // a debt of 2 * 10^12 permits, repaid at 5 per second after the limit is lowered: 12,680 years
        RefreshPeriodAlgorithm big = algorithm(Limit.MAX_COUNT, 1_000_000);
        RefreshPeriodAlgorithm.State state = big.step(null, 0, Limit.MAX_COUNT, 0).admitted();
        state = big.step(state, 0, Limit.MAX_COUNT, 1_000_000).admitted();
        state = big.step(state, 0, Limit.MAX_COUNT, 2_000_000).admitted();
        assertThat(state).isEqualTo(new RefreshPeriodAlgorithm.State(0, 0, -2 * Limit.MAX_COUNT));
        RefreshPeriodAlgorithm five = algorithm(5, 1_000_000);
        assertThat(five.migrate(state, big.limit(), 500_000)).isSameAs(state);
        Step<RefreshPeriodAlgorithm.State> peek = five.step(state, 500_000, 0, 0);
        assertStep(peek, true, 0, 0, 0, Long.MAX_VALUE);
        assertStep(five.step(state, 500_000, 1, 0), false, 0, 0, Long.MAX_VALUE, Long.MAX_VALUE);
        // before the fix: cycleStart saturated at Long.MAX_VALUE, minus now
        assertThat(peek.resetAfterMicros()).isNotEqualTo(Long.MAX_VALUE - 500_000);
        // the last refresh within the clock still counts
        long cyclesInTheClock = Arith.MAX_TIME / 1_000_000;
        RefreshPeriodAlgorithm.State owing = new RefreshPeriodAlgorithm.State(0, 0, -5 * (cyclesInTheClock - 1));
        assertStep(five.step(owing, 0, 0, 0), true, 0, 0, 0, cyclesInTheClock * 1_000_000);
        RefreshPeriodAlgorithm.State deeper = new RefreshPeriodAlgorithm.State(0, 0, -5 * cyclesInTheClock);
        assertStep(five.step(deeper, 0, 0, 0), true, 0, 0, 0, Long.MAX_VALUE);
    }

    @Test
    void loweredLimitKeepsWhatTheCurrentCycleHas() {
        RefreshPeriodAlgorithm.State state = tenPerSecond.step(null, 0, 2, 0).admitted(); // 8 left in cycle 0
        RefreshPeriodAlgorithm three = algorithm(3, 1_000_000);
        state = three.migrate(state, tenPerSecond.limit(), 100_000);
        assertThat(state).isEqualTo(new RefreshPeriodAlgorithm.State(0, 0, 8));
        assertStep(three.step(state, 200_000, 0, 0), true, 0, 8, 0, 0);
        Step<RefreshPeriodAlgorithm.State> five = three.step(state, 200_000, 5, 0);
        assertStep(five, true, 0, 3, 0, 0);
        // a reservation of 9: 8 now + 3 at the next refill cover it; usable at 1 s
        Step<RefreshPeriodAlgorithm.State> nine = three.step(state, 200_000, 9, 800_000);
        assertStep(nine, true, 800_000, 0, 0, 1_800_000);
        assertThat(three.step(state, 1_000_000, 0, 0).remaining()).isEqualTo(3);
        assertThat(three.expiresAt(state)).isEqualTo(2_000_000);
    }

    @Test
    void migrateRefreshPeriodRecountsFromTheOrigin() {
        RefreshPeriodAlgorithm.State state = new RefreshPeriodAlgorithm.State(500, 2, 3); // 1 s cycles
        RefreshPeriodAlgorithm tenPerMinute = algorithm(10, 60_000_000);
        // at 65 s: refreshed at the old period to 10, then cycle (65 s - 500 us) / 60 s = 1
        RefreshPeriodAlgorithm.State migrated = tenPerMinute.migrate(state, tenPerSecond.limit(), 65_000_000);
        assertThat(migrated).isEqualTo(new RefreshPeriodAlgorithm.State(500, 1, 10));
        assertThat(tenPerMinute.step(migrated, 65_000_000, 11, 0).retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
        assertThat(tenPerMinute.step(migrated, 65_000_000, 11, 60_000_000).waitMicros()).isEqualTo(55_000_500);
        // a new limit alone, or a new timeout, keeps the state as it is (changeLimitForPeriod)
        assertThat(algorithm(3, 1_000_000).migrate(state, tenPerSecond.limit(), 65_000_000)).isSameAs(state);
        RefreshPeriodAlgorithm patient = new RefreshPeriodAlgorithm(((RefreshPeriod) tenPerSecond.limit())
                .withTimeout(Duration.ofSeconds(30)));
        assertThat(patient.migrate(state, tenPerSecond.limit(), 65_000_000)).isSameAs(state);
        assertThat(tenPerMinute.migrate(null, tenPerSecond.limit(), 0)).isNull();
    }
}
