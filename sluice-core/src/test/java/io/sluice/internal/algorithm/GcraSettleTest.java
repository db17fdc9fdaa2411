package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Gcra;
import io.sluice.internal.algorithm.GcraAlgorithm.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * gcra's settlement with the refund clock (GcraAlgorithm, "Settling a ticket"), on worked examples: the TAT and
 * the clock after each step, the clock's life, and the in-place step keeping it. SettlePropertiesTest checks the
 * bound on random runs.
 */
class GcraSettleTest {

    private static final long T0 = 1_700_000_000_000_000L;

    /** Burst 3, T = 250 ms. */
    private final GcraAlgorithm gcra = new GcraAlgorithm(Gcra.of(4, Duration.ofSeconds(1)).withBurst(3));

    private State admit(State state, long now, long permits) {
        Step<State> step = gcra.step(state, now, permits, 0);
        assertThat(step.allowed()).as("admitted at %d", now - T0).isTrue();
        return step.admitted();
    }

    @Test
    void aRefundAfterAnotherCountsWhatTheFirstMovedBack() {
        State s = admit(null, T0, 1);                               // TAT +250 ms
        s = admit(s, T0, 1);
        long first = gcra.mark(s, T0);
        s = admit(s, T0, 1);
        long second = gcra.mark(s, T0);
        assertThat(first).isEqualTo(T0 + 500_000);
        assertThat(second).isEqualTo(T0 + 750_000);

        s = gcra.settle(s, T0, first, 1, 0);
        assertThat(s).isEqualTo(new State(T0 + 500_000, 250_000));

        s = admit(s, T0 + 266_318, 1);
        assertThat(s).isEqualTo(new State(T0 + 750_000, 250_000));

        // A' = 750 − 250 = 500 ms: only 233.682 ms of the second charge is still ahead of now.
        s = gcra.settle(s, T0 + 266_318, second, 1, 0);
        assertThat(s).isEqualTo(new State(T0 + 516_318, 483_682));
        // The history where both charges cost nothing: idle at 266.318 ms, TAT 266.318 + 250 ms, the same.
    }

    @Test
    void aChargeSettledWhileItIsStillAheadIsGivenBackWhole() {
        State s = admit(null, T0, 3);                               // TAT +750 ms
        long mark = gcra.mark(s, T0);
        s = gcra.settle(s, T0 + 100_000, mark, 3, 1);
        assertThat(s).isEqualTo(new State(T0 + 250_000, 500_000));
        assertThat(gcra.step(s, T0 + 100_000, 2, 0).allowed()).isTrue();
        assertThat(gcra.step(s, T0 + 100_000, 3, 0).allowed()).isFalse();
    }

    @Test
    void aChargeTheIdleInstantsSwallowedGivesNothingBack() {
        State s = admit(null, T0, 3);                               // TAT +750 ms
        long mark = gcra.mark(s, T0);
        s = admit(s, T0 + 750_000, 3);                              // idle at 750 ms: a new term
        State settled = gcra.settle(s, T0 + 750_000, mark, 3, 0);
        assertThat(settled).isSameAs(s);
    }

    @Test
    void anExtraChargeKeepsTheClock() {
        State s = new State(T0 + 500_000, 250_000);
        assertThat(gcra.settle(s, T0, T0 + 750_000, 1, 3)).isEqualTo(new State(T0 + 1_000_000, 250_000));
        assertThat(gcra.settle(null, T0, T0 + 750_000, 1, 3)).isEqualTo(new State(T0 + 500_000, 0));
    }

    @Test
    void aStateRefundedIntoLivesUntilItsMarksCannotGiveBackAnything() {
        assertThat(gcra.expiresAt(new State(T0 + 500_000))).isEqualTo(T0 + 500_000);
        assertThat(gcra.expiresAt(new State(T0 + 500_000, 250_000))).isEqualTo(T0 + 750_000);
        long day = 86_400_000_000L;
        assertThat(gcra.expiresAt(new State(T0, 3 * day))).isEqualTo(T0 + day);
        // Meanwhile a TAT before now decides as no state does.
        State idle = new State(T0, 250_000);
        assertThat(gcra.step(idle, T0 + 100_000, 3, 0).remaining())
                .isEqualTo(gcra.step(null, T0 + 100_000, 3, 0).remaining());
        assertThat(gcra.step(idle, T0 + 100_000, 1, 0).admitted()).isEqualTo(new State(T0 + 350_000, 250_000));
    }

    @Test
    void theInPlaceStepKeepsTheClockOfALiveStateOnly() {
        InPlaceStep<State> inPlace = gcra.inPlace();
        StateCell cell = new StateCell();
        inPlace.load(new State(T0 + 500_000, 250_000), cell);
        assertThat(cell.expiresAt()).isEqualTo(T0 + 750_000);
        inPlace.step(cell, true, T0, 1, 0, false);
        assertThat(inPlace.save(cell)).isEqualTo(new State(T0 + 750_000, 250_000));
        assertThat(cell.expiresAt()).isEqualTo(T0 + 1_000_000);
        inPlace.step(cell, false, T0 + 2_000_000, 1, 0, false);   // expired: decides and writes as no state
        assertThat(inPlace.save(cell)).isEqualTo(new State(T0 + 2_250_000, 0));
        assertThat(cell.expiresAt()).isEqualTo(T0 + 2_250_000);
    }
}
