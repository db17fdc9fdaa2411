package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import static io.sluice.redis.ports.RedisTwin.TODAY;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The leaky_bucket port at its edges, on standalone and on the cluster: every decision is made by the Lua port
 * and by the Java transition (in memory) on one clock and must be identical ({@link RedisTwin}); the numbers
 * asserted besides are nginx's and the essay's. The leak and the wait are products up to 2^93, computed by the
 * exact mul_div of lib/arith_mul_div.lua.
 */
@ExtendWith(SharedRedis.class)
class LeakyBucketRedisIT {

    private static final long MS = 1_000;
    private static final long S = 1_000_000;
    private static final Duration FOREVER = Duration.ofDays(365L * 1000); // the facade's unbounded maxWait
    private static final long MAX_LIMIT = 1_000_000_000L; // LeakyBucket's largest limit and burst

    private static LeakyBucket leaky(long limit, Duration period, long burst, boolean nodelay, long delay) {
        return new LeakyBucket("lb", limit, period, burst, nodelay, delay);
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void emptyStateFollowsNginxsBurstExample(Topology topology) {
        // rate=1r/s burst=5: 7 requests at once, then one at 2.5 s
        try (RedisTwin t = new RedisTwin(topology, TODAY, "nginx", leaky(1, Duration.ofSeconds(1), 5, false, 0))) {
            assertThat(t.peek("k", 0).remaining()).isEqualTo(6);
            assertThat(t.exists("k", "lb")).as("a peek writes nothing").isFalse();
            List<Long> waits = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                waits.add(t.reserve("k", 1, Duration.ofDays(1)).waitMicros());
            }
            assertThat(waits).containsExactly(0L, S, 2 * S, 3 * S, 4 * S, 5 * S);
            t.assertTtl("k", "lb", 6 * S); // excess 5000 plus one emission interval
            Decision seventh = t.reserve("k", 1, Duration.ofDays(1));
            assertThat(seventh.allowed()).isFalse();
            assertThat(seventh.retryAfterMicros()).isEqualTo(6 * S);
            t.clock.advanceMillis(2_500);
            Decision later = t.reserve("k", 1, Duration.ofDays(1));
            assertThat(later.waitMicros()).isEqualTo(3_500 * MS);
            assertThat(later.remaining()).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void anExpiredStateIsAFreshKey(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, TODAY, "expiry", leaky(2, Duration.ofSeconds(1), 0, false, 0))) {
            assertThat(t.tryAcquire("k", 1).resetAfterMicros()).isEqualTo(500 * MS);
            t.assertTtl("k", "lb", 500 * MS);
            t.clock.advanceMicros(500 * MS - 1);
            Decision early = t.tryAcquire("k", 1);
            assertThat(early.allowed()).isFalse();
            assertThat(early.retryAfterMicros()).isEqualTo(1);
            t.clock.advanceMicros(1);
            assertThat(t.tryAcquire("k", 1).allowed()).isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void clockAtTheEpoch(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, 0, "epoch", leaky(1, Duration.ofMillis(1), 0, false, 0))) {
            assertThat(t.tryAcquire("k", 1).allowed()).isTrue();
            assertThat(t.tryAcquire("k", 1).retryAfterMicros()).isEqualTo(MS);
            t.clock.setMicros(999);
            assertThat(t.tryAcquire("k", 1).retryAfterMicros()).isEqualTo(1);
            t.clock.setMicros(MS);
            assertThat(t.tryAcquire("k", 1).allowed()).isTrue();
            t.clock.setMicros(0); // the clock steps back: no leak, and `last` stays at 1 ms
            assertThat(t.tryAcquire("k", 1).retryAfterMicros()).isEqualTo(2 * MS);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void farFutureAtTheEndOfTheClock(Topology topology) {
        long start = Arith.MAX_TIME - 2_500_001;
        try (RedisTwin t = new RedisTwin(topology, start, "end", leaky(1, Duration.ofSeconds(1), 5, false, 0))) {
            assertThat(t.reserve("k", 1, FOREVER).waitMicros()).isZero();
            assertThat(t.reserve("k", 1, FOREVER).waitMicros()).isEqualTo(S);
            assertThat(t.reserve("k", 1, FOREVER).waitMicros()).isEqualTo(2 * S);
            // the next one would be used 3 s from now, after MAX_TIME; a try waits for 3 s of leak: never
            Decision late = t.reserve("k", 1, FOREVER);
            assertThat(late.allowed()).isFalse();
            assertThat(late.retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
            assertThat(late.resetAfterMicros()).isEqualTo(Long.MAX_VALUE);
            t.assertTtl("k", "lb", Arith.MAX_TIME - start); // drained only after the end of the clock
            t.clock.setMicros(Arith.MAX_TIME);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(6 - 1); // 2.5 s leaked of 3 s queued
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void bestEffortAsksForMoreThanTheBurst(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, TODAY, "best", leaky(10, Duration.ofSeconds(1), 5, true, 0))) {
            assertThat(t.tryAcquireAtMost("k", Limit.MAX_COUNT).granted()).isEqualTo(6);
            Decision none = t.tryAcquireAtMost("k", Limit.MAX_COUNT);
            assertThat(none.granted()).isZero();
            assertThat(none.retryAfterMicros()).isEqualTo(100 * MS);
            t.clock.advanceMillis(250);
            assertThat(t.tryAcquireAtMost("k", Limit.MAX_COUNT).granted()).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aParameterChangeKeepsTheExcessAndItsLastLeak(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, TODAY, "mig", leaky(1, Duration.ofSeconds(1), 5, false, 0))) {
            for (int i = 0; i < 3; i++) {
                t.reserve("k", 1, FOREVER); // excess 2000
            }
            t.updateLimit(leaky(2, Duration.ofSeconds(1), 5, false, 0));
            assertThat(t.reserve("k", 1, FOREVER).waitMicros()).isEqualTo(1_500 * MS); // excess 3000 at 2/s
            t.updateLimit(leaky(2, Duration.ofSeconds(1), 2, false, 0)); // the excess is above the new burst
            assertThat(t.peek("k", 0).remaining()).isZero();
            assertThat(t.reserve("k", 1, FOREVER).allowed()).isFalse();
            t.clock.advanceMillis(1_000); // leaked 2000: excess 1000, a request leaves 2000
            assertThat(t.reserve("k", 1, FOREVER).waitMicros()).isEqualTo(S);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void hugeCountsAndProductsPastTwoToThe53StayExact(Topology topology) {
        // 10^9 per 366 days: the leak 10^12 * elapsed passes 2^53 after 2.5 hours
        try (RedisTwin t = new RedisTwin(topology, TODAY, "huge", leaky(MAX_LIMIT, Duration.ofDays(366), MAX_LIMIT, true, 0))) {
            Decision all = t.tryAcquire("k", MAX_LIMIT + 1);
            assertThat(all.remaining()).isZero();
            assertThat(all.resetAfterMicros()).isEqualTo(31_622_400_031_623L); // ceil((10^12 + 1000) * 31.6224)
            t.clock.advanceMicros(1);
            assertThat(t.tryAcquire("k", 1).retryAfterMicros()).isEqualTo(31_622); // ceil(1000 * 31.6224) - 1
            t.clock.advanceMicros(86_400 * S - 1);
            // leaked floor(10^12 * 86_400 / 31_622_400) = 2_732_240_437 milli-requests
            assertThat(t.peek("k", 0).remaining()).isEqualTo(2_732_240);
            for (long odd : new long[] {7_777_777_777L, 123_456_789_012L, 3_333_333_333_333L}) {
                t.clock.advanceMicros(odd);
                t.peek("k", 0);
                t.tryAcquireAtMost("k", Limit.MAX_COUNT);
            }
        }
        // 1 per 366 days with a burst of 10^9: the wait of the last one is 3 * 10^22 µs, drained never
        try (RedisTwin t = new RedisTwin(topology, TODAY, "slow", leaky(1, Duration.ofDays(366), MAX_LIMIT, false, 0))) {
            assertThat(t.tryAcquire("k", 1).allowed()).isTrue();
            Decision far = t.reserve("k", MAX_LIMIT, FOREVER);
            assertThat(far.allowed()).isFalse();
            assertThat(far.retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
            assertThat(t.reserve("k", 200, FOREVER).waitMicros()).isEqualTo(200L * 31_622_400 * S);
            t.assertTtl("k", "lb", 201L * 31_622_400 * S);
        }
    }
}
