package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Limit;
import io.sluice.SmoothBursty;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * smooth_bursty against Guava's RateLimiterTest (google/guava, guava-tests/test/com/google/common/util/
 * concurrent/RateLimiterTest.java): each Guava timeline is replayed with the same event log, at the epoch
 * start 0 and at a realistic absolute start (Guava's stopwatch counts from creation; ours is absolute).
 * Then the SPI fields and edge cases.
 */
class SmoothBurstyAlgorithmTest {
    private static final long SECOND = 1_000_000;
    private static final long EPOCH_2024 = 1_704_067_200_000_000L;

    private static SmoothFakeStopwatch limiter(double permitsPerSecond, long start) {
        return new SmoothFakeStopwatch(SmoothBursty.of(permitsPerSecond), start);
    }

    // ---- Guava's RateLimiterTest timelines ----

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaSimple(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, start);
        limiter.acquire(); // R0.00, since it's the first request
        limiter.acquire(); // R0.20
        limiter.acquire(); // R0.20
        assertThat(limiter.readEventsAndClear()).isEqualTo("R0.00, R0.20, R0.20");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaImmediateTryAcquire(long start) {
        SmoothFakeStopwatch limiter = limiter(1.0, start);
        assertThat(limiter.tryAcquire()).isTrue();
        assertThat(limiter.tryAcquire()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void slowestRateCanAcquireExactlyOncePer366Days(long start) {
        // Guava's testDoubleMinValueCanAcquireExactlyOnce, at Sluice's slowest valid rate (one per 366 days).
        SmoothFakeStopwatch limiter = limiter(1.0 / 31_622_400, start);
        assertThat(limiter.tryAcquire()).isTrue();
        assertThat(limiter.tryAcquire()).isFalse();
        limiter.sleepMillis(Integer.MAX_VALUE);
        assertThat(limiter.tryAcquire()).isFalse();
        // 1e6 / (1 / 31,622,400) is 31,622,399,999,999.996 in doubles, and Guava's (long) cast truncates it
        assertThat(limiter.state().nextFreeTicketMicros()).isEqualTo(start + 31_622_399_999_999L);
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaSimpleWithWait(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, start);
        limiter.acquire(); // R0.00
        limiter.sleepMillis(200); // U0.20, we are ready for the next request...
        limiter.acquire(); // R0.00, ...which is granted immediately
        limiter.acquire(); // R0.20
        assertThat(limiter.readEventsAndClear()).isEqualTo("R0.00, U0.20, R0.00, R0.20");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaSimpleAcquireReturnValues(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, start);
        assertThat(limiter.acquire()).isEqualTo(0.0);
        limiter.sleepMillis(200);
        assertThat(limiter.acquire()).isEqualTo(0.0);
        assertThat(limiter.acquire()).isEqualTo(0.2);
        assertThat(limiter.readEventsAndClear()).isEqualTo("R0.00, U0.20, R0.00, R0.20");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaSimpleAcquireEarliestAvailableIsInPast(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, start);
        assertThat(limiter.acquire()).isEqualTo(0.0);
        limiter.sleepMillis(400);
        assertThat(limiter.acquire()).isEqualTo(0.0);
        assertThat(limiter.acquire()).isEqualTo(0.0);
        assertThat(limiter.acquire()).isEqualTo(0.2);
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaOneSecondBurst(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, start);
        limiter.sleepMillis(1000); // max capacity reached
        limiter.sleepMillis(1000); // this makes no difference
        limiter.acquire(1); // R0.00, since it's the first request
        limiter.acquire(1); // R0.00, from capacity
        limiter.acquire(3); // R0.00, from capacity
        limiter.acquire(1); // R0.00, concluding a burst of 5 permits
        limiter.acquire(); // R0.20, capacity exhausted
        assertThat(limiter.readEventsAndClear()).isEqualTo("U1.00, U1.00, R0.00, R0.00, R0.00, R0.00, R0.20");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaBurstyAndUpdate(long start) {
        SmoothFakeStopwatch limiter = limiter(1.0, start);
        limiter.acquire(1); // no wait
        limiter.acquire(1); // R1.00, to repay previous
        limiter.setLimit(SmoothBursty.of(2.0)); // update the rate!
        limiter.acquire(1); // R1.00, to repay previous (the previous was under the old rate!)
        limiter.acquire(2); // R0.50, to repay previous (now the rate takes effect)
        limiter.acquire(4); // R1.00, to repay previous
        limiter.acquire(1); // R2.00, to repay previous
        assertThat(limiter.readEventsAndClear()).isEqualTo("R0.00, R1.00, R1.00, R0.50, R1.00, R2.00");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaTryAcquireNoWaitAllowed(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, start);
        assertThat(limiter.tryAcquire(1, 0)).isTrue();
        assertThat(limiter.tryAcquire(1, 0)).isFalse();
        assertThat(limiter.tryAcquire(1, 0)).isFalse();
        limiter.sleepMillis(100);
        assertThat(limiter.tryAcquire(1, 0)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaTryAcquireSomeWaitAllowed(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, start);
        assertThat(limiter.tryAcquire(1, 0)).isTrue();
        assertThat(limiter.tryAcquire(1, 200_000)).isTrue();
        assertThat(limiter.tryAcquire(1, 100_000)).isFalse();
        limiter.sleepMillis(100);
        assertThat(limiter.tryAcquire(1, 100_000)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaTryAcquireOverflow(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, start);
        assertThat(limiter.tryAcquire(1, 0)).isTrue();
        limiter.sleepMillis(100);
        assertThat(limiter.tryAcquire(1, Long.MAX_VALUE)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaTryAcquireNegative(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, start);
        assertThat(limiter.tryAcquire(5, 0)).isTrue();
        limiter.sleepMillis(900);
        assertThat(limiter.tryAcquire(1, Long.MIN_VALUE)).isFalse();
        limiter.sleepMillis(100);
        assertThat(limiter.tryAcquire(1, -1)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaSimpleWeights(long start) {
        SmoothFakeStopwatch limiter = limiter(1.0, start);
        limiter.acquire(1); // no wait
        limiter.acquire(1); // R1.00, to repay previous
        limiter.acquire(2); // R1.00, to repay previous
        limiter.acquire(4); // R2.00, to repay previous
        limiter.acquire(8); // R4.00, to repay previous
        limiter.acquire(1); // R8.00, to repay previous
        assertThat(limiter.readEventsAndClear()).isEqualTo("R0.00, R1.00, R1.00, R2.00, R4.00, R8.00");
    }

    /** Guava's testWeNeverGetABurstMoreThanOneSec, with a seeded Random. */
    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaWeNeverGetABurstMoreThanOneSec(long start) {
        SmoothFakeStopwatch limiter = limiter(1.0, start);
        Random random = new Random(42);
        for (int rate : new int[] {1000, 1, 10, 1000000, 10, 1}) {
            limiter.sleepMillis(rate * 1000L);
            limiter.setLimit(SmoothBursty.of(rate));
            assertThat(measureTotalTimeMillis(limiter, rate, random)).isLessThanOrEqualTo(1000);
            assertThat(measureTotalTimeMillis(limiter, rate, random)).isGreaterThanOrEqualTo(1000);
        }
    }

    /** Guava's measureTotalTimeMillis: random splits of {@code permits}, then one acquire to repay. */
    static long measureTotalTimeMillis(SmoothFakeStopwatch limiter, int permits, Random random) {
        long startTime = limiter.now();
        while (permits > 0) {
            int next = Math.max(1, random.nextInt(permits));
            permits -= next;
            limiter.acquire(next);
        }
        limiter.acquire(1);
        return (limiter.now() - startTime) / 1000;
    }

    @Test
    void guavaRejectsWhatGuavaRejects() {
        // testSimpleRateUpdate / testInfinity_*: rates must be positive and finite here (infinite rates n/a)
        assertThatThrownBy(() -> SmoothBursty.of(0.0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SmoothBursty.of(-10.0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SmoothBursty.of(Double.POSITIVE_INFINITY))
                .isInstanceOf(IllegalArgumentException.class);
    }

    // ---- SPI fields ----

    private final SmoothBurstyAlgorithm fivePerSecond = new SmoothBurstyAlgorithm(SmoothBursty.of(5.0));

    @Test
    void freshKeyAdmitsAndPaysLater() {
        SmoothAlgorithm.State created = fivePerSecond.fresh(1000); // Guava's RateLimiter.create at 1000 µs
        Step<SmoothAlgorithm.State> first = fivePerSecond.step(created, 1000, 1, 0);
        // admitted, no wait, nothing saved; full (5 saved) 0.2 s + 1 s later
        assertStep(first, true, 0, 0, 0, 1_200_000);
        assertThat(first.admitted()).isEqualTo(new SmoothAlgorithm.State(0.0, 201_000));
        assertThat(first.rejected()).isSameAs(created);
        assertThat(first.lease()).isEqualTo(-1);

        Step<SmoothAlgorithm.State> second = fivePerSecond.step(first.admitted(), 1000, 1, 0);
        assertStep(second, false, 0, 0, 200_000, 1_200_000);
        assertThat(second.rejected()).isSameAs(first.admitted());
        assertThat(second.admitted()).isNull();

        // with 150 ms of patience it is rejected; retry-after is for a try (200 ms); as a reservation it waits 200 ms
        assertThat(fivePerSecond.step(first.admitted(), 1000, 1, 150_000).retryAfterMicros()).isEqualTo(200_000);
        Step<SmoothAlgorithm.State> reserved = fivePerSecond.step(first.admitted(), 1000, 1, 200_000);
        assertStep(reserved, true, 200_000, 0, 0, 1_400_000);
        assertThat(reserved.admitted()).isEqualTo(new SmoothAlgorithm.State(0.0, 401_000));
    }

    @Test
    void remainingCountsSavedPermits() {
        SmoothAlgorithm.State idle = new SmoothAlgorithm.State(0.0, 0);
        // 0.7 s idle: 3.5 saved; a request for 2 leaves 1.5, reported as 1; full 0.7 s later
        Step<SmoothAlgorithm.State> step = fivePerSecond.step(idle, 700_000, 2, 0);
        assertStep(step, true, 0, 1, 0, 700_000);
        assertThat(step.admitted()).isEqualTo(new SmoothAlgorithm.State(1.5, 700_000));
        // taking more than is saved: admitted at once, the excess pushes the ticket
        Step<SmoothAlgorithm.State> big = fivePerSecond.step(step.admitted(), 700_000, 4, 0);
        assertStep(big, true, 0, 0, 0, 500_000 + 1_000_000);
        assertThat(big.admitted()).isEqualTo(new SmoothAlgorithm.State(0.0, 1_200_000));
    }

    @Test
    void inspectionCommitsNothing() {
        Step<SmoothAlgorithm.State> onNull = fivePerSecond.step(null, 5, 0, 0);
        assertStep(onNull, true, 0, 5, 0, 0); // no state: idle, a full burst saved
        assertThat(onNull.admitted()).isNull();
        assertThat(onNull.rejected()).isNull();

        SmoothAlgorithm.State busy = new SmoothAlgorithm.State(0.0, 300_000);
        Step<SmoothAlgorithm.State> whileBusy = fivePerSecond.step(busy, 100_000, 0, 0);
        assertStep(whileBusy, true, 0, 0, 0, 1_200_000);
        assertThat(whileBusy.admitted()).isSameAs(busy);

        SmoothAlgorithm.State idle = new SmoothAlgorithm.State(1.0, 0);
        Step<SmoothAlgorithm.State> whileIdle = fivePerSecond.step(idle, 500_000, 0, 0);
        assertStep(whileIdle, true, 0, 3, 0, 300_000);
        assertThat(whileIdle.admitted()).isSameAs(idle);
    }

    @Test
    void grantableIsAllOrNothingOnTheTicket() {
        assertThat(fivePerSecond.grantable(null, 0, Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
        SmoothAlgorithm.State busy = new SmoothAlgorithm.State(0.0, 300_000);
        assertThat(fivePerSecond.grantable(busy, 299_999, 7)).isZero();
        assertThat(fivePerSecond.grantable(busy, 300_000, 7)).isEqualTo(7);
        assertThat(fivePerSecond.grantable(busy, 300_000, 0)).isZero();
    }

    @Test
    void timeGoingBackwardsIsAPendingTicket() {
        SmoothAlgorithm.State state = fivePerSecond.step(fivePerSecond.fresh(1_000_000), 1_000_000, 1, 0).admitted();
        Step<SmoothAlgorithm.State> earlier = fivePerSecond.step(state, 900_000, 1, 0);
        assertStep(earlier, false, 0, 0, 300_000, 1_300_000);
        Step<SmoothAlgorithm.State> waiting = fivePerSecond.step(state, 900_000, 1, Long.MAX_VALUE);
        assertStep(waiting, true, 300_000, 0, 0, 1_500_000);
        assertThat(waiting.admitted().storedPermits()).isZero();
    }

    @Test
    void expiresWhenFullAndComesBackFull() {
        SmoothAlgorithm.State state = fivePerSecond.step(fivePerSecond.fresh(0), 0, 1, 0).admitted(); // ticket 200,000
        assertThat(fivePerSecond.expiresAt(state)).isEqualTo(1_200_000);
        SmoothAlgorithm.State full = fivePerSecond.step(state, 1_200_000, 0, 0).admitted();
        assertThat(fivePerSecond.step(state, 1_199_999, 0, 0).remaining()).isEqualTo(4);
        assertThat(fivePerSecond.step(full, 1_200_000, 0, 0).remaining()).isEqualTo(5);
        // dropped once full, the key serves the saved burst at once, as Guava's idle limiter does: no state is
        // an idle, full key (before, it came back as a new limiter with nothing saved)
        for (long at : new long[] {1_200_000, 60_000_000}) {
            Step<SmoothAlgorithm.State> old = fivePerSecond.step(state, at, 3, 0);
            Step<SmoothAlgorithm.State> dropped = fivePerSecond.step(null, at, 3, 0);
            assertThat(BucketRun.decision(dropped)).isEqualTo(BucketRun.decision(old));
            assertThat(dropped.admitted()).isEqualTo(old.admitted()).isEqualTo(new SmoothAlgorithm.State(2.0, at));
            Step<SmoothAlgorithm.State> rest = fivePerSecond.step(dropped.admitted(), at, 2, 0);
            assertStep(rest, true, 0, 0, 0, 1_000_000);
        }
    }

    @Test
    void aNewKeyIsAnIdleOneWithAFullBurst() {
        // Guava's testOneSecondBurst on a key without state: 5 saved permits spent at once, then the stable rate
        BucketRun<SmoothAlgorithm.State> run = new BucketRun<>(fivePerSecond);
        assertThat(run.tryAt(0, 1)).isEqualTo("allow wait=0 remaining=4 reset=200000");
        assertThat(run.tryAt(0, 1)).isEqualTo("allow wait=0 remaining=3 reset=400000");
        assertThat(run.tryAt(0, 3)).isEqualTo("allow wait=0 remaining=0 reset=1000000");
        assertThat(run.tryAt(0, 1)).isEqualTo("allow wait=0 remaining=0 reset=1200000"); // pays later
        assertThat(run.tryAt(0, 1)).isEqualTo("reject remaining=0 retry=200000 reset=1200000");
    }

    @Test
    void zeroBurstExpiresExactlyAtTheTicket() {
        SmoothBurstyAlgorithm noBurst = new SmoothBurstyAlgorithm(SmoothBursty.of(5.0).withMaxBurstSeconds(0.0));
        SmoothAlgorithm.State state = noBurst.step(null, 0, 1, 0).admitted();
        assertThat(noBurst.expiresAt(state)).isEqualTo(200_000);
        assertThat(noBurst.step(state, 10 * SECOND, 2, 0).admitted())
                .isEqualTo(noBurst.step(null, 10 * SECOND, 2, 0).admitted());
    }

    @Test
    void fractionalRefillIsExactToTheMicrosecond() {
        // 3/s: interval 333,333.33 us; 1 permit after 333,334 us of idling but not after 333,333
        SmoothBurstyAlgorithm three = new SmoothBurstyAlgorithm(SmoothBursty.of(3.0).withMaxBurstSeconds(1.0 / 3));
        SmoothAlgorithm.State empty = new SmoothAlgorithm.State(0.0, 0);
        long full = three.expiresAt(empty);
        assertThat(three.resync(empty, full).storedPermits()).isEqualTo(three.maxPermits);
        assertThat(three.resync(empty, full - 1).storedPermits()).isLessThan(three.maxPermits);
    }

    @Test
    void extremeTimesAndCounts() {
        // now = 0 and now = MAX_TIME
        assertStep(fivePerSecond.step(null, 0, 1, 0), true, 0, 4, 0, 200_000);
        Step<SmoothAlgorithm.State> atEnd = fivePerSecond.step(null, Arith.MAX_TIME, Limit.MAX_COUNT, 0);
        assertThat(atEnd.allowed()).isTrue();
        assertThat(atEnd.admitted().nextFreeTicketMicros()).isEqualTo(Arith.MAX_TIME);
        // a huge reservation saturates at the end of the clock; an unbounded wait is then MAX_TIME - now
        SmoothAlgorithm.State huge = fivePerSecond.step(fivePerSecond.fresh(0), 0, (1L << 53) - 1, 0).admitted();
        assertThat(huge).isEqualTo(new SmoothAlgorithm.State(0.0, Arith.MAX_TIME));
        // full again only past the end of the clock: "never", as the Lua port reports it too
        assertStep(fivePerSecond.step(huge, 7, 1, 0), false, 0, 0, Arith.MAX_TIME - 7, Arith.NEVER);
        assertThat(fivePerSecond.step(huge, 7, 1, Long.MAX_VALUE).waitMicros()).isEqualTo(Arith.MAX_TIME - 7);
        // slowest and fastest valid rates, largest burst
        SmoothBurstyAlgorithm fastest = new SmoothBurstyAlgorithm(
                SmoothBursty.of(1_000_000.0).withMaxBurstSeconds(31_622_400.0));
        SmoothAlgorithm.State full = fastest.resync(fastest.fresh(0), Arith.MAX_TIME);
        assertThat(full.storedPermits()).isEqualTo(31_622_400.0 * 1_000_000.0);
        Step<SmoothAlgorithm.State> burst = fastest.step(full, Arith.MAX_TIME, Long.MAX_VALUE, 0);
        assertThat(burst.allowed()).isTrue();
        assertThat(burst.admitted().nextFreeTicketMicros()).isEqualTo(Arith.MAX_TIME);
        SmoothBurstyAlgorithm slowest = new SmoothBurstyAlgorithm(SmoothBursty.of(1.0 / 31_622_400));
        Step<SmoothAlgorithm.State> first = slowest.step(null, Arith.MAX_TIME - 1, 1, 0);
        assertThat(first.allowed()).isTrue();
        assertThat(first.admitted().nextFreeTicketMicros()).isEqualTo(Arith.MAX_TIME);
    }

    @Test
    void migrateIsGuavaSetRate() {
        SmoothBursty two = SmoothBursty.of(2.0).withMaxBurstSeconds(2.0); // maxPermits 4
        SmoothAlgorithm.State state = new SmoothAlgorithm.State(1.0, 1_000_000);
        SmoothBurstyAlgorithm eight = new SmoothBurstyAlgorithm(two.withPermitsPerSecond(4.0)); // maxPermits 8
        // resync at the old rate first: 0.5 s idle at 2/s = +1 permit, then scaled by 8/4
        assertThat(eight.migrate(state, two, 1_500_000)).isEqualTo(new SmoothAlgorithm.State(4.0, 1_500_000));
        // a pending ticket is kept (already paid at the old rate)
        assertThat(eight.migrate(state, two, 500_000)).isEqualTo(new SmoothAlgorithm.State(2.0, 1_000_000));
        // from a zero burst Guava's doSetRate restarts from 0 stored permits
        SmoothBursty none = two.withMaxBurstSeconds(0.0);
        assertThat(eight.migrate(new SmoothAlgorithm.State(0.0, 0), none, 9_000_000))
                .isEqualTo(new SmoothAlgorithm.State(0.0, 9_000_000));
        // a change of the burst length scales like a rate change: 2 of 4 -> 3 of 6
        SmoothBurstyAlgorithm longer = new SmoothBurstyAlgorithm(two.withMaxBurstSeconds(3.0));
        assertThat(longer.migrate(new SmoothAlgorithm.State(2.0, 0), two, 0))
                .isEqualTo(new SmoothAlgorithm.State(3.0, 0));
        // same parameters (only the name changed): untouched; null stays null
        SmoothBurstyAlgorithm same = new SmoothBurstyAlgorithm(two.named("renamed"));
        assertThat(same.migrate(state, two, 9_000_000)).isSameAs(state);
        assertThat(eight.migrate(null, two, 0)).isNull();
    }

    static void assertStep(Step<?> step, boolean allowed, long wait, long remaining, long retryAfter, long resetAfter) {
        assertThat(new long[] {step.allowed() ? 1 : 0, step.waitMicros(), step.remaining(), step.retryAfterMicros(),
                step.resetAfterMicros()})
                .as("allowed, wait, remaining, retryAfter, resetAfter")
                .containsExactly(allowed ? 1 : 0, wait, remaining, retryAfter, resetAfter);
    }
}
