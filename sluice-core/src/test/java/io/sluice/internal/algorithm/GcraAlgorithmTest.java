package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.internal.algorithm.GcraAlgorithm.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The timelines of go-redis/redis_rate v10's rate_test.go (TestAllow, TestAllowN_IncrementZero,
 * TestAllowAtMost, TestAllowAtMost_IncrementZero, TestRetryAfter), with exact microseconds where redis_rate
 * asserts within a delta because real time passes between its calls.
 */
class GcraAlgorithmTest {

    private static final long T0 = 1_700_000_000_000_000L;
    private static final long NEVER = Long.MAX_VALUE;

    /** redis_rate.PerSecond(10): 10 req/s, burst 10. */
    private static final GcraAlgorithm PER_SECOND_10 = new GcraAlgorithm(Gcra.of(10, Duration.ofSeconds(1)));

    /** redis_rate's AllowAtMost: grant what conforms now, up to n. */
    private static String allowAtMost(BucketRun<State> run, long now, long n) {
        long granted = run.algorithm.grantable(run.state, now, n);
        if (granted == 0) {
            return "granted 0: " + BucketRun.describe(run.algorithm.step(run.state, now, 1, 0));
        }
        return "granted " + granted + ": " + run.tryAt(now, granted);
    }

    @Test
    void redisRateTestAllow() {
        BucketRun<State> run = new BucketRun<>(PER_SECOND_10);
        assertThat(run.tryAt(T0, 1)).isEqualTo("allow wait=0 remaining=9 reset=100000");
        assertThat(run.tryAt(T0, 2)).isEqualTo("allow wait=0 remaining=7 reset=300000");
        assertThat(run.tryAt(T0, 7)).isEqualTo("allow wait=0 remaining=0 reset=1000000");
        assertThat(run.tryAt(T0, 1)).isEqualTo("reject remaining=0 retry=100000 reset=1000000");
        // redis_rate: AllowN(1000) → RetryAfter ≈ 99 s, but 1000 > burst never conforms: Sluice says never
        assertThat(run.tryAt(T0, 1000)).isEqualTo("reject remaining=0 retry=" + NEVER + " reset=1000000");
        assertThat(run.state).isEqualTo(new State(T0 + 1_000_000));
    }

    @Test
    void redisRateTestAllowNIncrementZero() {
        BucketRun<State> run = new BucketRun<>(PER_SECOND_10);
        assertThat(run.tryAt(T0, 0)).isEqualTo("allow wait=0 remaining=10 reset=0");
        assertThat(run.state).isNull();
        assertThat(run.tryAt(T0, 1)).isEqualTo("allow wait=0 remaining=9 reset=100000");
        assertThat(run.tryAt(T0, 0)).isEqualTo("allow wait=0 remaining=9 reset=100000");
    }

    @Test
    void redisRateTestAllowAtMost() {
        BucketRun<State> run = new BucketRun<>(PER_SECOND_10);
        assertThat(run.tryAt(T0, 1)).isEqualTo("allow wait=0 remaining=9 reset=100000");
        assertThat(allowAtMost(run, T0, 2)).isEqualTo("granted 2: allow wait=0 remaining=7 reset=300000");
        assertThat(run.tryAt(T0, 0)).isEqualTo("allow wait=0 remaining=7 reset=300000");
        assertThat(allowAtMost(run, T0, 10)).isEqualTo("granted 7: allow wait=0 remaining=0 reset=1000000");
        assertThat(run.tryAt(T0, 0)).isEqualTo("allow wait=0 remaining=0 reset=1000000");
        // redis_rate: AllowAtMost(1000) with nothing left → RetryAfter ≈ 99 ms (emission interval − diff)
        assertThat(allowAtMost(run, T0, 1000))
                .isEqualTo("granted 0: reject remaining=0 retry=100000 reset=1000000");
        assertThat(run.tryAt(T0, 1000)).isEqualTo("reject remaining=0 retry=" + NEVER + " reset=1000000");
    }

    @Test
    void redisRateTestAllowAtMostIncrementZero() {
        BucketRun<State> run = new BucketRun<>(PER_SECOND_10);
        assertThat(run.algorithm.grantable(null, T0, 0)).isZero();
        assertThat(run.tryAt(T0, 0)).isEqualTo("allow wait=0 remaining=10 reset=0");
        assertThat(run.tryAt(T0, 1)).isEqualTo("allow wait=0 remaining=9 reset=100000");
        assertThat(run.tryAt(T0, 0)).isEqualTo("allow wait=0 remaining=9 reset=100000");
    }

    @Test
    void redisRateTestRetryAfter() {
        // Limit{Rate: 1, Period: time.Millisecond, Burst: 1}: a rejection never asks to wait more than 1 ms
        BucketRun<State> run = new BucketRun<>(new GcraAlgorithm(new Gcra("gcra", 1, Duration.ofMillis(1), 1)));
        long now = T0;
        for (int i = 0; i < 1000; i++) {
            now += 37 * (i % 11);
            Step<State> step = run.request(now, 1, 0);
            if (!step.allowed()) {
                assertThat(step.retryAfterMicros()).isBetween(1L, 1_000L);
                assertThat(run.algorithm.step(run.state, now + step.retryAfterMicros(), 1, 0).allowed()).isTrue();
                assertThat(run.algorithm.step(run.state, now + step.retryAfterMicros() - 1, 1, 0).allowed()).isFalse();
            }
        }
    }

    @Test
    void timePassingRefillsTheBurst() {
        BucketRun<State> run = new BucketRun<>(PER_SECOND_10);
        assertThat(run.tryAt(T0, 10)).isEqualTo("allow wait=0 remaining=0 reset=1000000");
        assertThat(run.tryAt(T0 + 99_999, 1)).isEqualTo("reject remaining=0 retry=1 reset=900001");
        assertThat(run.tryAt(T0 + 250_000, 0)).isEqualTo("allow wait=0 remaining=2 reset=750000");
        assertThat(run.tryAt(T0 + 250_000, 3)).isEqualTo("reject remaining=2 retry=50000 reset=750000");
        assertThat(run.tryAt(T0 + 250_000, 2)).isEqualTo("allow wait=0 remaining=0 reset=950000");
    }

    @Test
    void reservationsScheduleBehindTheTat() {
        BucketRun<State> run = new BucketRun<>(PER_SECOND_10);
        assertThat(run.tryAt(T0, 10)).isEqualTo("allow wait=0 remaining=0 reset=1000000");
        assertThat(run.reserveAt(T0, 1)).isEqualTo("allow wait=100000 remaining=0 reset=1100000");
        assertThat(run.reserveAt(T0, 2)).isEqualTo("allow wait=300000 remaining=0 reset=1300000");
        Step<State> bounded = run.request(T0, 1, 300_000);
        assertThat(BucketRun.describe(bounded)).isEqualTo("reject remaining=0 retry=400000 reset=1300000");
        assertThat(bounded.rejected()).isSameAs(run.state);
        assertThat(run.request(T0, 1, 400_000).waitMicros()).isEqualTo(400_000);
        assertThat(run.state).isEqualTo(new State(T0 + 1_400_000));
        assertThat(run.algorithm.expiresAt(run.state)).isEqualTo(T0 + 1_400_000);
    }

    @Test
    void emissionIntervalIsRoundedUpToAMicrosecond() {
        // 3 per 10 µs: T = ceil(10 / 3) = 4 µs, burst 3 → B = 12 µs
        GcraAlgorithm gcra = new GcraAlgorithm(Gcra.of(3, Duration.ofNanos(10_000)));
        BucketRun<State> run = new BucketRun<>(gcra);
        assertThat(run.tryAt(100, 3)).isEqualTo("allow wait=0 remaining=0 reset=12");
        assertThat(run.tryAt(103, 1)).isEqualTo("reject remaining=0 retry=1 reset=9");
        assertThat(run.tryAt(104, 1)).isEqualTo("allow wait=0 remaining=0 reset=12");
    }

    @Test
    void expiresAtTheTat() {
        GcraAlgorithm gcra = PER_SECOND_10;
        State state = gcra.step(null, T0, 4, 0).admitted();
        assertThat(gcra.expiresAt(state)).isEqualTo(T0 + 400_000);
        for (long permits : new long[] {0, 1, 10}) {
            Step<State> kept = gcra.step(state, T0 + 400_000, permits, 0);
            Step<State> fresh = gcra.step(null, T0 + 400_000, permits, 0);
            assertThat(BucketRun.decision(kept)).isEqualTo(BucketRun.decision(fresh));
        }
        assertThat(gcra.step(state, T0 + 399_999, 0, 0).remaining()).isEqualTo(9);
    }

    @Test
    void timeGoingBackwardsMeansNoTimePassed() {
        GcraAlgorithm gcra = PER_SECOND_10;
        State state = new State(T0 + 1_000_000);
        assertThat(BucketRun.describe(gcra.step(state, T0 - 5_000_000, 1, 0)))
                .isEqualTo("reject remaining=0 retry=5100000 reset=6000000");
        assertThat(gcra.grantable(state, T0 - 5_000_000, 3)).isZero();
    }

    @Test
    void clockBoundaries() {
        GcraAlgorithm gcra = PER_SECOND_10;
        assertThat(BucketRun.describe(gcra.step(null, 0, 10, 0))).isEqualTo("allow wait=0 remaining=0 reset=1000000");
        Step<State> last = gcra.step(null, Arith.MAX_TIME, 10, 0);
        // the TAT lies after the end of the clock: it never expires and a reservation past it is refused
        assertThat(BucketRun.describe(last)).isEqualTo("allow wait=0 remaining=0 reset=1000000");
        assertThat(gcra.expiresAt(last.admitted())).isEqualTo(NEVER);
        Step<State> reserve = gcra.step(last.admitted(), Arith.MAX_TIME, 1, Long.MAX_VALUE);
        assertThat(BucketRun.describe(reserve)).isEqualTo("reject remaining=0 retry=" + NEVER + " reset=1000000");
    }

    @Test
    void maxCountsReserveUntilTheEndOfTheClock() {
        // limit 10^12 per 366 days: T = 32 µs, burst 10^12: B = 3.2·10^13 µs
        Gcra limit = new Gcra("gcra", Limit.MAX_COUNT, Limit.MAX_DURATION, Limit.MAX_COUNT);
        GcraAlgorithm gcra = new GcraAlgorithm(limit);
        BucketRun<State> run = new BucketRun<>(gcra);
        long burstOffset = 32 * Limit.MAX_COUNT;
        assertThat(run.tryAt(0, Limit.MAX_COUNT)).isEqualTo("allow wait=0 remaining=0 reset=" + burstOffset);
        long reservations = 0;
        while (run.request(0, Limit.MAX_COUNT, Long.MAX_VALUE).allowed()) {
            reservations++;
        }
        assertThat(reservations).isEqualTo(Arith.MAX_TIME / burstOffset);
        assertThat(run.state.tat()).isEqualTo((reservations + 1) * burstOffset);
        assertThat(gcra.grantable(run.state, 0, Long.MAX_VALUE)).isZero();
        assertThat(gcra.grantable(null, 0, Long.MAX_VALUE)).isEqualTo(Limit.MAX_COUNT);
    }

    @Test
    void migrateKeepsTheTatAndTheNewLimitJudgesIt() {
        State state = PER_SECOND_10.step(null, T0, 10, 0).admitted();
        GcraAlgorithm wider = new GcraAlgorithm(new Gcra("gcra", 10, Duration.ofSeconds(1), 20));
        State migrated = wider.migrate(state, PER_SECOND_10.limit(), T0);
        assertThat(migrated).isEqualTo(state);
        assertThat(BucketRun.describe(wider.step(migrated, T0, 0, 0))).isEqualTo("allow wait=0 remaining=10 reset=1000000");
        assertThat(wider.migrate(null, PER_SECOND_10.limit(), T0)).isNull();
        assertThat(Algorithms.of(wider.limit())).isInstanceOf(GcraAlgorithm.class);
    }
}
