package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import static io.sluice.redis.ports.RedisTwin.assertDecision;
import static io.sluice.redis.ports.RedisTwin.TODAY;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The rolling_window port at its edges, on standalone and on the cluster, each call checked against the
 * in-memory store too ({@link RedisTwin}).
 */
@ExtendWith(SharedRedis.class)
class RollingWindowRedisIT {

    private static final long SEC = 1_000_000;
    private static final long LONGEST = Arith.micros(Limit.MAX_DURATION);

    private static RedisTwin twin(Topology topology, long start, Limit... limits) {
        return new RedisTwin(topology, start, Rule.of("roll", limits));
    }

    /** Istio's own test case (redisquota_test.go), in seconds from the epoch, with its best-effort grant. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void istioExampleFromTheEpoch(Topology topology) {
        RollingWindow limit = RollingWindow.of(10, Duration.ofSeconds(100), Duration.ofSeconds(10));
        try (RedisTwin w = twin(topology, 0, limit)) {
            assertDecision(w.tryAcquire("k", 3), true, 7, 0, 100 * SEC);
            w.clock.setMicros(SEC);
            assertDecision(w.tryAcquire("k", 3), true, 4, 0, 99 * SEC);
            w.clock.setMicros(10 * SEC);
            assertDecision(w.tryAcquire("k", 3), true, 1, 0, 100 * SEC);
            w.clock.setMicros(11 * SEC);
            assertDecision(w.tryAcquire("k", 3), false, 1, 89 * SEC, 99 * SEC);
            Decision bestEffort = w.tryAcquireAtMost("k", 3);
            assertThat(bestEffort.granted()).isEqualTo(1);
            assertThat(w.tryAcquireAtMost("k", 3).granted()).isZero();
            w.clock.setMicros(100 * SEC);
            // Bucket 0 (6 permits) has left; bucket 10 holds 4.
            assertDecision(w.tryAcquire("k", 3), true, 3, 0, 100 * SEC);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void theLargestCountsAndWindowNearTheEndOfTime(Topology topology) {
        RollingWindow limit = RollingWindow.of(Limit.MAX_COUNT, Limit.MAX_DURATION,
                Duration.ofNanos(LONGEST / RollingWindow.MAX_BUCKETS * 1_000));
        long start = Arith.MAX_TIME - LONGEST / 2;
        try (RedisTwin w = twin(topology, start, limit)) {
            assertDecision(w.tryAcquire("k", Limit.MAX_COUNT - 1), true, 1, 0, LONGEST);
            w.clock.setMicros(Arith.MAX_TIME);
            assertDecision(w.tryAcquire("k", 2), false, 1, LONGEST / 2, LONGEST / 2);
            // A new bucket at MAX_TIME: it expires past 2^53, and must count until then.
            assertDecision(w.tryAcquire("k", 1), true, 0, 0, LONGEST);
            assertDecision(w.peek("k", 0), true, 0, 0, LONGEST);
            assertDecision(w.tryAcquire("k", 1), false, 0, LONGEST / 2, LONGEST);
            // No clock reading passes 2^53, so the key lives until then (plus the client-time slack of 1 s).
            assertThat(w.pttl("k", "rolling_window")).isBetween(1L, 1_000L + 1);
        }
    }

    /** A bucket that expires at 2^53 + 1, which a plain double sum rounds to 2^53. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void aBucketExpiringOneMicrosecondPastTheEndOfTimeStillCountsAtIt(Topology topology) {
        try (RedisTwin w = twin(topology, Arith.MAX_TIME - 1, RollingWindow.of(2, Duration.ofNanos(2_000),
                Duration.ofNanos(1_000)))) {
            w.tryAcquire("k", 1);
            w.clock.setMicros(Arith.MAX_TIME);
            assertDecision(w.peek("k", 0), true, 1, 0, 1);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void parameterChangesKeepTheLiveBuckets(Topology topology) {
        RollingWindow limit = RollingWindow.of(5, Duration.ofSeconds(10), Duration.ofSeconds(1));
        try (RedisTwin w = twin(topology, 0, limit)) {
            w.tryAcquire("k", 2);
            w.clock.setMicros(3 * SEC);
            w.tryAcquire("k", 2);
            w.clock.setMicros(4 * SEC);
            w.updateLimit(limit.withBucket(Duration.ofSeconds(5)));
            w.clock.setMicros(4_500_000);
            // 1.5 s after bucket 3 opened: it is still open at the new 5 s length.
            assertDecision(w.tryAcquire("k", 1), true, 0, 0, 8_500_000);
            w.clock.setMicros(6 * SEC);
            w.updateLimit(limit.withWindow(Duration.ofSeconds(5)));
            assertDecision(w.peek("k", 0), true, 2, 0, 2 * SEC);
            // Bucket 0 had expired under the 5 s window: it does not come back with a 10 s one.
            w.updateLimit(limit);
            assertDecision(w.peek("k", 0), true, 2, 0, 7 * SEC);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void anExpiredStateDecidesAsNoneAndTheKeyLivesNoLongerThanNeeded(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, RollingWindow.of(2, Duration.ofMinutes(1),
                Duration.ofSeconds(10)))) {
            assertDecision(w.peek("k", 0), true, 2, 0, 0);
            assertThat(w.exists("k", "rolling_window")).isFalse();
            w.tryAcquire("k", 1);
            assertThat(w.pttl("k", "rolling_window")).isBetween(60_000L, 61_000L);
            w.clock.advanceMicros(59 * SEC);
            w.tryAcquire("k", 1);
            assertThat(w.pttl("k", "rolling_window")).isBetween(60_000L, 61_000L);
            w.clock.advanceMicros(SEC);
            assertDecision(w.peek("k", 0), true, 1, 0, 59 * SEC);
            w.clock.advanceMicros(59 * SEC);
            assertDecision(w.peek("k", 0), true, 2, 0, 0);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aClockGoingBackwardsChargesTheNewestBucket(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, RollingWindow.of(4, Duration.ofSeconds(10),
                Duration.ofSeconds(1)))) {
            w.tryAcquire("k", 1);
            w.clock.advanceMicros(5 * SEC);
            w.tryAcquire("k", 1);
            w.clock.advanceMicros(-3 * SEC);
            assertDecision(w.tryAcquire("k", 1), true, 1, 0, 10 * SEC);
            assertDecision(w.tryAcquire("k", 2), false, 1, 5 * SEC, 10 * SEC);
        }
    }
}
