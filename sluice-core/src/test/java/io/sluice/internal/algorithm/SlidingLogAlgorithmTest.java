package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.SEC;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.assertStep;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.micros;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.SlidingLog;
import io.sluice.internal.algorithm.SlidingLogAlgorithm.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SlidingLogAlgorithmTest {

    /** ClassDojo's tests count in milliseconds; the log counts in microseconds. */
    private static final long MS = 1_000;

    private static SlidingLogAlgorithm algorithm(long limit, Duration window) {
        return new SlidingLogAlgorithm(SlidingLog.of(limit, window));
    }

    /** ClassDojo logs every attempt: {@code countRejected}. */
    private static SlidingLogAlgorithm classDojo(long maxInInterval, long intervalMs, long minDifferenceMs) {
        return new SlidingLogAlgorithm(SlidingLog.of(maxInInterval, Duration.ofMillis(intervalMs))
                .withMinGap(Duration.ofMillis(minDifferenceMs)).withCountRejected(true));
    }

    /** A ClassDojo {@code limit(id)} call: the store commits the outcome. */
    private static State limit(SlidingLogAlgorithm log, State[] state, long ms, boolean blocked) {
        Step<State> step = log.step(state[0], ms * MS, 1, 0);
        assertThat(step.allowed()).as("blocked at %d ms", ms).isEqualTo(!blocked);
        state[0] = step.allowed() ? step.admitted() : step.rejected();
        return state[0];
    }

    @Test
    void essayTimeline() {
        SlidingLogAlgorithm log = new SlidingLogAlgorithm(SlidingLog.of(3, seconds(10)).withMinGap(seconds(1)));

        Step<State> first = log.step(null, 0, 1, 0);
        assertStep(first, true, 2, 0, 10 * SEC);

        Step<State> tooSoon = log.step(first.admitted(), SEC / 2, 1, 0);
        assertStep(tooSoon, false, 2, SEC / 2, 19 * SEC / 2);
        assertThat(tooSoon.rejected()).isSameAs(first.admitted());

        Step<State> pair = log.step(first.admitted(), SEC, 2, 0);
        assertStep(pair, true, 0, 0, 10 * SEC);
        assertThat(pair.admitted()).isEqualTo(new State(new long[] {0, 1, SEC, 2}));

        assertStep(log.step(pair.admitted(), 9 * SEC, 1, 0), false, 0, SEC, 2 * SEC);

        Step<State> slid = log.step(pair.admitted(), 10 * SEC, 1, 0);
        assertStep(slid, true, 0, 0, 10 * SEC);
        assertThat(slid.admitted()).as("the entry at exactly now − W has left")
                .isEqualTo(new State(new long[] {SEC, 2, 10 * SEC, 1}));
    }

    /**
     * peterkhayes/rolling-rate-limiter (ClassDojo) src/index.test.ts: "prevents more than maxInInterval actions
     * within interval".
     */
    @Test
    void classDojoPreventsMoreThanMaxInInterval() {
        SlidingLogAlgorithm log = classDojo(2, 10, 0);
        State[] state = {null};

        limit(log, state, 0, false);
        assertThat(log.grantable(state[0], MS, 1)).as("wouldLimit at 1 ms").isEqualTo(1);
        limit(log, state, 1, false);
        assertThat(log.step(state[0], 9 * MS, 1, 0).allowed()).as("wouldLimit at 9 ms").isFalse();
        assertThat(log.step(state[0], 10 * MS, 1, 0).allowed()).as("wouldLimit at 10 ms").isTrue();
        limit(log, state, 10, false);
    }

    /** ClassDojo: "blocked actions count as actions". */
    @Test
    void classDojoBlockedActionsCount() {
        SlidingLogAlgorithm log = classDojo(3, 10, 0);
        State[] state = {null};

        limit(log, state, 0, false);
        limit(log, state, 0, false);
        limit(log, state, 0, false);
        limit(log, state, 9, true);
        limit(log, state, 9, true);
        assertThat(state[0]).as("same-microsecond events add up, capped to the newest 3")
                .isEqualTo(new State(new long[] {0, 1, 9 * MS, 2}));
        limit(log, state, 10, false);
        limit(log, state, 10, true);
    }

    /** ClassDojo: "prevents actions less than minDistance apart". */
    @Test
    void classDojoMinDifference() {
        SlidingLogAlgorithm log = classDojo(4, 10, 2);
        State[] state = {null};

        limit(log, state, 0, false);
        limit(log, state, 0, true);
        limit(log, state, 1, true);
        limit(log, state, 3, false);
        limit(log, state, 3, true);
    }

    /** ClassDojo: "returns info about limiting (no min distance)": remaining and millisecondsUntilAllowed. */
    @Test
    void classDojoInfoWithoutMinDifference() {
        SlidingLogAlgorithm log = classDojo(3, 10, 0);

        Step<State> at0 = log.step(null, 0, 1, 0);
        assertStep(at0, true, 2, 0, 10 * MS);
        Step<State> at4 = log.step(at0.admitted(), 4 * MS, 1, 0);
        assertStep(at4, true, 1, 0, 10 * MS);
        Step<State> at5 = log.step(at4.admitted(), 5 * MS, 1, 0);
        assertStep(at5, true, 0, 0, 10 * MS);
        Step<State> at8 = log.step(at5.admitted(), 8 * MS, 1, 0);
        assertStep(at8, false, 0, 6 * MS, 10 * MS); // "at 14, the second action will clear"
        // wouldLimitWithInfo at 11 ms: the hypothetical attempt, not committed.
        assertStep(log.step(at8.rejected(), 11 * MS, 1, 0), false, 0, 4 * MS, 10 * MS); // "at 15, the third"
        assertStep(log.step(at8.rejected(), 17 * MS, 1, 0), true, 1, 0, 10 * MS);
    }

    /** ClassDojo: "returns info about limiting (with min distance)". */
    @Test
    void classDojoInfoWithMinDifference() {
        SlidingLogAlgorithm log = classDojo(3, 10, 2);

        Step<State> at0 = log.step(null, 0, 1, 0);
        assertStep(at0, true, 2, 0, 10 * MS);
        Step<State> at4 = log.step(at0.admitted(), 4 * MS, 1, 0);
        assertStep(at4, true, 1, 0, 10 * MS);
        Step<State> at5 = log.step(at4.admitted(), 5 * MS, 1, 0);
        assertStep(at5, false, 0, 5 * MS, 10 * MS); // blocked by the gap; "at 10, the first action will clear"
        Step<State> at8 = log.step(at5.rejected(), 8 * MS, 1, 0);
        assertStep(at8, false, 0, 6 * MS, 10 * MS);
        assertStep(log.step(at8.rejected(), 11 * MS, 1, 0), false, 0, 4 * MS, 10 * MS);
        assertStep(log.step(at8.rejected(), 17 * MS, 1, 0), true, 1, 0, 10 * MS);
    }

    @Test
    void withoutCountRejectedOnlyAdmittedPermitsAreLogged() {
        SlidingLogAlgorithm log = algorithm(2, micros(10));
        Step<State> full = log.step(null, 0, 2, 0);

        Step<State> rejected = log.step(full.admitted(), 5, 1, 0);

        assertStep(rejected, false, 0, 5, 5);
        assertThat(rejected.rejected()).isSameAs(full.admitted());
        assertThat(full.rejected()).isNull();
    }

    @Test
    void sameMicrosecondRequestsMergeIntoOneEntry() {
        SlidingLogAlgorithm log = algorithm(5, micros(10));
        State state = log.step(null, 7, 2, 0).admitted();

        Step<State> again = log.step(state, 7, 3, 0);

        assertStep(again, true, 0, 0, 10);
        assertThat(again.admitted()).isEqualTo(new State(new long[] {7, 5}));
        assertStep(log.step(again.admitted(), 16, 1, 0), false, 0, 1, 1);
        assertStep(log.step(again.admitted(), 17, 5, 0), true, 0, 0, 10);
    }

    @Test
    void retryAfterWaitsForEnoughOldPermitsToLeave() {
        SlidingLogAlgorithm log = algorithm(5, micros(100));
        State state = new State(new long[] {10, 2, 20, 1, 30, 2});

        assertStep(log.step(state, 50, 1, 0), false, 0, 60, 80);
        assertStep(log.step(state, 50, 2, 0), false, 0, 60, 80);
        assertStep(log.step(state, 50, 3, 0), false, 0, 70, 80);
        assertStep(log.step(state, 50, 5, 0), false, 0, 80, 80);
    }

    @Test
    void logIsCappedToTheNewestLimitPermits() {
        SlidingLogAlgorithm log = new SlidingLogAlgorithm(SlidingLog.of(3, micros(100)).withCountRejected(true));
        State state = new State(new long[] {10, 2, 20, 1});

        Step<State> rejected = log.step(state, 30, 2, 0);

        assertStep(rejected, false, 0, 100, 100);
        assertThat(rejected.rejected()).isEqualTo(new State(new long[] {20, 1, 30, 2}));
        // Same verdicts as the uncapped log {10x2, 20, 30x2} would give (this attempt is logged at 110 too):
        assertStep(log.step(rejected.rejected(), 110, 1, 0), false, 0, 20, 100);
        assertStep(log.step(rejected.rejected(), 120, 1, 0), true, 0, 0, 100);
    }

    @Test
    void permitsZeroInspectsWithoutLogging() {
        SlidingLogAlgorithm log = new SlidingLogAlgorithm(
                SlidingLog.of(3, micros(100)).withMinGap(micros(10)).withCountRejected(true));
        State state = new State(new long[] {10, 3});

        Step<State> peek = log.step(state, 15, 0, 0);

        assertStep(peek, true, 0, 0, 95);
        assertThat(peek.admitted()).isSameAs(state);
        assertThat(peek.rejected()).isSameAs(state);
        assertStep(log.step(null, 15, 0, 0), true, 3, 0, 0);
    }

    @Test
    void grantableIsZeroWhileTheGapRuns() {
        SlidingLogAlgorithm log = new SlidingLogAlgorithm(SlidingLog.of(5, micros(100)).withMinGap(micros(10)));
        State state = new State(new long[] {10, 2});

        assertThat(log.grantable(state, 19, 3)).isZero();
        assertThat(log.grantable(state, 20, 9)).isEqualTo(3);
        assertThat(log.grantable(null, 20, 9)).isEqualTo(5);
    }

    @Test
    void clockGoingBackwardsMeansNoTimePassed() {
        SlidingLogAlgorithm log = new SlidingLogAlgorithm(SlidingLog.of(3, micros(100)).withMinGap(micros(10)));
        State state = new State(new long[] {50, 1});

        assertStep(log.step(state, 20, 1, 0), false, 2, 10, 100);
        Step<State> noGap = algorithm(3, micros(100)).step(state, 20, 1, 0);
        assertThat(noGap.admitted()).as("recorded at the newest time").isEqualTo(new State(new long[] {50, 2}));
    }

    @Test
    void worksAtTimeZeroAndAtMaxTimeWithTheLargestLog() {
        assertThat(algorithm(1, micros(1)).step(null, 0, 1, 0).admitted()).isEqualTo(new State(new long[] {0, 1}));

        SlidingLogAlgorithm log = algorithm(SlidingLog.MAX_LOG, Limit.MAX_DURATION);
        long window = Arith.micros(Limit.MAX_DURATION);
        Step<State> all = log.step(null, Arith.MAX_TIME, SlidingLog.MAX_LOG, 0);
        assertStep(all, true, 0, 0, window);
        assertThat(log.expiresAt(all.admitted())).isEqualTo(Arith.MAX_TIME + window);
        assertStep(log.step(all.admitted(), Arith.MAX_TIME, 1, 0), false, 0, window, window);
    }

    @Test
    void expiresWhenTheNewestEntryLeavesTheWindow() {
        SlidingLogAlgorithm log = new SlidingLogAlgorithm(SlidingLog.of(2, micros(100)).withMinGap(micros(100)));
        State state = new State(new long[] {10, 1, 40, 1});

        assertThat(log.expiresAt(state)).isEqualTo(140);
        assertStep(log.step(state, 140, 2, 0), true, 0, 0, 100);
        assertStep(log.step(state, 139, 0, 0), true, 1, 0, 1);
    }

    @Test
    void migrateKeepsTheLogAndJudgesItByTheNewParameters() {
        SlidingLog before = SlidingLog.of(3, micros(100));
        State state = new State(new long[] {10, 1, 50, 2});

        SlidingLogAlgorithm lower = new SlidingLogAlgorithm(before.withLimit(2));
        State kept = lower.migrate(state, before, 60);
        assertThat(kept).isEqualTo(state);
        assertStep(lower.step(kept, 60, 1, 0), false, 0, 90, 90);

        SlidingLogAlgorithm longer = new SlidingLogAlgorithm(before.withWindow(micros(1000)));
        assertStep(longer.step(longer.migrate(state, before, 60), 120, 1, 0), false, 0, 890, 930);

        State afterOldWindow = longer.migrate(state, before, 120);
        assertThat(afterOldWindow).as("entries gone under the old window stay gone")
                .isEqualTo(new State(new long[] {50, 2}));
        assertThat(longer.migrate(state, before, 150)).isNull();
        assertThat(longer.migrate(null, before, 150)).isNull();
        assertThatThrownBy(() -> lower.migrate(state, FixedWindow.of(3, micros(100)), 60))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void algorithmsMapsTheLimitToThisTransition() {
        assertThat(Algorithms.of(SlidingLog.of(3, seconds(10)))).isInstanceOf(SlidingLogAlgorithm.class);
    }
}
