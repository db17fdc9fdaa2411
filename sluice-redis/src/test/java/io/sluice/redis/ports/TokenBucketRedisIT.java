package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import static io.sluice.redis.ports.RedisTwin.TODAY;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.TokenBucket;
import io.sluice.TokenBucket.Refill;
import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The token_bucket port at its edges, on standalone and on the cluster: every decision is made by the Lua port
 * and by the Java transition (in memory) on one clock and must be identical ({@link RedisTwin}); the numbers
 * asserted besides are the essay's.
 */
@ExtendWith(SharedRedis.class)
class TokenBucketRedisIT {

    private static final long MS = 1_000;
    private static final long S = 1_000_000;
    private static final Duration FOREVER = Duration.ofDays(365L * 1000); // the facade's unbounded maxWait

    private static TokenBucket bucket(long capacity, long tokens, Duration period, Refill refill, long initial) {
        return new TokenBucket("tb", capacity, tokens, period, refill, initial);
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void emptyStateFollowsTheEssaysGreedyExampleWithItsRoundingError(Topology topology) {
        // 3 tokens per second (a = 3, b = 10^6), a bucket of 10 holding 2 (a new key holds 3, one is taken)
        try (RedisTwin t = new RedisTwin(topology, TODAY, "greedy", bucket(10, 3, Duration.ofSeconds(1), Refill.GREEDY, 3))) {
            assertThat(t.peek("k", 0).remaining()).isEqualTo(3);
            assertThat(t.exists("k", "tb")).as("a peek writes nothing").isFalse();
            assertThat(t.tryAcquire("k", 1).remaining()).isEqualTo(2);
            t.clock.advanceMillis(500);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(3); // +1, rounding error 500_000
            t.clock.advanceMillis(200);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(4); // +1 more, rounding error 100_000
            Decision six = t.tryAcquire("k", 6);
            assertThat(six.allowed()).isFalse();
            assertThat(six.retryAfterMicros()).isEqualTo(633_334); // ceil((2 * 10^6 - 100_000) / 3)
            Decision reserved = t.reserve("k", 6, Duration.ofSeconds(2));
            assertThat(reserved.waitMicros()).isEqualTo(633_334);
            assertThat(t.peek("k", 0).remaining()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void anExpiredStateIsAFreshKeyAndItsKeyLivesNoLongerThanNeeded(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, TODAY, "expiry", TokenBucket.of(5, 1, Duration.ofSeconds(1)).named("tb"))) {
            Decision d = t.tryAcquire("k", 3);
            assertThat(d.resetAfterMicros()).isEqualTo(3 * S);
            t.assertTtl("k", "tb", 3 * S);
            t.clock.advanceMillis(2_999);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(4);
            t.clock.advanceMillis(1);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(5);
            assertThat(t.tryAcquire("k", 5).remaining()).isZero();
            t.assertTtl("k", "tb", 5 * S);
        }
        // initialTokens < capacity: the state is kept, so a key idle until full comes back full (10 tokens), in
        // both stores; only a key never seen starts with 2
        try (RedisTwin t = new RedisTwin(topology, TODAY, "initial",
                bucket(10, 1, Duration.ofSeconds(1), Refill.GREEDY, 2), TokenBucket.of(100, 1, Duration.ofDays(1)))) {
            assertThat(t.tryAcquire("k", 2).allowed()).isTrue();
            t.clock.advanceMillis(9_999);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(9);
            t.clock.advanceMillis(1);
            assertThat(t.peek("k", 0).remaining()).as("full, and not a new key").isEqualTo(10);
            t.clock.advanceMillis(3_600_000);
            assertThat(t.tryAcquire("k", 10).allowed()).isTrue();
            assertThat(t.tryAcquire("other", 3).allowed()).isFalse();
        }
        // initialTokens 0: the first rejection creates the bucket, which refills from then on
        try (RedisTwin t = new RedisTwin(topology, TODAY, "empty",
                bucket(5, 1, Duration.ofSeconds(1), Refill.GREEDY, 0), TokenBucket.of(100, 1, Duration.ofDays(1)))) {
            Decision first = t.tryAcquire("k", 1);
            assertThat(first.allowed()).isFalse();
            assertThat(first.retryAfterMicros()).isEqualTo(S);
            t.clock.advanceMillis(999);
            assertThat(t.tryAcquire("k", 1).allowed()).isFalse();
            t.clock.advanceMillis(1);
            assertThat(t.tryAcquire("k", 1).allowed()).isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void clockAtTheEpoch(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, 0, "epoch", bucket(3, 3, Duration.ofSeconds(1), Refill.INTERVAL_ALIGNED, 3))) {
            assertThat(t.tryAcquire("k", 3).resetAfterMicros()).isEqualTo(S);
            t.clock.setMicros(999_999);
            assertThat(t.tryAcquire("k", 1).retryAfterMicros()).isEqualTo(1);
            t.clock.setMicros(S);
            assertThat(t.tryAcquire("k", 3).allowed()).isTrue();
            t.clock.setMicros(0); // the clock steps back: no time passed
            assertThat(t.peek("k", 0).remaining()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void farFutureAtTheEndOfTheClock(Topology topology) {
        long start = Arith.MAX_TIME - 2_500_001;
        try (RedisTwin t = new RedisTwin(topology, start, "end", TokenBucket.of(10, 1, Duration.ofSeconds(1)).named("tb"),
                bucket(7, 3, Duration.ofMillis(1), Refill.INTERVAL, 7).named("iv"))) {
            assertThat(t.tryAcquire("k", 7).allowed()).isTrue(); // tb: 3 left, iv: 0 left
            assertThat(t.reserve("k", 3, FOREVER).waitMicros()).isEqualTo(MS); // iv's next period
            // tb's 3rd token would come 3 s from now, after MAX_TIME: never; its 2nd one is still in time
            Decision never = t.reserve("k", 3, FOREVER);
            assertThat(never.allowed()).isFalse();
            assertThat(never.retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
            assertThat(never.limit()).isEqualTo("tb");
            assertThat(t.reserve("k", 2, FOREVER).waitMicros()).isEqualTo(2 * S);
            t.assertTtl("k", "tb", Arith.MAX_TIME - start); // full only after the end of the clock
            t.clock.setMicros(Arith.MAX_TIME);
            assertThat(t.peek("k", 0).remaining()).isZero();
            assertThat(t.tryAcquireAtMost("k", 10).allowed()).isFalse();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void bestEffortAsksForMoreThanTheCapacity(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, TODAY, "best", TokenBucket.of(5, 1, Duration.ofSeconds(1)).named("tb"),
                bucket(8, 1, Duration.ofSeconds(1), Refill.INTERVAL, 8).named("iv"))) {
            assertThat(t.tryAcquireAtMost("k", Limit.MAX_COUNT).granted()).isEqualTo(5);
            assertThat(t.tryAcquireAtMost("k", Limit.MAX_COUNT).granted()).isZero();
            t.clock.advanceMillis(2_500);
            Decision d = t.tryAcquireAtMost("k", Limit.MAX_COUNT);
            assertThat(d.granted()).isEqualTo(2);
            assertThat(d.limit()).isEqualTo("tb");
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aParameterChangeMidRefillKeepsTheTokensAsBucket4jAsIs(Topology topology) {
        try (RedisTwin t = new RedisTwin(topology, TODAY, "mig", bucket(10, 3, Duration.ofSeconds(1), Refill.GREEDY, 10))) {
            t.tryAcquire("k", 10);
            t.clock.advanceMillis(500); // 1 token and half a token of rounding error
            t.updateLimit(bucket(20, 3, Duration.ofSeconds(1), Refill.GREEDY, 20)); // same rate: error kept
            assertThat(t.peek("k", 0).remaining()).isEqualTo(1);
            t.clock.advanceMillis(200);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(2);
            t.updateLimit(bucket(20, 6, Duration.ofSeconds(2), Refill.GREEDY, 20)); // same reduced rate 3/10^6
            t.clock.advanceMillis(100); // migrated at +800 ms: 2 tokens, rounding error 400_000
            assertThat(t.peek("k", 0).remaining()).isEqualTo(2);
            t.clock.advanceMicros(199_999);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(2);
            t.clock.advanceMicros(1);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(3);
            t.updateLimit(bucket(2, 1, Duration.ofMinutes(1), Refill.INTERVAL_ALIGNED, 2)); // capped, on the grid
            assertThat(t.peek("k", 0).remaining()).isEqualTo(2);
            assertThat(t.tryAcquire("k", 2).resetAfterMicros()).isPositive();
            // leaving the grid keeps its period start: one second of the new 1 s period has passed
            t.updateLimit(bucket(2, 1, Duration.ofSeconds(1), Refill.INTERVAL, 2));
            assertThat(t.peek("k", 0).remaining()).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void hugeCountsStayExact(Topology topology) {
        // 10^12 tokens refilled at 10^12 per µs: a = 10^12, b = 1
        try (RedisTwin t = new RedisTwin(topology, TODAY, "huge",
                bucket(Limit.MAX_COUNT, Limit.MAX_COUNT, Duration.ofNanos(1_000), Refill.GREEDY, Limit.MAX_COUNT))) {
            assertThat(t.tryAcquire("k", Limit.MAX_COUNT).remaining()).isZero();
            for (int i = 0; i < 3; i++) {
                assertThat(t.reserve("k", Limit.MAX_COUNT, FOREVER).waitMicros()).isEqualTo(i + 1);
            }
            t.clock.advanceMicros(2);
            assertThat(t.peek("k", 1).allowed()).isFalse();
            t.clock.advanceMicros(1);
            assertThat(t.peek("k", 0).remaining()).isZero();
            t.clock.advanceMicros(1);
            assertThat(t.peek("k", 0).remaining()).isEqualTo(Limit.MAX_COUNT);
        }
        // 1 token a year: debts up to the 2^53 bound, and a refill after the end of the clock ("never")
        try (RedisTwin t = new RedisTwin(topology, TODAY, "slow",
                bucket(Limit.MAX_COUNT, 1, Duration.ofDays(366), Refill.GREEDY, Limit.MAX_COUNT))) {
            Decision all = t.tryAcquire("k", Limit.MAX_COUNT);
            assertThat(all.resetAfterMicros()).isEqualTo(Long.MAX_VALUE);
            // never full again within the clock: the key lives until MAX_TIME (plus the slack), not forever
            t.assertTtl("k", "tb", Arith.MAX_TIME - TODAY);
            assertThat(t.reserve("k", 1, FOREVER).waitMicros()).isEqualTo(31_622_400 * S);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void withServerTimeANeverFullBucketExpiresAtTheEndOfTheClock(Topology topology) {
        String prefix = "tbs-" + UUID.randomUUID().toString().substring(0, 8);
        TokenBucket yearly = bucket(Limit.MAX_COUNT, 1, Duration.ofDays(366), Refill.GREEDY, Limit.MAX_COUNT);
        try (RedisStore store = topology.builder().prefix(prefix).build();
             RateLimiter l = RateLimiter.builder(Rule.of("srv", yearly)).store(store).build()) {
            assertThat(l.tryAcquire("k", 2).resetAfterMicros()).isEqualTo(2 * 31_622_400 * S);
            String key = prefix + ":{srv:k}:tb";
            long twoYears = (Long) topology.call(key, "PTTL", key);
            assertThat(twoYears).isBetween(2 * 31_622_400 * MS - 60_000, 2 * 31_622_400 * MS + 1);
            assertThat(l.tryAcquire("k", Limit.MAX_COUNT - 2).resetAfterMicros()).isEqualTo(Long.MAX_VALUE);
            // never full again within the clock: PEXPIREAT the end of the clock, 2^53 µs rounded up to a ms
            long end = (Arith.MAX_TIME + MS - 1) / MS;
            long before = System.currentTimeMillis();
            long pttl = (Long) topology.call(key, "PTTL", key);
            long after = System.currentTimeMillis();
            assertThat(pttl).isBetween(end - after - 5, end - before + 5);
        }
    }
}
