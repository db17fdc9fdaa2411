package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import static io.sluice.redis.ports.RedisTwin.assertDecision;
import static io.sluice.redis.ports.RedisTwin.TODAY;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SlidingWindow;
import io.sluice.Store;
import io.sluice.internal.algorithm.Arith;
import io.sluice.redis.RedisStore;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.SharedRedis;
import java.math.BigInteger;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The sliding_window port at its edges, on standalone and on the cluster, each call checked against the
 * in-memory store too ({@link RedisTwin}). The estimate's products reach 2^85 with the largest counts
 * and windows, so those cases exercise the exact mul_div of lib/arith_mul_div.lua.
 */
@ExtendWith(SharedRedis.class)
class SlidingWindowRedisIT {

    private static final long SEC = 1_000_000;
    private static final long LONGEST = Arith.micros(Limit.MAX_DURATION);

    private static RedisTwin twin(Topology topology, long start, Limit... limits) {
        return new RedisTwin(topology, start, Rule.of("sw", limits));
    }

    /**
     * Alex Xu's example (7 per minute, 5 in the previous minute, 3 in this one, 30 % into it: 6, one more
     * passes), from windows aligned on the epoch, with the clock starting at the epoch.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void systemDesignInterviewExampleFromTheEpoch(Topology topology) {
        try (RedisTwin w = twin(topology, 0, SlidingWindow.of(7, Duration.ofSeconds(60)))) {
            // 5 permits weigh for their window and 48 s + 1 µs of the next (W + 1 − ceil(W / 5)).
            assertDecision(w.tryAcquire("k", 5), true, 2, 0, 108 * SEC + 1);
            w.clock.setMicros(65 * SEC);
            assertThat(w.tryAcquire("k", 3).allowed()).isTrue();
            w.clock.setMicros(78 * SEC);
            // 4 permits, as the previous window's, fade out 45 s + 1 µs into the next window.
            assertDecision(w.tryAcquire("k", 1), true, 0, 0, 87 * SEC + 1);
            assertDecision(w.tryAcquire("k", 1), false, 0, 6 * SEC + 1, 87 * SEC + 1);
            w.clock.advanceMicros(6 * SEC);
            assertThat(w.tryAcquire("k", 1).allowed()).isFalse();
            w.clock.advanceMicros(1);
            assertThat(w.tryAcquire("k", 1).allowed()).isTrue();
        }
    }

    /** Where a count, as the previous window's, stops weighing: W + 1 − ceil(W / count), the essay's fadesAt. */
    private static long fadesAt(long window, long count) {
        return window + 1 - (window + count - 1) / count;
    }

    /** Products of 10^12 and 366 days pass 2^53 (and 2^63): the estimate must still be exact. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void theLargestCountsAndWindowNearTheEndOfTime(Topology topology) {
        long lastStart = Arith.MAX_TIME - Arith.MAX_TIME % LONGEST;
        long fades = fadesAt(LONGEST, Limit.MAX_COUNT);
        assertThat(fades).isEqualTo(LONGEST - 31);
        try (RedisTwin w = twin(topology, lastStart - LONGEST + 1, SlidingWindow.of(Limit.MAX_COUNT,
                Limit.MAX_DURATION))) {
            assertDecision(w.tryAcquire("k", Limit.MAX_COUNT), true, 0, 0, LONGEST + fades - 1);
            w.clock.setMicros(lastStart + LONGEST / 3);
            // 10^12 · (2/3 W) / W = 666666666666.67: floor, exactly.
            assertDecision(w.peek("k", 0), true, Limit.MAX_COUNT - 666_666_666_666L, 0, fades - LONGEST / 3);
            // Everything passes once the old count weighs 0, 31 µs before the window ends.
            assertDecision(w.tryAcquire("k", Limit.MAX_COUNT), false, Limit.MAX_COUNT - 666_666_666_666L,
                    fades - LONGEST / 3, fades - LONGEST / 3);

            w.clock.setMicros(Arith.MAX_TIME);
            long elapsed = Arith.MAX_TIME - lastStart;
            long weighs = BigInteger.valueOf(Limit.MAX_COUNT).multiply(BigInteger.valueOf(LONGEST - elapsed))
                    .divide(BigInteger.valueOf(LONGEST)).longValueExact();
            long granted = Limit.MAX_COUNT - weighs;
            Decision rest = w.tryAcquireAtMost("k", Limit.MAX_COUNT);
            assertThat(rest.granted()).isEqualTo(granted);
            // This state expires past 2^53; at MAX_TIME it must still count.
            assertDecision(rest, true, 0, 0, LONGEST + fadesAt(LONGEST, granted) - elapsed);
            assertDecision(w.peek("k", 0), true, 0, 0, LONGEST + fadesAt(LONGEST, granted) - elapsed);
            assertThat(w.pttl("k", "sliding_window")).isPositive();
        }
    }

    /** A state that expires at 2^53 + 1, which a plain double sum rounds to 2^53. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void aStateExpiringOneMicrosecondPastTheEndOfTimeStillCountsAtIt(Topology topology) {
        try (RedisTwin w = twin(topology, Arith.MAX_TIME - 1, SlidingWindow.of(2, Duration.ofNanos(1_000)))) {
            assertDecision(w.tryAcquire("k", 1), true, 1, 0, 2);
            w.clock.setMicros(Arith.MAX_TIME);
            // The count of window 2^53 − 1 weighs floor(1 · 1 / 1) = 1 at the start of the next one.
            assertDecision(w.peek("k", 0), true, 1, 0, 1);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void anExpiredStateDecidesAsNoneAndTheKeyLivesNoLongerThanNeeded(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, SlidingWindow.of(4, Duration.ofSeconds(1)))) {
            assertThat(w.exists("k", "sliding_window")).isFalse();
            assertDecision(w.peek("k", 0), true, 4, 0, 0);
            // 2 permits weigh until 1 s (their window) + 0.5 s + 1 µs (as the previous window's).
            assertDecision(w.tryAcquire("k", 2), true, 2, 0, 1_500_001);
            assertThat(w.pttl("k", "sliding_window")).isBetween(2_000L, 2_501L);
            w.clock.advanceMicros(1_500_000);
            assertDecision(w.peek("k", 0), true, 3, 0, 1);
            w.clock.advanceMicros(1);
            assertDecision(w.peek("k", 0), true, 4, 0, 0);
            // From no state, whatever the clock does next: back at the window's start, a previous count of 2
            // kept in the state would weigh 2 again (SlidingWindowAlgorithm's rolled()).
            assertDecision(w.tryAcquire("k", 1), true, 3, 0, 500_000);
            w.clock.setMicros(TODAY + SEC);
            assertDecision(w.peek("k", 0), true, 3, 0, SEC + 1);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aNewLimitKeepsTheCountsAndANewWindowRestarts(Topology topology) {
        SlidingWindow limit = SlidingWindow.of(4, Duration.ofSeconds(10));
        try (RedisTwin w = twin(topology, TODAY, limit)) {
            w.tryAcquire("k", 3);
            w.updateLimit(limit.withLimit(3));
            // Passes 1 µs into the next window, where the 3 weigh floor(3 · (W − 1) / W) = 2.
            assertDecision(w.tryAcquire("k", 1), false, 0, 10 * SEC + 1, 10 * SEC + fadesAt(10 * SEC, 3));
            w.updateLimit(limit.withLimit(10));
            assertThat(w.tryAcquire("k", 1).remaining()).isEqualTo(6);
            w.updateLimit(limit.withWindow(Duration.ofSeconds(20)));
            assertThat(w.tryAcquire("k", 1).remaining()).as("counting restarted").isEqualTo(3);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void bestEffortAndAClockGoingBackwards(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY + 500_000, SlidingWindow.of(5, Duration.ofSeconds(1)))) {
            w.tryAcquire("k", 3);
            assertThat(w.tryAcquireAtMost("k", 10).granted()).isEqualTo(2);
            w.clock.setMicros(TODAY + 300_000);
            assertDecision(w.tryAcquire("k", 1), false, 0, 700_001, SEC + fadesAt(SEC, 5) - 300_000);
            w.clock.setMicros(TODAY + 1_600_000);
            // floor(5 · 0.4) = 2 of the previous window still weigh.
            assertThat(w.tryAcquireAtMost("k", 10).granted()).isEqualTo(3);
        }
    }

    /**
     * More permits than the limit in one request (the store takes any count; a limiter refuses it before) can
     * never pass: both stores say "never", from no state and from counts in both windows, never a negative wait.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void aRequestForMoreThanTheLimitIsRejectedWithNever(Topology topology) {
        ManualClock clock = new ManualClock(TODAY);
        Rule rule = Rule.of("sw-over", SlidingWindow.of(3, Duration.ofSeconds(60)));
        try (Store memory = Store.memory().clock(clock).build();
             RedisStore redis = topology.builder().prefix("swo-" + UUID.randomUUID().toString().substring(0, 8))
                     .clock(clock).cacheDenials(false).build()) {
            for (Store s : List.of(memory, redis)) {
                Decision fresh = s.decide(rule, "k", Request.tryAcquire(4));
                assertThat(fresh.allowed()).isFalse();
                assertThat(fresh.retryAfterMicros()).as("%s", s).isEqualTo(Arith.NEVER);
                assertThat(s.decide(rule, "k", Request.tryAcquire(2)).allowed()).isTrue();
            }
            clock.advanceMicros(70 * SEC);
            for (Store s : List.of(memory, redis)) {
                assertThat(s.decide(rule, "k", Request.tryAcquire(1)).allowed()).isTrue();
                Decision over = s.decide(rule, "k", Request.tryAcquire(Limit.MAX_COUNT));
                assertThat(over.allowed()).isFalse();
                assertThat(over.retryAfterMicros()).as("%s", s).isEqualTo(Arith.NEVER);
                assertThat(over.remaining()).isEqualTo(1);   // floor(2 · 50/60) + 1 = 2 counted of 3
            }
        }
    }
}
