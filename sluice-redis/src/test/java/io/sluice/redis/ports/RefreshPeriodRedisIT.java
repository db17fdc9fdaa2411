package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.Rule;
import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * refresh_period's port at its edges, through the whole stack on standalone and on the cluster. Every decision
 * is also made by the in-memory store on the same clock and must be equal ({@link RedisTwin}). Mostly 2
 * permits per 1 s cycle, cycles counted from the key's first request.
 */
@ExtendWith(SharedRedis.class)
class RefreshPeriodRedisIT {

    private static final long MS = 1_000;
    private static final long T0 = 1_767_225_600_000_000L;
    private static final Duration FOREVER = Duration.ofDays(365L * 1000);
    private static final RefreshPeriod TWO_PER_SECOND = RefreshPeriod.of(2, Duration.ofSeconds(1));

    private final String prefix = "rp-" + UUID.randomUUID().toString().substring(0, 8);

    private RedisTwin twin(Topology topology, ManualClock clock, Limit limit) {
        return new RedisTwin(topology, prefix, clock, Rule.of("rp", limit));
    }

    private static long pttl(Topology topology, String key) {
        return (Long) topology.call(key, "PTTL", key);
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aNewKeyStartsItsCyclesAtItsFirstRequest(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), TWO_PER_SECOND)) {
            Decision peek = l.both(r -> r.peek("k", 0));
            assertThat(peek.remaining()).isEqualTo(2);
            assertThat(peek.resetAfterMicros()).isZero();
            assertThat(topology.keys(prefix + ":*")).as("a peek stores nothing").isEmpty();
            l.clock.advanceMillis(300);
            Decision first = l.both(r -> r.tryAcquire("k"));
            assertThat(first.remaining()).isEqualTo(1);
            assertThat(first.resetAfterMicros()).as("cycle 1 starts a second after the first request")
                    .isEqualTo(1_000 * MS);
            // full after cycle 1's refresh, expired once idle through it: 2 s, plus the second of slack
            assertThat(pttl(topology, l.stateKey("k", "refresh_period"))).isBetween(2_000L, 3_000L);
            l.clock.advanceMillis(400);
            l.both(r -> r.tryAcquire("k"));
            Decision rejected = l.both(r -> r.tryAcquire("k"));
            assertThat(rejected.retryAfterMicros()).isEqualTo(600 * MS);
            Decision reserved = l.both(r -> r.reserve("k", 1, Duration.ofMillis(600)));
            assertThat(reserved.waitMicros()).isEqualTo(600 * MS);
            assertThat(reserved.resetAfterMicros()).as("the debt is paid by cycle 1, full at cycle 2")
                    .isEqualTo(1_600 * MS);
            Decision tooMany = l.both(r -> r.reserve("k", 4, Duration.ofSeconds(2)));
            assertThat(tooMany.allowed()).isFalse();
            assertThat(tooMany.retryAfterMicros()).as("4 > 2 permits never pass as a try").isEqualTo(Long.MAX_VALUE);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void anIdleKeyExpiresAfterAFullCycleAndComesBackWithANewPhase(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), TWO_PER_SECOND)) {
            l.both(r -> r.tryAcquire("k"));
            l.clock.advanceMillis(1_500);
            Decision old = l.both(r -> r.peek("k", 0));
            assertThat(old.remaining()).isEqualTo(2);
            l.clock.advanceMillis(900); // 2.4 s: the state expired at 2 s
            Decision renewed = l.both(r -> r.tryAcquire("k"));
            assertThat(renewed.remaining()).isEqualTo(1);
            assertThat(renewed.resetAfterMicros()).as("a new origin: the old phase would say 600 ms")
                    .isEqualTo(1_000 * MS);
            l.clock.advanceMillis(-500); // a clock that steps back meets the new key's active cycle start
            assertThat(l.both(r -> r.tryAcquire("k")).resetAfterMicros()).isEqualTo(1_000 * MS);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void atTheEpochAndAtTheEndOfTheClock(Topology topology) {
        ManualClock clock = new ManualClock(0);
        try (RedisTwin l = twin(topology, clock, TWO_PER_SECOND)) {
            assertThat(l.both(r -> r.tryAcquire("k", 2)).resetAfterMicros()).isEqualTo(1_000 * MS);
            assertThat(l.both(r -> r.tryAcquire("k")).retryAfterMicros()).isEqualTo(1_000 * MS);

            clock.setMicros(Arith.MAX_TIME - 1_500 * MS);
            l.both(r -> r.tryAcquire("end", 2));
            Decision last = l.both(r -> r.reserve("end", 1, FOREVER));
            assertThat(last.waitMicros()).as("usable at MAX_TIME - 0.5 s").isEqualTo(1_000 * MS);
            assertThat(last.resetAfterMicros()).as("full again only after the end of the clock")
                    .isEqualTo(Long.MAX_VALUE);
            Decision beyond = l.both(r -> r.reserve("end", 2, FOREVER));
            assertThat(beyond.allowed()).as("usable only after MAX_TIME, so never").isFalse();
            assertThat(pttl(topology, l.stateKey("end", "refresh_period"))).isPositive();
            clock.setMicros(Arith.MAX_TIME);
            Decision atEnd = l.both(r -> r.tryAcquire("end"));
            assertThat(atEnd.allowed()).isTrue();
            assertThat(atEnd.resetAfterMicros()).isEqualTo(Long.MAX_VALUE);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void bestEffortGrantsWhatTheCycleHasLeft(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), TWO_PER_SECOND)) {
            assertThat(l.both(r -> r.tryAcquireAtMost("k", Limit.MAX_COUNT)).granted()).isEqualTo(2);
            Decision none = l.both(r -> r.tryAcquireAtMost("k", Limit.MAX_COUNT));
            assertThat(none.allowed()).isFalse();
            assertThat(none.retryAfterMicros()).isEqualTo(1_000 * MS);
            l.clock.advanceMillis(1_000);
            assertThat(l.both(r -> r.tryAcquireAtMost("k", 5)).granted()).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void newParametersMidCycle(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), TWO_PER_SECOND)) {
            l.both(r -> r.tryAcquire("k", 2));
            // changeLimitForPeriod: the new limit applies from the next refresh
            l.updateLimit(RefreshPeriod.of(5, Duration.ofSeconds(1)));
            assertThat(l.both(r -> r.peek("k", 0)).remaining()).isZero();
            l.clock.advanceMillis(1_000);
            assertThat(l.both(r -> r.tryAcquire("k")).remaining()).isEqualTo(4);
            // lowered below what the cycle has: kept until the next refresh
            l.updateLimit(RefreshPeriod.of(3, Duration.ofSeconds(1)));
            assertThat(l.both(r -> r.peek("k", 0)).remaining()).isEqualTo(4);
            l.clock.advanceMillis(1_000);
            assertThat(l.both(r -> r.peek("k", 0)).remaining()).isEqualTo(3);
            // a new period recounts the cycles from the key's origin: at 2.5 s, cycle 1 of 2 s ends at 4 s
            l.clock.advanceMillis(500);
            l.updateLimit(RefreshPeriod.of(3, Duration.ofSeconds(2)));
            assertThat(l.both(r -> r.tryAcquire("k")).resetAfterMicros()).isEqualTo(1_500 * MS);
            // a timeout changes nothing
            l.updateLimit(RefreshPeriod.of(3, Duration.ofSeconds(2)).withTimeout(Duration.ofSeconds(30)));
            assertThat(l.both(r -> r.peek("k", 0)).remaining()).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void hugeCountsAndADebtThatOutlivesTheClock(Topology topology) {
        RefreshPeriod most = RefreshPeriod.of(Limit.MAX_COUNT, Duration.ofSeconds(1));
        try (RedisTwin l = twin(topology, new ManualClock(T0), most)) {
            assertThat(l.both(r -> r.tryAcquire("k", Limit.MAX_COUNT)).remaining()).isZero();
            assertThat(l.both(r -> r.reserve("k", Limit.MAX_COUNT, Duration.ofSeconds(1))).waitMicros())
                    .isEqualTo(1_000 * MS);
            assertThat(l.both(r -> r.reserve("k", Limit.MAX_COUNT, Duration.ofSeconds(2))).waitMicros())
                    .isEqualTo(2_000 * MS);
            // 2 * 10^12 permits owed, repaid at 5 per second: 12,680 years, past the end of the clock
            l.updateLimit(RefreshPeriod.of(5, Duration.ofSeconds(1)));
            Decision owing = l.both(r -> r.peek("k", 0));
            assertThat(owing.remaining()).isZero();
            assertThat(owing.resetAfterMicros()).isEqualTo(Long.MAX_VALUE);
            assertThat(l.both(r -> r.tryAcquire("k")).retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
            assertThat(pttl(topology, l.stateKey("k", "refresh_period"))).as("kept to the end of the clock")
                    .isGreaterThan((Arith.MAX_TIME - T0) / 1_000);
            // a microsecond period and 10^12 permits per cycle
            l.updateLimit(RefreshPeriod.of(Limit.MAX_COUNT, Duration.ofNanos(1_000)));
            for (int i = 0; i < 30; i++) {
                l.clock.advanceMicros(i % 3);
                l.both(r -> r.reserve("m", Limit.MAX_COUNT - 1, Duration.ofNanos(2_000)));
                l.both(r -> r.tryAcquireAtMost("m", Limit.MAX_COUNT));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void serverTimeGivesTheKeyExactlyItsLifetime(Topology topology) {
        try (RedisStore store = topology.builder().prefix(prefix).build();
             RateLimiter l = RateLimiter.builder(Rule.of("srv", TWO_PER_SECOND)).store(store).build()) {
            assertThat(l.tryAcquire("k").resetAfterMicros()).isEqualTo(1_000 * MS);
            assertThat(pttl(topology, prefix + ":{srv:k}:refresh_period")).isBetween(1_001L, 2_001L);
        }
    }
}
