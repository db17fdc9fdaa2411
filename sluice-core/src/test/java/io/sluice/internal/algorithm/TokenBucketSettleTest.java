package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.TokenBucket;
import io.sluice.internal.algorithm.TokenBucketAlgorithm.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * token_bucket's settlement with the refund clock (TokenBucketAlgorithm, "Settling a ticket"), on worked examples;
 * SettlePropertiesTest checks the bound on random runs.
 */
class TokenBucketSettleTest {

    private static final long T0 = 1_700_000_000_000_000L;

    private static State admit(TokenBucketAlgorithm tb, State state, long now, long permits) {
        Step<State> step = tb.step(state, now, permits, 0);
        assertThat(step.allowed()).as("admitted at %d", now - T0).isTrue();
        return step.admitted();
    }

    /** Capacity 5, 2 a second (a/b = 1 token per 500,000 µs). */
    @Test
    void aRefundAfterAnotherCountsWhatTheFirstPutBack() {
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(TokenBucket.of(5, 2, Duration.ofSeconds(1)));
        State s = admit(tb, null, T0, 3);
        s = admit(tb, s, T0, 1);
        long first = tb.mark(s, T0);
        s = admit(tb, s, T0, 1);
        long second = tb.mark(s, T0);
        assertThat(first).as("full again after 4 tokens").isEqualTo(T0 + 2_000_000);
        assertThat(second).isEqualTo(T0 + 2_500_000);

        s = tb.settle(s, T0, first, 1, 0);
        assertThat(s).isEqualTo(new State(1, T0, 0, 500_000));

        s = admit(tb, s, T0 + 2_000_000, 5);                        // full at 2 s: the zero-cost run lost a token
        assertThat(s).isEqualTo(new State(0, T0 + 2_000_000, 0, 500_000));
        State settled = tb.settle(s, T0 + 2_000_000, second, 1, 0);
        assertThat(settled).as("A' = 2.5 s − 0.5 s = now: nothing left before it").isSameAs(s);
        assertThat(tb.step(settled, T0 + 2_000_000, 1, 0).allowed()).isFalse();
    }

    @Test
    void aRefundAtOnceGivesBackTheWholeUnusedPart() {
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(TokenBucket.of(10, 1, Duration.ofSeconds(6)));
        State s = admit(tb, null, T0, 6);
        s = tb.settle(s, T0, tb.mark(s, T0), 6, 1);
        assertThat(s).isEqualTo(new State(9, T0, 0, 30_000_000));
        assertThat(tb.expiresAt(s)).as("full at 6 s, then the clock's 30 s").isEqualTo(T0 + 36_000_000);
    }

    @Test
    void intervalRefundsCountPeriodEndsBeforeTheMark() {
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(TokenBucket.of(5, 2, Duration.ofSeconds(1))
                .withRefill(TokenBucket.Refill.INTERVAL));
        State s = admit(tb, null, T0, 5);
        long mark = tb.mark(s, T0);
        assertThat(mark).as("3 period ends fill it").isEqualTo(T0 + 3_000_000);
        s = tb.settle(s, T0 + 500_000, mark, 5, 0);
        assertThat(s).as("the ends at 1 s and 2 s: 4 tokens, 2 periods on the clock")
                .isEqualTo(new State(4, T0, 0, 2_000_000));
    }

    @Test
    void theInPlaceStepKeepsTheClockOfALiveStateOnly() {
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(TokenBucket.of(10, 1, Duration.ofSeconds(6)));
        InPlaceStep<State> inPlace = tb.inPlace();
        StateCell cell = new StateCell();
        inPlace.load(new State(9, T0, 0, 30_000_000), cell);
        inPlace.step(cell, true, T0, 2, 0, false);
        assertThat(inPlace.save(cell)).isEqualTo(new State(7, T0, 0, 30_000_000));
        inPlace.step(cell, true, T0, 1, 0, true);                    // a peek writes nothing
        assertThat(inPlace.save(cell)).isEqualTo(new State(7, T0, 0, 30_000_000));
        inPlace.step(cell, false, T0 + 100_000_000, 1, 0, false);  // expired: as no state
        assertThat(inPlace.save(cell)).isEqualTo(new State(9, T0 + 100_000_000, 0, 0));
    }
}
