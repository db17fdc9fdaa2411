package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import static io.sluice.redis.ports.RedisTwin.TODAY;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The gcra port at its edges, on standalone and on the cluster: every decision is made by the Lua port and by
 * the Java transition (in memory) on one clock and must be identical ({@link RedisTwin}); the numbers asserted
 * besides are redis_rate's and the essay's. The port stores TAT as allowAt + burstOffset, two exact integers,
 * because TAT passes 2^53 whenever now + burst·T does (today already, for a burst offset near 2^53).
 */
@ExtendWith(SharedRedis.class)
class GcraRedisIT {

    private static final long MS = 1_000;
    private static final long S = 1_000_000;
    private static final Duration FOREVER = Duration.ofDays(365L * 1000); // the facade's unbounded maxWait

    private static Gcra gcra(long limit, Duration period, long burst) {
        return new Gcra("g", limit, period, burst);
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void emptyStateFollowsRedisRatesTestAllow(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, TODAY, "allow", gcra(10, Duration.ofSeconds(1), 10))) {
            assertThat(t.peek("k", 0).remaining()).isEqualTo(10);
            assertThat(t.exists("k", "g")).as("a peek writes nothing").isFalse();
            Decision one = t.tryAcquire("k", 1);
            assertThat(one.remaining()).isEqualTo(9);
            assertThat(one.resetAfterMicros()).isEqualTo(100 * MS);
            Decision two = t.tryAcquire("k", 2);
            assertThat(two.remaining()).isEqualTo(7);
            assertThat(two.resetAfterMicros()).isEqualTo(300 * MS);
            Decision seven = t.tryAcquire("k", 7);
            assertThat(seven.remaining()).isZero();
            assertThat(seven.resetAfterMicros()).isEqualTo(S);
            Decision rejected = t.tryAcquire("k", 1);
            assertThat(rejected.allowed()).isFalse();
            assertThat(rejected.retryAfterMicros()).isEqualTo(100 * MS);
            assertThat(rejected.resetAfterMicros()).isEqualTo(S);
            t.assertTtl("k", "g", S);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void anExpiredStateIsAFreshKey(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, TODAY, "expiry", gcra(10, Duration.ofSeconds(1), 10))) {
            t.tryAcquire("k", 4);
            t.clock.advanceMicros(400 * MS - 1);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(9);
            assertThat(t.peek("k", 0).resetAfterMicros()).isEqualTo(1);
            t.clock.advanceMicros(1); // now = TAT
            Decision fresh = t.peek("k", 0);
            assertThat(fresh.remaining()).isEqualTo(10);
            assertThat(fresh.resetAfterMicros()).isZero();
            assertThat(t.tryAcquire("k", 10).allowed()).isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void clockAtTheEpochStoresANegativeAllowAt(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, 0, "epoch", gcra(10, Duration.ofSeconds(1), 10))) {
            assertThat(t.tryAcquire("k", 3).allowed()).isTrue(); // allow_at = -700 ms
            assertThat(t.tryAcquire("k", 7).remaining()).isZero();
            assertThat(t.tryAcquire("k", 1).retryAfterMicros()).isEqualTo(100 * MS);
            t.clock.setMicros(100 * MS - 1);
            assertThat(t.tryAcquire("k", 1).retryAfterMicros()).isEqualTo(1);
            t.clock.setMicros(100 * MS);
            assertThat(t.tryAcquire("k", 1).allowed()).isTrue();
            t.clock.setMicros(0); // the clock steps back: the TAT stands
            assertThat(t.peek("k", 0).resetAfterMicros()).isEqualTo(S + 100 * MS);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aTatBeyondTwoToThe53IsExactTodayAndAcrossAMigration(Topology topology) {
        // T = 9007 µs and B = 9_007_000_000_000_000 µs (about 285 years), just under 2^53: TAT = now + B > 2^53
        Gcra wide = gcra(1, Duration.ofNanos(9_007_000), Limit.MAX_COUNT);
        try (RedisTwin t = new RedisTwin(topology, TODAY + 1, "wide", wide)) {
            Decision all = t.tryAcquire("k", Limit.MAX_COUNT);
            assertThat(all.remaining()).isZero();
            assertThat(all.resetAfterMicros()).isEqualTo(9_007_000_000_000_000L);
            t.clock.advanceMicros(1);
            assertThat(t.peek("k", 0).resetAfterMicros()).as("odd, above 2^53 as a TAT").isEqualTo(9_006_999_999_999_999L);
            t.clock.advanceMicros(9_006);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(1);
            t.updateLimit(gcra(1, Duration.ofNanos(9_007_000), 5)); // keeps the TAT, judged with B = 45_035 µs
            Decision narrow = t.peek("k", 0);
            assertThat(narrow.remaining()).isZero();
            assertThat(narrow.resetAfterMicros()).isEqualTo(9_007_000_000_000_000L - 9_007);
            assertThat(t.tryAcquire("k", 1).retryAfterMicros()).isEqualTo(Long.MAX_VALUE); // allow_at past MAX_TIME
            // expires after the end of the clock: the key lives until MAX_TIME (plus the slack), not forever
            t.assertTtl("k", "g", Arith.MAX_TIME - t.clock.nowMicros());
            t.updateLimit(wide);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void farFutureAtTheEndOfTheClock(Topology topology) {
        long start = Arith.MAX_TIME - 12_345;
        try (RedisTwin t = new RedisTwin(topology, start, "end", gcra(10, Duration.ofSeconds(1), 10))) {
            Decision all = t.tryAcquire("k", 10);
            assertThat(all.resetAfterMicros()).isEqualTo(S); // TAT = start + 1 s, past MAX_TIME
            t.assertTtl("k", "g", 12_345);
            Decision next = t.reserve("k", 1, FOREVER);
            assertThat(next.allowed()).isFalse();
            assertThat(next.retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
            t.clock.setMicros(Arith.MAX_TIME);
            Decision atTheEnd = t.peek("k", 0);
            assertThat(atTheEnd.remaining()).isZero();
            assertThat(atTheEnd.resetAfterMicros()).isEqualTo(S - 12_345);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void bestEffortAsksForMoreThanTheBurst(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, TODAY, "best", gcra(10, Duration.ofSeconds(1), 5))) {
            assertThat(t.tryAcquireAtMost("k", Limit.MAX_COUNT).granted()).isEqualTo(5);
            Decision none = t.tryAcquireAtMost("k", Limit.MAX_COUNT);
            assertThat(none.granted()).isZero();
            assertThat(none.retryAfterMicros()).isEqualTo(100 * MS);
            t.clock.advanceMillis(250);
            assertThat(t.tryAcquireAtMost("k", Limit.MAX_COUNT).granted()).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aParameterChangeKeepsTheTat(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, TODAY, "mig", gcra(10, Duration.ofSeconds(1), 10))) {
            t.tryAcquire("k", 10); // TAT = now + 1 s
            t.updateLimit(gcra(20, Duration.ofSeconds(1), 20)); // T = 50 ms, B = 1 s
            assertThat(t.peek("k", 0).remaining()).isZero();
            t.clock.advanceMillis(50);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(1);
            t.updateLimit(gcra(20, Duration.ofSeconds(1), 30)); // B = 1.5 s
            assertThat(t.peek("k", 0).remaining()).isEqualTo(11);
            assertThat(t.tryAcquire("k", 11).resetAfterMicros()).isEqualTo(1_500 * MS);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void hugeCountsStayExact(Topology topology) {
        // 10^12 per 366 days: T = 32 µs, B = 3.2 * 10^13 µs
        try (RedisTwin t = new RedisTwin(topology, TODAY, "huge", gcra(Limit.MAX_COUNT, Duration.ofDays(366), Limit.MAX_COUNT))) {
            Decision all = t.tryAcquire("k", Limit.MAX_COUNT);
            assertThat(all.remaining()).isZero();
            assertThat(all.resetAfterMicros()).isEqualTo(32_000_000_000_000L);
            Decision again = t.reserve("k", Limit.MAX_COUNT, FOREVER);
            assertThat(again.waitMicros()).isEqualTo(32_000_000_000_000L);
            assertThat(again.resetAfterMicros()).isEqualTo(64_000_000_000_000L);
            t.assertTtl("k", "g", 64_000_000_000_000L);
            t.clock.advanceMicros(32 * 7 - 1);
            assertThat(t.peek("k", 0).resetAfterMicros()).isEqualTo(64_000_000_000_000L - 32 * 7 + 1);
        }
    }
}
