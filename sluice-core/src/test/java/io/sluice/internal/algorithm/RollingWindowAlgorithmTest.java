package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.SEC;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.assertStep;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.micros;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.RollingWindow;
import io.sluice.internal.algorithm.RollingWindowAlgorithm.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RollingWindowAlgorithmTest {

    private static RollingWindowAlgorithm algorithm(long limit, Duration window, Duration bucket) {
        return new RollingWindowAlgorithm(RollingWindow.of(limit, window, bucket));
    }

    /** Istio's own rolling-window case: credit 10, valid duration 100 s, bucket 10 s. */
    private static RollingWindowAlgorithm istio() {
        return algorithm(10, seconds(100), seconds(10));
    }

    private static State buckets(long... pairs) {
        return new State(pairs);
    }

    /**
     * istio/istio mixer/adapter/redisquota/redisquota_test.go, TestHandleQuota, "algorithm = rolling window,
     * best effort = false": {token, timestamp (s), allocated}.
     */
    @Test
    void istioRollingWindowAllOrNothing() {
        long[][] requests = {
            {3, 0, 3}, {3, 1, 3}, {3, 10, 3}, {3, 11, 0}, {3, 12, 0}, {3, 20, 0}, {3, 100, 3}, {2, 101, 2},
            {2, 102, 2}, {1, 110, 1}, {1, 111, 1}, {1, 112, 1}, {1, 113, 0}, {1, 114, 0}, {1, 150, 0}, {7, 200, 7},
        };
        RollingWindowAlgorithm rw = istio();
        State state = null;
        for (long[] r : requests) {
            Step<State> step = rw.step(state, r[1] * SEC, r[0], 0);
            assertThat(step.allowed() ? r[0] : 0).as("allocated at %d s", r[1]).isEqualTo(r[2]);
            state = step.allowed() ? step.admitted() : step.rejected();
        }
        assertThat(state).isEqualTo(buckets(110 * SEC, 3, 200 * SEC, 7));
    }

    /**
     * The same test's "best effort = true" case, through {@code grantable}; its two deduplicated replays (at 5 s
     * and 85 s, answered from Istio's dedup cache without touching the quota) are left out.
     */
    @Test
    void istioRollingWindowBestEffort() {
        long[][] requests = {
            {3, 0, 3}, {3, 1, 3}, {3, 10, 3}, {3, 11, 1}, {3, 12, 0}, {3, 20, 0}, {3, 100, 3}, {2, 101, 2},
            {2, 102, 1}, {1, 110, 1}, {1, 111, 1}, {1, 112, 1}, {1, 113, 1}, {1, 114, 0}, {1, 150, 0},
            {10, 200, 6},
        };
        RollingWindowAlgorithm rw = istio();
        State state = null;
        for (long[] r : requests) {
            long granted = rw.grantable(state, r[1] * SEC, r[0]);
            assertThat(granted).as("allocated at %d s", r[1]).isEqualTo(r[2]);
            Step<State> step = rw.step(state, r[1] * SEC, granted, 0);
            assertThat(step.allowed()).isTrue();
            state = step.admitted();
        }
        assertThat(state).isEqualTo(buckets(110 * SEC, 4, 200 * SEC, 6));
    }

    @Test
    void istioTimelineDetails() {
        RollingWindowAlgorithm rw = istio();
        State afterTen = buckets(0, 6, 10 * SEC, 3);

        assertStep(rw.step(afterTen, 11 * SEC, 3, 0), false, 1, 89 * SEC, 99 * SEC);

        Step<State> at100 = rw.step(afterTen, 100 * SEC, 3, 0);
        assertStep(at100, true, 4, 0, 100 * SEC);
        assertThat(at100.admitted()).isEqualTo(buckets(10 * SEC, 3, 100 * SEC, 3));

        assertStep(rw.step(buckets(100 * SEC, 7, 110 * SEC, 3), 113 * SEC, 1, 0), false, 0, 87 * SEC, 97 * SEC);
    }

    @Test
    void permitsJoinTheOpenBucketUntilItIsOneBucketLongAndCountUntilOneWindowAfterItsStart() {
        RollingWindowAlgorithm rw = algorithm(10, micros(100), micros(10));

        State first = rw.step(null, 0, 1, 0).admitted();
        State joined = rw.step(first, 9, 1, 0).admitted();
        assertThat(joined).isEqualTo(buckets(0, 2));
        State opened = rw.step(joined, 10, 1, 0).admitted();
        assertThat(opened).isEqualTo(buckets(0, 2, 10, 1));

        assertStep(rw.step(opened, 99, 0, 0), true, 7, 0, 11);
        Step<State> expired = rw.step(opened, 100, 0, 0);
        assertStep(expired, true, 9, 0, 10);
        assertThat(rw.step(opened, 100, 1, 0).admitted()).isEqualTo(buckets(10, 1, 100, 1));
    }

    /** Deliberate difference: Istio would have opened an empty bucket at 95 and put the permit at 100 into it. */
    @Test
    void rejectedAndInspectingRequestsOpenNoBucket() {
        RollingWindowAlgorithm rw = algorithm(1, micros(100), micros(10));
        State full = rw.step(null, 0, 1, 0).admitted();

        Step<State> rejected = rw.step(full, 95, 1, 0);
        assertStep(rejected, false, 0, 5, 5);
        assertThat(rejected.rejected()).isSameAs(full);
        assertThat(rw.step(full, 95, 0, 0).admitted()).isSameAs(full);

        State next = rw.step(rejected.rejected(), 100, 1, 0).admitted();
        assertThat(next).isEqualTo(buckets(100, 1));
        assertThat(rw.expiresAt(next)).isEqualTo(200);
    }

    @Test
    void retryAfterWaitsForEnoughBucketsToExpire() {
        RollingWindowAlgorithm rw = algorithm(10, micros(100), micros(10));
        State state = buckets(0, 4, 20, 3, 40, 3);

        assertStep(rw.step(state, 50, 1, 0), false, 0, 50, 90);
        assertStep(rw.step(state, 50, 4, 0), false, 0, 50, 90);
        assertStep(rw.step(state, 50, 5, 0), false, 0, 70, 90);
        assertStep(rw.step(state, 50, 10, 0), false, 0, 90, 90);
    }

    @Test
    void grantableIsIstiosBestEffort() {
        RollingWindowAlgorithm rw = algorithm(10, micros(100), micros(10));
        State state = buckets(0, 4, 20, 3);

        assertThat(rw.grantable(state, 50, 100)).isEqualTo(3);
        assertThat(rw.grantable(state, 50, 2)).isEqualTo(2);
        assertThat(rw.grantable(state, 100, 100)).isEqualTo(7);
        assertThat(rw.grantable(buckets(0, 10), 50, 5)).isZero();
        assertThat(rw.grantable(null, 50, 100)).isEqualTo(10);
    }

    @Test
    void clockGoingBackwardsMeansNoTimePassed() {
        RollingWindowAlgorithm rw = algorithm(3, micros(100), micros(10));
        State state = buckets(50, 2);

        Step<State> step = rw.step(state, 20, 1, 0);

        assertStep(step, true, 0, 0, 100);
        assertThat(step.admitted()).isEqualTo(buckets(50, 3));
        assertStep(rw.step(step.admitted(), 20, 1, 0), false, 0, 100, 100);
    }

    @Test
    void worksAtTimeZeroAndAtMaxTimeWithMaxCounts() {
        assertThat(algorithm(1, micros(1), micros(1)).step(null, 0, 1, 0).admitted()).isEqualTo(buckets(0, 1));

        long window = Arith.micros(Limit.MAX_DURATION);
        RollingWindowAlgorithm rw = algorithm(Limit.MAX_COUNT, Limit.MAX_DURATION,
                micros(window / RollingWindow.MAX_BUCKETS));
        Step<State> half = rw.step(null, Arith.MAX_TIME - 5, Limit.MAX_COUNT / 2, 0);
        Step<State> all = rw.step(half.admitted(), Arith.MAX_TIME, Limit.MAX_COUNT / 2, 0);
        assertStep(all, true, 0, 0, window - 5);
        assertThat(all.admitted()).isEqualTo(buckets(Arith.MAX_TIME - 5, Limit.MAX_COUNT));
        assertStep(rw.step(all.admitted(), Arith.MAX_TIME, Limit.MAX_COUNT, 0), false, 0, window - 5, window - 5);
        assertThat(rw.expiresAt(all.admitted())).isEqualTo(Arith.MAX_TIME - 5 + window);
    }

    @Test
    void bucketAsLongAsTheWindowIsAWindowFromTheFirstRequest() {
        RollingWindowAlgorithm rw = algorithm(2, micros(100), micros(100));
        State state = rw.step(null, 30, 2, 0).admitted();

        assertStep(rw.step(state, 129, 1, 0), false, 0, 1, 1);
        assertThat(rw.step(state, 130, 2, 0).admitted()).isEqualTo(buckets(130, 2));
    }

    @Test
    void migrateKeepsLiveBucketsAndAppliesTheNewParametersFromNowOn() {
        RollingWindow before = RollingWindow.of(10, micros(100), micros(10));
        State state = buckets(0, 4, 20, 3, 40, 3);

        RollingWindowAlgorithm lower = new RollingWindowAlgorithm(before.withLimit(5));
        assertThat(lower.migrate(state, before, 50)).isEqualTo(state);
        assertStep(lower.step(state, 50, 1, 0), false, 0, 70, 90);

        RollingWindowAlgorithm shorter = new RollingWindowAlgorithm(before.withWindow(micros(50)));
        assertStep(shorter.step(shorter.migrate(state, before, 50), 50, 1, 0), true, 3, 0, 50);

        RollingWindowAlgorithm longer = new RollingWindowAlgorithm(before.withWindow(micros(1000)));
        assertThat(longer.migrate(state, before, 110)).as("buckets gone under the old window stay gone")
                .isEqualTo(buckets(20, 3, 40, 3));
        assertThat(longer.migrate(state, before, 140)).isNull();

        RollingWindowAlgorithm wider = new RollingWindowAlgorithm(before.withBucket(micros(30)));
        State roomForOne = buckets(0, 4, 20, 3, 40, 2);
        assertThat(wider.step(wider.migrate(roomForOne, before, 65), 65, 1, 0).admitted())
                .as("the open bucket takes permits for the new bucket length")
                .isEqualTo(buckets(0, 4, 20, 3, 40, 3));
        assertThatThrownBy(() -> lower.migrate(state, FixedWindow.of(3, micros(100)), 60))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void algorithmsMapsTheLimitToThisTransition() {
        assertThat(Algorithms.of(RollingWindow.of(3, seconds(10), seconds(1))))
                .isInstanceOf(RollingWindowAlgorithm.class);
    }
}
