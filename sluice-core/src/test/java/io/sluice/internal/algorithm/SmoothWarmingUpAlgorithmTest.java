package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.SmoothBurstyAlgorithmTest.assertStep;
import static io.sluice.internal.algorithm.SmoothBurstyAlgorithmTest.measureTotalTimeMillis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.SmoothWarmingUp;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * smooth_warming_up against Guava's RateLimiterTest (google/guava, guava-tests/test/com/google/common/util/
 * concurrent/RateLimiterTest.java), at the epoch start 0 and at an absolute start; then the SPI fields.
 */
class SmoothWarmingUpAlgorithmTest {
    private static final long EPOCH_2024 = 1_704_067_200_000_000L;

    private static SmoothWarmingUp warmingUp(double permitsPerSecond, long warmupMillis, double coldFactor) {
        return SmoothWarmingUp.of(permitsPerSecond, Duration.ofMillis(warmupMillis)).withColdFactor(coldFactor);
    }

    private static SmoothFakeStopwatch limiter(double permitsPerSecond, long warmupMillis, double coldFactor,
                                               long start) {
        return new SmoothFakeStopwatch(warmingUp(permitsPerSecond, warmupMillis, coldFactor), start);
    }

    private static void acquire(SmoothFakeStopwatch limiter, int times) {
        for (int i = 0; i < times; i++) {
            limiter.acquire();
        }
    }

    // ---- Guava's RateLimiterTest timelines ----

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaWarmUp(long start) {
        SmoothFakeStopwatch limiter = limiter(2.0, 4000, 3.0, start);
        acquire(limiter, 8); // #1
        limiter.sleepMillis(500); // #2: to repay for the last acquire
        limiter.sleepMillis(4000); // #3: becomes cold again
        acquire(limiter, 8); // #4
        limiter.sleepMillis(500); // #5: to repay for the last acquire
        limiter.sleepMillis(2000); // #6: didn't get cold! It would take another 2 seconds to go cold
        acquire(limiter, 8); // #7
        assertThat(limiter.readEventsAndClear()).isEqualTo(String.join(", ",
                "R0.00, R1.38, R1.13, R0.88, R0.63, R0.50, R0.50, R0.50", // #1
                "U0.50", // #2
                "U4.00", // #3
                "R0.00, R1.38, R1.13, R0.88, R0.63, R0.50, R0.50, R0.50", // #4
                "U0.50", // #5
                "U2.00", // #6
                "R0.00, R0.50, R0.50, R0.50, R0.50, R0.50, R0.50, R0.50")); // #7
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaWarmUpWithColdFactor(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, 4000, 10.0, start);
        acquire(limiter, 8); // #1
        limiter.sleepMillis(200); // #2: to repay for the last acquire
        limiter.sleepMillis(4000); // #3: becomes cold again
        acquire(limiter, 8); // #4
        limiter.sleepMillis(200); // #5: to repay for the last acquire
        limiter.sleepMillis(1000); // #6: still warm! It would take another 3 seconds to go cold
        acquire(limiter, 8); // #7
        assertThat(limiter.readEventsAndClear()).isEqualTo(String.join(", ",
                "R0.00, R1.75, R1.26, R0.76, R0.30, R0.20, R0.20, R0.20", // #1
                "U0.20", // #2
                "U4.00", // #3
                "R0.00, R1.75, R1.26, R0.76, R0.30, R0.20, R0.20, R0.20", // #4
                "U0.20", // #5
                "U1.00", // #6
                "R0.00, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20")); // #7
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaWarmUpWithColdFactor1(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, 4000, 1.0, start);
        acquire(limiter, 8); // #1
        limiter.sleepMillis(340); // #2
        acquire(limiter, 8); // #3
        assertThat(limiter.readEventsAndClear()).isEqualTo(String.join(", ",
                "R0.00, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20", // #1
                "U0.34", // #2
                "R0.00, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20, R0.20")); // #3
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaWarmUpAndUpdate(long start) {
        SmoothFakeStopwatch limiter = limiter(2.0, 4000, 3.0, start);
        acquire(limiter, 8); // #1
        limiter.sleepMillis(4500); // #2: back to cold state (warmup period + repay last acquire)
        acquire(limiter, 3); // #3, only three steps, we're somewhere in the warmup period
        limiter.setLimit(warmingUp(4.0, 4000, 3.0)); // double the rate!
        limiter.acquire(); // #4, we repay the debt of the last acquire (imposed by the old rate)
        acquire(limiter, 4); // #5
        limiter.sleepMillis(4250); // #6, back to cold state (warmup period + repay last acquire)
        acquire(limiter, 11); // #7, showing off the warmup starting from totally cold
        // make sure the areas (times) remain the same, while permits are different
        assertThat(limiter.readEventsAndClear()).isEqualTo(String.join(", ",
                "R0.00, R1.38, R1.13, R0.88, R0.63, R0.50, R0.50, R0.50", // #1
                "U4.50", // #2
                "R0.00, R1.38, R1.13", // #3, after that the rate changes
                "R0.88", // #4, this is what the throttling would be with the old rate
                "R0.34, R0.28, R0.25, R0.25", // #5
                "U4.25", // #6
                "R0.00, R0.72, R0.66, R0.59, R0.53, R0.47, R0.41", // #7
                "R0.34, R0.28, R0.25, R0.25")); // #7 (cont.), note, this matches #5
    }

    @ParameterizedTest
    @ValueSource(longs = {0, EPOCH_2024})
    void guavaWarmUpAndUpdateWithColdFactor(long start) {
        SmoothFakeStopwatch limiter = limiter(5.0, 4000, 10.0, start);
        acquire(limiter, 8); // #1
        limiter.sleepMillis(4200); // #2: back to cold state (warmup period + repay last acquire)
        acquire(limiter, 3); // #3, only three steps, we're somewhere in the warmup period
        limiter.setLimit(warmingUp(10.0, 4000, 10.0)); // double the rate!
        limiter.acquire(); // #4, we repay the debt of the last acquire (imposed by the old rate)
        acquire(limiter, 4); // #5
        limiter.sleepMillis(4100); // #6, back to cold state (warmup period + repay last acquire)
        acquire(limiter, 11); // #7, showing off the warmup starting from totally cold
        assertThat(limiter.readEventsAndClear()).isEqualTo(String.join(", ",
                "R0.00, R1.75, R1.26, R0.76, R0.30, R0.20, R0.20, R0.20", // #1
                "U4.20", // #2
                "R0.00, R1.75, R1.26", // #3, after that the rate changes
                "R0.76", // #4, this is what the throttling would be with the old rate
                "R0.20, R0.10, R0.10, R0.10", // #5
                "U4.10", // #6
                "R0.00, R0.94, R0.81, R0.69, R0.57, R0.44, R0.32", // #7
                "R0.20, R0.10, R0.10, R0.10")); // #7 (cont.), note, this matches #5
    }

    /** Guava's testTimeToWarmUpIsHonouredEvenWithWeights (fewer trials, seeded). */
    @Test
    void guavaTimeToWarmUpIsHonouredEvenWithWeights() {
        Random random = new Random(7);
        int warmupPermits = 10;
        for (int trial = 0; trial < 20; trial++) {
            for (double coldFactor : new double[] {2.0, 3.0, 10.0}) {
                for (double qps : new double[] {4.0, 2.0, 1.0, 0.5, 0.1}) {
                    // if warmupPermits = maxPermits - thresholdPermits then
                    // warmupPeriod = (1 + coldFactor) * warmupPermits * stableInterval / 2
                    long warmupMillis = (long) ((1 + coldFactor) * warmupPermits / (2.0 * qps) * 1000.0);
                    SmoothFakeStopwatch limiter = limiter(qps, warmupMillis, coldFactor, EPOCH_2024 + trial);
                    assertThat(measureTotalTimeMillis(limiter, warmupPermits, random)).isEqualTo(warmupMillis);
                }
            }
        }
    }

    @Test
    void guavaSimpleRateUpdateValidation() {
        SmoothWarmingUp limit = SmoothWarmingUp.of(5.0, Duration.ofSeconds(5));
        assertThat(limit.withPermitsPerSecond(10.0).permitsPerSecond()).isEqualTo(10.0);
        assertThatThrownBy(() -> limit.withPermitsPerSecond(0.0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> limit.withPermitsPerSecond(-10.0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> limit.withWarmup(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    // ---- SPI fields ----

    /** testWarmUp's limiter: stable 500,000 us, threshold 4, maxPermits 8, coolDown 500,000 us. */
    private final SmoothWarmingUpAlgorithm twoPerSecond = new SmoothWarmingUpAlgorithm(warmingUp(2.0, 4000, 3.0));

    @Test
    void freshKeyIsColdAndFull() {
        assertThat(twoPerSecond.maxPermits).isEqualTo(8.0);
        Step<SmoothAlgorithm.State> first = twoPerSecond.step(null, 100, 1, 0);
        // 7 saved permits remain; the first permit cost 1.375 s; full again after that + 1 permit of cooling
        assertStep(first, true, 0, 0, 0, 1_375_000 + 500_000);
        assertThat(first.admitted()).isEqualTo(new SmoothAlgorithm.State(7.0, 1_375_100));
        Step<SmoothAlgorithm.State> second = twoPerSecond.step(first.admitted(), 100, 1, 1_000_000);
        assertStep(second, false, 0, 0, 1_375_000, 1_875_000); // retry-after: until it passes as a try
        assertThat(twoPerSecond.step(null, 100, 0, 0).remaining()).isEqualTo(8);
        assertThat(twoPerSecond.step(null, 100, 0, 0).resetAfterMicros()).isZero();
    }

    @Test
    void bigRequestCrossesTheThreshold() {
        // 6 permits from a cold key: the trapezoid from 8 down to 4 (4 s) plus 2 stable permits (1 s)
        Step<SmoothAlgorithm.State> step = twoPerSecond.step(null, 0, 6, 0);
        assertThat(step.admitted()).isEqualTo(new SmoothAlgorithm.State(2.0, 5_000_000));
        // 10 permits: all 8 stored (4 s + 2 s) and 2 fresh (1 s)
        assertThat(twoPerSecond.step(null, 0, 10, 0).admitted()).isEqualTo(new SmoothAlgorithm.State(0.0, 7_000_000));
    }

    @Test
    void expiryIsExact() {
        SmoothAlgorithm.State state = twoPerSecond.step(null, 0, 3, 0).admitted(); // 5 left, ticket 3.375 s
        long expiresAt = twoPerSecond.expiresAt(state);
        assertThat(expiresAt).isEqualTo(3_375_000 + 3 * 500_000);
        for (long permits : new long[] {0, 1, 5, 20}) {
            for (long maxWait : new long[] {0, 1_000_000, Long.MAX_VALUE}) {
                for (long t : new long[] {expiresAt, expiresAt + 12_345}) {
                    Step<SmoothAlgorithm.State> old = twoPerSecond.step(state, t, permits, maxWait);
                    Step<SmoothAlgorithm.State> fresh = twoPerSecond.step(null, t, permits, maxWait);
                    assertStep(old, fresh.allowed(), fresh.waitMicros(), fresh.remaining(),
                            fresh.retryAfterMicros(), fresh.resetAfterMicros());
                    if (permits > 0) { // an inspection commits its input: the old state or nothing
                        assertThat(old.admitted()).isEqualTo(fresh.admitted());
                    }
                }
            }
        }
        assertThat(twoPerSecond.resync(state, expiresAt - 1).storedPermits()).isLessThan(8.0);
    }

    @Test
    void migrateScalesStoredPermits() {
        SmoothWarmingUp two = warmingUp(2.0, 4000, 3.0);
        SmoothWarmingUpAlgorithm four = new SmoothWarmingUpAlgorithm(two.withPermitsPerSecond(4.0)); // max 16
        assertThat(four.maxPermits).isEqualTo(16.0);
        SmoothAlgorithm.State state = new SmoothAlgorithm.State(5.0, 1_000_000);
        // 1 s idle at the old coolDown (500,000) adds 2, then 7 * 16 / 8
        assertThat(four.migrate(state, two, 2_000_000)).isEqualTo(new SmoothAlgorithm.State(14.0, 2_000_000));
        // a new warmup recomputes maxPermits like Guava's doSetRate: 8 s gives 16 as well
        SmoothWarmingUpAlgorithm longer = new SmoothWarmingUpAlgorithm(warmingUp(2.0, 8000, 3.0));
        assertThat(longer.migrate(state, two, 0)).isEqualTo(new SmoothAlgorithm.State(10.0, 1_000_000));
        // cold factor 1: threshold 4, maxPermits 4 + 8e6 / 1e6 = 12
        SmoothWarmingUpAlgorithm flat = new SmoothWarmingUpAlgorithm(warmingUp(2.0, 4000, 1.0));
        assertThat(flat.maxPermits).isEqualTo(12.0);
        assertThat(flat.migrate(state, two, 0)).isEqualTo(new SmoothAlgorithm.State(7.5, 1_000_000));
        assertThat(flat.migrate(state, two.named("other"), 0)).isEqualTo(new SmoothAlgorithm.State(7.5, 1_000_000));
        assertThat(twoPerSecond.migrate(state, two.named("other"), 9_000_000)).isSameAs(state);
    }

    @Test
    void extremeParameters() {
        SmoothWarmingUpAlgorithm widest = new SmoothWarmingUpAlgorithm(SmoothWarmingUp.of(1_000_000.0,
                Duration.ofDays(366)).withColdFactor(1000.0));
        Step<SmoothAlgorithm.State> step = widest.step(null, Arith.MAX_TIME, Long.MAX_VALUE, 0);
        assertThat(step.allowed()).isTrue();
        assertThat(step.admitted().nextFreeTicketMicros()).isEqualTo(Arith.MAX_TIME);
        assertThat(step.admitted().storedPermits()).isZero();
        SmoothWarmingUpAlgorithm narrowest = new SmoothWarmingUpAlgorithm(SmoothWarmingUp.of(1.0 / 31_622_400,
                Duration.ofNanos(1000)));
        Step<SmoothAlgorithm.State> slow = narrowest.step(null, 0, 1, 0);
        assertThat(slow.allowed()).isTrue();
        assertThat(slow.admitted().nextFreeTicketMicros()).isEqualTo(31_622_399_999_999L);
        assertThat(narrowest.step(slow.admitted(), 1, 1, 0).allowed()).isFalse();
    }
}
