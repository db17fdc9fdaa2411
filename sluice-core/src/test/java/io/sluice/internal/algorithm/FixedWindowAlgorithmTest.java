package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.SEC;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.assertStep;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.FixedWindow.Align;
import io.sluice.Limit;
import io.sluice.SlidingWindow;
import io.sluice.internal.algorithm.FixedWindowAlgorithm.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class FixedWindowAlgorithmTest {

    private static FixedWindowAlgorithm algorithm(long limit, Duration window) {
        return new FixedWindowAlgorithm(FixedWindow.of(limit, window));
    }

    @Test
    void countsPermitsPerEpochAlignedWindow() {
        FixedWindowAlgorithm fw = algorithm(3, seconds(10));

        Step<State> first = fw.step(null, 3 * SEC, 1, 0);
        assertStep(first, true, 2, 0, 7 * SEC);
        assertThat(first.admitted()).isEqualTo(new State(0, 1));

        Step<State> second = fw.step(first.admitted(), 8 * SEC, 2, 0);
        assertStep(second, true, 0, 0, 2 * SEC);

        Step<State> full = fw.step(second.admitted(), 9 * SEC, 1, 0);
        assertStep(full, false, 0, SEC, SEC);
        assertThat(full.rejected()).isSameAs(second.admitted());

        // The boundary burst the Javadoc warns about: 3 more right after 3 at the end of the previous window.
        Step<State> next = fw.step(second.admitted(), 10 * SEC, 3, 0);
        assertStep(next, true, 0, 0, 10 * SEC);
        assertThat(next.admitted()).isEqualTo(new State(10 * SEC, 3));
    }

    /** envoyproxy/ratelimit: key window {@code (now / divider) * divider}, reset {@code divider − now % divider}. */
    @Test
    void alignsLikeEnvoyAndResetsAtTheWindowEnd() {
        FixedWindowAlgorithm perMinute = algorithm(5, seconds(60));

        Step<State> step = perMinute.step(null, 1234 * SEC, 1, 0);

        assertStep(step, true, 4, 0, 26 * SEC);
        assertThat(step.admitted()).isEqualTo(new State(1200 * SEC, 1));
        assertThat(perMinute.expiresAt(step.admitted())).isEqualTo(1260 * SEC);
    }

    @Test
    void firstRequestAlignmentOpensTheWindowAtTheFirstRecordedRequest() {
        FixedWindowAlgorithm fw = new FixedWindowAlgorithm(
                FixedWindow.of(2, seconds(10)).withAlign(Align.FIRST_REQUEST));

        Step<State> peek = fw.step(null, 3 * SEC, 0, 0);
        assertStep(peek, true, 2, 0, 0);
        assertThat(peek.admitted()).as("an inspection opens no window").isNull();

        Step<State> opened = fw.step(null, 3 * SEC, 1, 0);
        assertStep(opened, true, 1, 0, 10 * SEC);
        assertThat(opened.admitted()).isEqualTo(new State(3 * SEC, 1));

        Step<State> lastMicro = fw.step(opened.admitted(), 13 * SEC - 1, 2, 0);
        assertStep(lastMicro, false, 1, 1, 1);

        Step<State> reopened = fw.step(opened.admitted(), 13 * SEC, 2, 0);
        assertStep(reopened, true, 0, 0, 10 * SEC);
        assertThat(reopened.admitted()).isEqualTo(new State(13 * SEC, 2));

        Step<State> muchLater = fw.step(reopened.admitted(), 99 * SEC + 7, 1, 0);
        assertThat(muchLater.admitted()).isEqualTo(new State(99 * SEC + 7, 1));
    }

    @Test
    void countRejectedChargesRejectedAttemptsUntilTheWindowEnds() {
        FixedWindowAlgorithm fw = new FixedWindowAlgorithm(FixedWindow.of(2, seconds(10)).withCountRejected(true));

        Step<State> admitted = fw.step(null, SEC, 2, 0);
        assertStep(admitted, true, 0, 0, 9 * SEC);
        assertThat(admitted.rejected()).as("recorded if another limit rejects").isEqualTo(new State(0, 2));

        Step<State> rejected = fw.step(admitted.admitted(), 2 * SEC, 1, 0);
        assertStep(rejected, false, 0, 8 * SEC, 8 * SEC);
        assertThat(rejected.rejected()).isEqualTo(new State(0, 3));

        assertStep(fw.step(rejected.rejected(), 3 * SEC, 0, 0), true, 0, 0, 7 * SEC);
        assertStep(fw.step(rejected.rejected(), 10 * SEC, 2, 0), true, 0, 0, 10 * SEC);
    }

    @Test
    void countRejectedSaturatesAboveEveryValidLimit() {
        FixedWindowAlgorithm fw = new FixedWindowAlgorithm(
                FixedWindow.of(Limit.MAX_COUNT, seconds(10)).withCountRejected(true));
        State hammered = new State(0, FixedWindowAlgorithm.COUNT_CEILING);

        Step<State> step = fw.step(hammered, SEC, Limit.MAX_COUNT, 0);

        assertStep(step, false, 0, 9 * SEC, 9 * SEC);
        assertThat(step.rejected()).isEqualTo(new State(0, Limit.MAX_COUNT + 1));
    }

    @Test
    void permitsZeroInspectsWithoutCharging() {
        FixedWindowAlgorithm fw = algorithm(3, seconds(10));
        State state = new State(0, 2);

        Step<State> step = fw.step(state, 4 * SEC, 0, 0);

        assertStep(step, true, 1, 0, 6 * SEC);
        assertThat(step.admitted()).isSameAs(state);
        assertThat(step.rejected()).isSameAs(state);
    }

    @Test
    void clockGoingBackwardsMeansNoTimePassed() {
        FixedWindowAlgorithm fw = algorithm(3, seconds(10));
        State state = new State(10 * SEC, 2);

        Step<State> step = fw.step(state, 5 * SEC, 1, 0);
        assertStep(step, true, 0, 0, 10 * SEC);
        assertThat(step.admitted()).isEqualTo(new State(10 * SEC, 3));

        assertStep(fw.step(step.admitted(), 5 * SEC, 1, 0), false, 0, 10 * SEC, 10 * SEC);
    }

    @Test
    void worksAtTimeZeroAndAtMaxTimeWithMaxCounts() {
        FixedWindowAlgorithm small = algorithm(1, Duration.ofNanos(1_000));
        assertThat(small.step(null, 0, 1, 0).admitted()).isEqualTo(new State(0, 1));

        FixedWindowAlgorithm huge = algorithm(Limit.MAX_COUNT, Limit.MAX_DURATION);
        long window = Arith.micros(Limit.MAX_DURATION);
        long start = Arith.MAX_TIME - Arith.MAX_TIME % window;
        long untilEnd = start + window - Arith.MAX_TIME;

        Step<State> all = huge.step(null, Arith.MAX_TIME, Limit.MAX_COUNT, 0);
        assertStep(all, true, 0, 0, untilEnd);
        assertThat(all.admitted()).isEqualTo(new State(start, Limit.MAX_COUNT));
        assertThat(huge.expiresAt(all.admitted())).isEqualTo(start + window);

        assertStep(huge.step(all.admitted(), Arith.MAX_TIME, 1, 0), false, 0, untilEnd, untilEnd);
        assertThat(huge.grantable(all.admitted(), Arith.MAX_TIME, Long.MAX_VALUE)).isZero();
        assertThat(huge.grantable(null, Arith.MAX_TIME, Long.MAX_VALUE)).isEqualTo(Limit.MAX_COUNT);
    }

    @Test
    void grantableIsWhatIsLeftOfTheWindow() {
        FixedWindowAlgorithm fw = algorithm(3, seconds(10));
        State state = new State(0, 2);

        assertThat(fw.grantable(state, SEC, 5)).isEqualTo(1);
        assertThat(fw.grantable(state, SEC, 0)).isZero();
        assertThat(fw.grantable(state, 10 * SEC, 5)).isEqualTo(3);
        assertThat(fw.grantable(null, SEC, 2)).isEqualTo(2);
    }

    @Test
    void stateExpiresExactlyAtTheWindowEnd() {
        FixedWindowAlgorithm fw = algorithm(3, seconds(10));
        State state = new State(0, 3);

        assertThat(fw.expiresAt(state)).isEqualTo(10 * SEC);
        assertThat(fw.step(state, 10 * SEC, 3, 0).allowed()).isTrue();
        assertThat(fw.step(state, 10 * SEC - 1, 1, 0).allowed()).isFalse();
    }

    @Test
    void migrateKeepsTheCountForANewLimitAndRestartsForNewWindows() {
        FixedWindow before = FixedWindow.of(3, seconds(10));
        State state = new State(0, 3);

        FixedWindowAlgorithm lower = new FixedWindowAlgorithm(before.withLimit(2));
        State kept = lower.migrate(state, before, SEC);
        assertThat(kept).isEqualTo(state);
        assertStep(lower.step(kept, SEC, 1, 0), false, 0, 9 * SEC, 9 * SEC);

        FixedWindowAlgorithm higher = new FixedWindowAlgorithm(before.withLimit(5));
        assertStep(higher.step(higher.migrate(state, before, SEC), SEC, 2, 0), true, 0, 0, 9 * SEC);

        assertThat(new FixedWindowAlgorithm(before.withWindow(seconds(20))).migrate(state, before, SEC)).isNull();
        assertThat(new FixedWindowAlgorithm(before.withAlign(Align.FIRST_REQUEST)).migrate(state, before, SEC))
                .isNull();
        assertThat(new FixedWindowAlgorithm(before.withCountRejected(true)).migrate(state, before, SEC))
                .isEqualTo(state);
        assertThatThrownBy(() -> lower.migrate(state, SlidingWindow.of(3, seconds(10)), SEC))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void algorithmsMapsTheLimitToThisTransition() {
        assertThat(Algorithms.of(FixedWindow.of(3, seconds(10)))).isInstanceOf(FixedWindowAlgorithm.class);
    }
}
