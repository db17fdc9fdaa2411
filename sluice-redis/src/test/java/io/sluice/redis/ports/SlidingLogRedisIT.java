package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import static io.sluice.redis.ports.RedisTwin.assertDecision;
import static io.sluice.redis.ports.RedisTwin.TODAY;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The sliding_log port at its edges, on standalone and on the cluster. Every call also runs on the in-memory
 * store ({@link RedisTwin}), so each expected value holds for the Java transition too.
 */
@ExtendWith(SharedRedis.class)
class SlidingLogRedisIT {

    private static final long MS = 1_000;
    private static final long SEC = 1_000_000;

    private static RedisTwin twin(Topology topology, long start, Limit... limits) {
        return new RedisTwin(topology, start, Rule.of("log", limits));
    }

    private static SlidingLog log(long limit, Duration window, Duration minGap, boolean countRejected) {
        return new SlidingLog("sliding_log", limit, window, minGap, countRejected);
    }

    /** The essay's worked example, with the clock starting at the epoch itself. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void essayTimelineFromTheEpoch(Topology topology) {
        try (RedisTwin w = twin(topology, 0, log(3, Duration.ofSeconds(10), Duration.ofSeconds(1), false))) {
            assertDecision(w.tryAcquire("k", 1), true, 2, 0, 10 * SEC);
            w.clock.setMicros(500 * MS);
            assertDecision(w.tryAcquire("k", 1), false, 2, 500 * MS, 9_500 * MS);
            w.clock.setMicros(SEC);
            assertDecision(w.tryAcquire("k", 2), true, 0, 0, 10 * SEC);
            w.clock.setMicros(9 * SEC);
            assertDecision(w.tryAcquire("k", 1), false, 0, SEC, 2 * SEC);
            w.clock.setMicros(10 * SEC);
            assertDecision(w.tryAcquire("k", 1), true, 0, 0, 10 * SEC);
        }
    }

    /** The classic sorted-set bug (a member per timestamp) would let the fourth one in. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void requestsInTheSameMicrosecondAddUp(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, SlidingLog.of(3, Duration.ofSeconds(1)))) {
            assertDecision(w.tryAcquire("k", 1), true, 2, 0, SEC);
            assertDecision(w.tryAcquire("k", 1), true, 1, 0, SEC);
            assertDecision(w.tryAcquire("k", 1), true, 0, 0, SEC);
            assertDecision(w.tryAcquire("k", 1), false, 0, SEC, SEC);
            w.clock.advanceMicros(SEC - 1);
            assertThat(w.tryAcquire("k", 1).allowed()).isFalse();
            w.clock.advanceMicros(1);
            assertDecision(w.tryAcquire("k", 3), true, 0, 0, SEC);
        }
    }

    /** ClassDojo's behaviour: a client retrying faster than the rate stays out until it pauses. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void countRejectedKeepsAHammeringClientOutUntilItPauses(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, log(2, Duration.ofSeconds(10), Duration.ZERO, true))) {
            assertThat(w.tryAcquire("k", 2).allowed()).isTrue();
            for (int i = 1; i <= 12; i++) {
                w.clock.advanceMicros(SEC);
                assertDecision(w.tryAcquire("k", 1), false, 0, 9 * SEC, 10 * SEC);
            }
            w.clock.advanceMicros(10 * SEC);
            assertDecision(w.tryAcquire("k", 1), true, 1, 0, 10 * SEC);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void bestEffortGrantsWhatIsLeftEvenForMoreThanTheLimit(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, SlidingLog.of(3, Duration.ofSeconds(1)),
                SlidingLog.of(SlidingLog.MAX_LOG, Duration.ofDays(366)).named("huge"))) {
            Decision partial = w.tryAcquireAtMost("k", 10);
            assertThat(partial.granted()).isEqualTo(3);
            assertThat(w.tryAcquireAtMost("k", 5).granted()).isZero();
            w.clock.advanceMicros(SEC);
            assertThat(w.tryAcquireAtMost("k", Limit.MAX_COUNT).granted()).isEqualTo(3);
        }
        try (RedisTwin w = twin(topology, TODAY, SlidingLog.of(SlidingLog.MAX_LOG, Duration.ofDays(366)))) {
            assertThat(w.tryAcquireAtMost("k", Limit.MAX_COUNT).granted()).isEqualTo(SlidingLog.MAX_LOG);
            assertDecision(w.tryAcquire("k", 1), false, 0, Arith.micros(Limit.MAX_DURATION),
                    Arith.micros(Limit.MAX_DURATION));
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aParameterChangeKeepsTheLogMinusWhatHadLeftTheOldWindow(Topology topology) {
        SlidingLog tenSeconds = SlidingLog.of(3, Duration.ofSeconds(10));
        try (RedisTwin w = twin(topology, 0, tenSeconds)) {
            w.tryAcquire("k", 1);
            w.clock.setMicros(5 * SEC);
            w.tryAcquire("k", 1);
            w.clock.setMicros(6 * SEC);
            w.updateLimit(tenSeconds.withWindow(Duration.ofSeconds(4)));
            assertDecision(w.peek("k", 0), true, 2, 0, 3 * SEC);
            // Back to ten seconds: the entry at 0 had left the 4 s window, and stays gone.
            w.updateLimit(tenSeconds.withLimit(1));
            assertDecision(w.tryAcquire("k", 1), false, 0, 9 * SEC, 9 * SEC);
            w.clock.setMicros(15 * SEC);
            assertDecision(w.tryAcquire("k", 1), true, 0, 0, 10 * SEC);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void anotherAlgorithmUnderTheSameNameStartsFresh(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, FixedWindow.of(1, Duration.ofMinutes(1)).named("l"))) {
            assertThat(w.tryAcquire("k", 1).allowed()).isTrue();
            w.updateLimit(SlidingLog.of(1, Duration.ofMinutes(1)).named("l"));
            assertDecision(w.tryAcquire("k", 1), true, 0, 0, 60 * SEC);
            w.updateLimit(FixedWindow.of(1, Duration.ofMinutes(1)).named("l"));
            assertThat(w.tryAcquire("k", 1).allowed()).isTrue();
        }
    }

    /** Entries near MAX_TIME expire after 2^53, where doubles hold only even integers. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void nearTheEndOfTimeAnEntryLastsItsWholeWindow(Topology topology) {
        try (RedisTwin w = twin(topology, Arith.MAX_TIME - 5, SlidingLog.of(2, Duration.ofNanos(10_000)))) {
            assertDecision(w.tryAcquire("k", 1), true, 1, 0, 10);
            w.clock.setMicros(Arith.MAX_TIME);
            assertDecision(w.peek("k", 0), true, 1, 0, 5);
            assertDecision(w.tryAcquire("k", 1), true, 0, 0, 10);
            assertDecision(w.tryAcquire("k", 1), false, 0, 5, 10);
            assertThat(w.pttl("k", "sliding_log")).isBetween(1L, 1_001L);
        }
    }

    /** An entry that expires at 2^53 + 1, which a plain double sum rounds to 2^53. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void anEntryExpiringOneMicrosecondPastTheEndOfTimeStillCountsAtIt(Topology topology) {
        try (RedisTwin w = twin(topology, Arith.MAX_TIME - 1, SlidingLog.of(2, Duration.ofNanos(2_000)))) {
            w.tryAcquire("k", 1);
            w.clock.setMicros(Arith.MAX_TIME);
            assertDecision(w.peek("k", 0), true, 1, 0, 1);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void theKeyLivesNoLongerThanItsNewestEntryMatters(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, SlidingLog.of(2, Duration.ofMinutes(1)))) {
            assertThat(w.exists("k", "sliding_log")).isFalse();
            assertDecision(w.peek("k", 0), true, 2, 0, 0);
            assertThat(w.exists("k", "sliding_log")).as("a peek of an empty key writes nothing").isFalse();
            w.tryAcquire("k", 1);
            // Client time: the remaining 60 s, counted by the server, plus 1 s for clocks running slow.
            assertThat(w.pttl("k", "sliding_log")).isBetween(60_000L, 61_000L);
            w.clock.advanceMicros(30 * SEC);
            w.tryAcquire("k", 1);
            assertThat(w.pttl("k", "sliding_log")).isBetween(60_000L, 61_000L);
            assertThat(w.tryAcquire("k", 1).allowed()).isFalse();
            w.clock.advanceMicros(60 * SEC);
            // Expired by the client's clock: decides as no state; the key is left to its TTL.
            assertDecision(w.peek("k", 0), true, 2, 0, 0);
            assertDecision(w.tryAcquire("k", 2), true, 0, 0, 60 * SEC);
        }
    }
}
