package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.SEC;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.assertStep;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.micros;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.SlidingWindow;
import io.sluice.internal.algorithm.SlidingWindowAlgorithm.State;
import java.math.BigInteger;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SlidingWindowAlgorithmTest {

    private static SlidingWindowAlgorithm algorithm(long limit, Duration window) {
        return new SlidingWindowAlgorithm(SlidingWindow.of(limit, window));
    }

    /**
     * Alex Xu, System Design Interview, ch. 4 "Sliding window counter": 7 per minute, 5 in the previous minute,
     * 3 in the current, a request 30 % into it: 3 + 5 × 0.7 = 6.5, rounded down to 6, so it passes "and the
     * limit will be reached after receiving one more request".
     */
    @Test
    void systemDesignInterviewExample() {
        SlidingWindowAlgorithm sw = algorithm(7, seconds(60));
        State state = new State(60 * SEC, 5, 3);
        long resetAfter = 87 * SEC + 1; // 4 permits, as the previous window's, fade out 45 s + 1 µs into it

        Step<State> passes = sw.step(state, 78 * SEC, 1, 0);
        assertStep(passes, true, 0, 0, resetAfter);
        assertThat(passes.admitted()).isEqualTo(new State(60 * SEC, 5, 4));

        Step<State> full = sw.step(passes.admitted(), 78 * SEC, 1, 0);
        assertStep(full, false, 0, 6 * SEC + 1, resetAfter);
        assertThat(sw.step(passes.admitted(), 84 * SEC, 1, 0).allowed()).as("at 24 s: floor(5·36/60) = 3").isFalse();
        assertThat(sw.step(passes.admitted(), 84 * SEC + 1, 1, 0).allowed()).isTrue();
    }

    /**
     * Cloudflare's blog post ("Counting things, a lot of different things", 2017): 50 per minute, 42 in the
     * previous minute, 18 in the current, 15 s into it: 42 × 45/60 + 18 = 49.5, here rounded down to 49.
     */
    @Test
    void cloudflareExample() {
        SlidingWindowAlgorithm sw = algorithm(50, seconds(60));
        State state = new State(60 * SEC, 42, 18);

        Step<State> last = sw.step(state, 75 * SEC, 1, 0);
        assertThat(last.allowed()).isTrue();
        assertThat(last.remaining()).isZero();

        // 31 · W / 42 = 44 285 714.28 µs of the previous window may remain: e = 15 714 286 µs.
        Step<State> next = sw.step(last.admitted(), 75 * SEC, 1, 0);
        assertThat(next.allowed()).isFalse();
        assertThat(next.retryAfterMicros()).isEqualTo(714_286);
    }

    @Test
    void countsRollOverToThePreviousWindowAndThenVanish() {
        SlidingWindowAlgorithm sw = algorithm(10, micros(10));
        State state = new State(0, 0, 5);

        Step<State> next = sw.step(state, 12, 6, 0);
        assertStep(next, true, 0, 0, 17); // floor(5·8/10) = 4; the 6, as the previous window's, fade out at 29
        assertThat(next.admitted()).isEqualTo(new State(10, 5, 6));

        assertStep(sw.step(next.admitted(), 25, 0, 0), true, 7, 0, 4);
        assertStep(sw.step(next.admitted(), 30, 0, 0), true, 10, 0, 0);
        assertThat(sw.step(next.admitted(), 30, 10, 0).admitted()).isEqualTo(new State(30, 0, 10));
    }

    @Test
    void retryAfterCanFallIntoTheNextWindow() {
        SlidingWindowAlgorithm sw = algorithm(10, seconds(10));
        State state = new State(0, 0, 10);

        assertStep(sw.step(state, 5 * SEC, 1, 0), false, 0, 5 * SEC + 1, 14 * SEC + 1);
        assertThat(sw.step(state, 10 * SEC, 1, 0).allowed()).isFalse();
        assertThat(sw.step(state, 10 * SEC + 1, 1, 0).allowed()).isTrue();
    }

    @Test
    void retryAfterCanFallIntoTheWindowAfterNext() {
        SlidingWindowAlgorithm tiny = algorithm(1, micros(1));
        State one = tiny.step(null, 0, 1, 0).admitted();
        assertStep(tiny.step(one, 0, 1, 0), false, 0, 2, 2);
        assertThat(tiny.step(one, 1, 1, 0).allowed()).isFalse();

        SlidingWindowAlgorithm lowered = algorithm(1, micros(2));
        State ten = new State(0, 0, 10);
        assertStep(lowered.step(ten, 0, 1, 0), false, 0, 4, 4);
        assertThat(lowered.step(ten, 3, 1, 0).allowed()).isFalse();
        assertThat(lowered.step(ten, 4, 1, 0).allowed()).isTrue();
    }

    @Test
    void permitsZeroInspectsWithoutCounting() {
        SlidingWindowAlgorithm sw = algorithm(10, micros(10));
        State state = new State(10, 4, 2);

        Step<State> peek = sw.step(state, 15, 0, 0);

        assertStep(peek, true, 6, 0, 11);
        assertThat(peek.admitted()).isSameAs(state);
        assertThat(peek.rejected()).isSameAs(state);
        assertStep(sw.step(null, 15, 0, 0), true, 10, 0, 0);
    }

    @Test
    void grantableIsWhatTheEstimateLeaves() {
        SlidingWindowAlgorithm sw = algorithm(10, micros(10));
        State state = new State(10, 4, 2);

        assertThat(sw.grantable(state, 15, 100)).isEqualTo(6);
        assertThat(sw.grantable(state, 15, 3)).isEqualTo(3);
        assertThat(sw.grantable(new State(10, 10, 10), 15, 3)).isZero();
        assertThat(sw.grantable(null, 15, 100)).isEqualTo(10);
    }

    @Test
    void clockGoingBackwardsMeansNoTimePassed() {
        SlidingWindowAlgorithm sw = algorithm(10, micros(10));
        State state = new State(10, 10, 0);

        assertStep(sw.step(state, 3, 1, 0), false, 0, 1, 10);
        assertThat(sw.step(state, 3, 0, 0).remaining()).isZero();
    }

    @Test
    void exactWithMaxCountsAndTheLongestWindowNearMaxTime() {
        long window = Arith.micros(Limit.MAX_DURATION);
        SlidingWindowAlgorithm sw = algorithm(Limit.MAX_COUNT, Limit.MAX_DURATION);
        long start = Arith.MAX_TIME - Arith.MAX_TIME % window;
        long elapsed = Arith.MAX_TIME - start;
        State state = new State(start, Limit.MAX_COUNT - 1, 1);

        long weighted = BigInteger.valueOf(Limit.MAX_COUNT - 1).multiply(BigInteger.valueOf(window - elapsed))
                .divide(BigInteger.valueOf(window)).longValueExact();
        Step<State> peek = sw.step(state, Arith.MAX_TIME, 0, 0);
        assertThat(peek.remaining()).isEqualTo(Limit.MAX_COUNT - weighted - 1);

        Step<State> all = sw.step(state, Arith.MAX_TIME, Limit.MAX_COUNT, 0);
        assertThat(all.allowed()).isFalse();
        long retry = all.retryAfterMicros();
        assertThat(sw.step(state, Arith.MAX_TIME + retry, Limit.MAX_COUNT, 0).allowed()).isTrue();
        assertThat(sw.step(state, Arith.MAX_TIME + retry - 1, Limit.MAX_COUNT, 0).allowed()).isFalse();

        assertThat(sw.step(null, 0, Limit.MAX_COUNT, 0).admitted()).isEqualTo(new State(0, 0, Limit.MAX_COUNT));
    }

    @Test
    void expiresWhenTheLastCountNoLongerWeighs() {
        SlidingWindowAlgorithm sw = algorithm(10, micros(10));
        State one = new State(10, 7, 1);
        State four = new State(10, 7, 4);

        assertThat(sw.expiresAt(one)).isEqualTo(21);
        assertThat(sw.step(one, 20, 0, 0).remaining()).isEqualTo(9);
        assertThat(sw.step(one, 21, 0, 0).remaining()).isEqualTo(10);
        assertThat(sw.expiresAt(four)).isEqualTo(28);
        assertThat(sw.step(four, 27, 0, 0).remaining()).isEqualTo(9);
        assertThat(sw.expiresAt(new State(10, 3, 0))).isEqualTo(17);
    }

    @Test
    void anExpiredStateAdmitsAsNoStateEvenForAClockThatThenStepsBack() {
        SlidingWindowAlgorithm sw = algorithm(3, micros(10));
        State one = sw.step(null, 5, 1, 0).admitted();
        assertThat(sw.expiresAt(one)).isEqualTo(11);

        Step<State> late = sw.step(one, 11, 1, 0);
        assertThat(late.admitted()).as("the count of window 0 weighs nothing from 11 on")
                .isEqualTo(sw.step(null, 11, 1, 0).admitted()).isEqualTo(new State(10, 0, 1));
        // Back to the start of window 10, where a kept previous count of 1 would weigh 1 again.
        assertStep(sw.step(late.admitted(), 10, 0, 0), true, 2, 0, 11);
    }

    @Test
    void migrateKeepsCountsForANewLimitAndRestartsForANewWindow() {
        SlidingWindow before = SlidingWindow.of(10, micros(10));
        State state = new State(10, 4, 6);

        SlidingWindowAlgorithm lower = new SlidingWindowAlgorithm(before.withLimit(5));
        assertThat(lower.migrate(state, before, 15)).isEqualTo(state);
        assertStep(lower.step(state, 15, 1, 0), false, 0, 7, 14);

        assertThat(new SlidingWindowAlgorithm(before.withWindow(micros(20))).migrate(state, before, 15)).isNull();
        assertThatThrownBy(() -> lower.migrate(state, FixedWindow.of(3, micros(10)), 15))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void algorithmsMapsTheLimitToThisTransition() {
        assertThat(Algorithms.of(SlidingWindow.of(3, seconds(10)))).isInstanceOf(SlidingWindowAlgorithm.class);
    }
}
