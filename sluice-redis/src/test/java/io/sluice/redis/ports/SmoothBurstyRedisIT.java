package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SmoothBursty;
import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * smooth_bursty's port at its edges, through the whole stack on standalone and on the cluster. Every decision
 * is also made by the in-memory store on the same clock and must be equal ({@link RedisTwin}). The numbers:
 * 5 permits/s is a stable interval of 200,000 us, and a burst of 1 s saves up to 5 permits.
 */
@ExtendWith(SharedRedis.class)
class SmoothBurstyRedisIT {

    private static final long MS = 1_000;
    private static final long T0 = 1_767_225_600_000_000L;

    private final String prefix = "sb-" + UUID.randomUUID().toString().substring(0, 8);

    private RedisTwin twin(Topology topology, ManualClock clock, Limit... limits) {
        return new RedisTwin(topology, prefix, clock, Rule.of("sb", limits));
    }

    private static long pttl(Topology topology, String key) {
        return (Long) topology.call(key, "PTTL", key);
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aNewKeyHasAFullBurstAndTheRequestBeyondItPays(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), SmoothBursty.of(5.0))) {
            Decision peek = l.both(r -> r.peek("k", 0));
            assertThat(peek.remaining()).as("a key without state is idle, with a full burst saved").isEqualTo(5);
            assertThat(peek.resetAfterMicros()).isZero();
            assertThat(topology.keys(prefix + ":*")).as("a peek stores nothing").isEmpty();

            // the 5 saved permits and 3 fresh ones, admitted at once
            Decision three = l.both(r -> r.tryAcquire("k", 8));
            assertThat(three.allowed()).isTrue();
            assertThat(three.waitMicros()).isZero();
            assertThat(three.resetAfterMicros()).isEqualTo(1_600 * MS);
            // the state lives until it is full (1.6 s), plus the second of slack of client time
            assertThat(pttl(topology, l.stateKey("k", "smooth_bursty"))).isBetween(1_600L, 2_600L);

            Decision next = l.both(r -> r.tryAcquire("k"));
            assertThat(next.allowed()).isFalse();
            assertThat(next.retryAfterMicros()).as("the three permits are paid by the next request")
                    .isEqualTo(600 * MS);
            Decision reserved = l.both(r -> r.reserve("k", 1, Duration.ofMillis(600)));
            assertThat(reserved.allowed()).isTrue();
            assertThat(reserved.waitMicros()).isEqualTo(600 * MS);
            assertThat(l.both(r -> r.reserve("k", 1, Duration.ofMillis(799))).retryAfterMicros()).isEqualTo(800 * MS);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aFullKeyExpiresAndComesBackFull(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), SmoothBursty.of(5.0))) {
            assertThat(l.both(r -> r.tryAcquire("k", 6)).resetAfterMicros()).isEqualTo(1_200 * MS);
            l.clock.advanceMicros(1_199_999);
            Decision almost = l.both(r -> r.peek("k", 0));
            assertThat(almost.remaining()).as("999,999 us / 200,000 us = 4.999995 saved").isEqualTo(4);
            assertThat(almost.resetAfterMicros()).isEqualTo(1);
            l.clock.advanceMicros(1);
            // full: the state is dropped, and the key without it still has the full burst saved, as Guava's has
            Decision full = l.both(r -> r.peek("k", 0));
            assertThat(full.remaining()).isEqualTo(5);
            assertThat(full.resetAfterMicros()).isZero();
            assertThat(l.both(r -> r.tryAcquireAtMost("k", 3)).resetAfterMicros()).isEqualTo(600 * MS);
            l.clock.advanceMillis(-2); // back before the drop: the new state is what counts now
            assertThat(l.both(r -> r.tryAcquire("k")).allowed()).isFalse();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void inARuleOfSeveralLimitsAFullKeyExpiresOnItsOwn(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), FixedWindow.of(100, Duration.ofHours(1)),
                SmoothBursty.of(5.0))) {
            l.both(r -> r.tryAcquire("k"));
            l.clock.advanceMillis(1_200);
            Decision d = l.both(r -> r.peek("k", 0));
            assertThat(d.remaining()).as("the fixed window keeps its count, the bursty limit is full again").isEqualTo(5);
            assertThat(d.limit()).isEqualTo("smooth_bursty");
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void atTheEpochAndAtTheEndOfTheClock(Topology topology) {
        ManualClock clock = new ManualClock(0);
        try (RedisTwin l = twin(topology, clock, SmoothBursty.of(5.0))) {
            assertThat(l.both(r -> r.tryAcquire("k", 6)).resetAfterMicros()).isEqualTo(1_200 * MS);
            // a reservation of 10^12 permits pushes the ticket to the end of the clock (year 2255), no further
            Decision huge = l.both(r -> r.reserve("k", Limit.MAX_COUNT, Duration.ofDays(365L * 1000)));
            assertThat(huge.waitMicros()).isEqualTo(200 * MS);
            assertThat(huge.resetAfterMicros()).isEqualTo(Arith.NEVER); // full again only past the end of the clock
            assertThat(l.both(r -> r.tryAcquire("k")).retryAfterMicros()).isEqualTo(Arith.MAX_TIME);
            assertThat(pttl(topology, l.stateKey("k", "smooth_bursty"))).isGreaterThan(Arith.MAX_TIME / 1_000);

            clock.setMicros(Arith.MAX_TIME);
            Decision last = l.both(r -> r.tryAcquire("k"));
            assertThat(last.allowed()).as("the ticket has come at the end of the clock").isTrue();
            assertThat(last.resetAfterMicros()).isEqualTo(Arith.NEVER); // past the end of the clock
            assertThat(l.both(r -> r.tryAcquire("other", Limit.MAX_COUNT)).allowed()).isTrue();
            assertThat(l.both(r -> r.peek("other", 0)).resetAfterMicros()).isEqualTo(Arith.NEVER); // past the end of the clock
            clock.setMicros(Arith.MAX_TIME - 7);
            assertThat(l.both(r -> r.tryAcquire("other")).retryAfterMicros()).isEqualTo(7);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void bestEffortGrantsEverythingOnceTheTicketHasCome(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), SmoothBursty.of(5.0))) {
            Decision all = l.both(r -> r.tryAcquireAtMost("k", Limit.MAX_COUNT));
            assertThat(all.granted()).isEqualTo(Limit.MAX_COUNT);
            Decision none = l.both(r -> r.tryAcquireAtMost("k", 5));
            assertThat(none.allowed()).isFalse();
            assertThat(none.granted()).isZero();
            assertThat(none.retryAfterMicros()).isEqualTo(Arith.MAX_TIME - T0);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aNewRateScalesTheSavedPermitsAsGuavasSetRate(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), SmoothBursty.of(5.0))) {
            l.both(r -> r.tryAcquire("k", 6)); // the saved burst and one more: nothing saved, the ticket at 0.2 s
            l.clock.advanceMillis(700);
            // 2.5 permits saved at 5/s, scaled by 10 / 5 when the burst grows to 10 permits
            l.updateLimit(SmoothBursty.of(10.0));
            Decision faster = l.both(r -> r.peek("k", 0));
            assertThat(faster.remaining()).isEqualTo(5);
            assertThat(faster.resetAfterMicros()).isEqualTo(500 * MS);
            l.both(r -> r.tryAcquire("k", 4));
            // no burst at all: nothing saved, and a key with nothing owed is dropped at once
            l.updateLimit(SmoothBursty.of(10.0).withMaxBurstSeconds(0.0));
            Decision flat = l.both(r -> r.peek("k", 0));
            assertThat(flat.remaining()).isZero();
            assertThat(flat.resetAfterMicros()).isZero();
            assertThat(topology.keys(l.stateKey("k", "smooth_bursty"))).isEmpty();
            Decision paid = l.both(r -> r.tryAcquire("k", 2));
            assertThat(paid.resetAfterMicros()).as("the next request waits for the ticket only").isEqualTo(200 * MS);
            assertThat(pttl(topology, l.stateKey("k", "smooth_bursty"))).isBetween(200L, 1_200L);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void extremeRatesAndCounts(Topology topology) {
        ManualClock clock = new ManualClock(T0);
        try (RedisTwin slowest = twin(topology, clock, new SmoothBursty("slowest", 1.0 / 31_622_400, 31_622_400));
             RedisTwin fastest = new RedisTwin(topology, prefix, clock,
                     Rule.of("fast", new SmoothBursty("fastest", 1_000_000.0, 31_622_400)))) {
            Decision one = slowest.both(r -> r.tryAcquire("k", 2));
            // one permit per 366 days (an interval of 1 / (1 / 31,622,400) s, not exactly a whole number of us):
            // the saved one and one fresh, so full again after two intervals, to the microsecond as Java computes it
            assertThat(one.resetAfterMicros()).isBetween(2 * 31_622_400_000_000L - 2, 2 * 31_622_400_000_000L + 2);
            assertThat(slowest.both(r -> r.tryAcquire("k", Limit.MAX_COUNT)).allowed()).isFalse();
            // 366 days of burst at 10^6 per second: 3.16 * 10^13 permits saved by a key without state
            fastest.both(r -> r.tryAcquire("k", Limit.MAX_COUNT));
            Decision burst = fastest.both(r -> r.tryAcquire("k", Limit.MAX_COUNT));
            assertThat(burst.waitMicros()).isZero();
            assertThat(burst.remaining()).isEqualTo(31_622_400_000_000L - 2 * Limit.MAX_COUNT);
            for (int i = 0; i < 20; i++) {
                clock.advanceMicros(i * 37_123);
                fastest.both(r -> r.tryAcquire("k", Limit.MAX_COUNT - 1));
                fastest.both(r -> r.reserve("k", 1 + (Limit.MAX_COUNT >> 3), Duration.ofMillis(200)));
                slowest.both(r -> r.peek("k", 0));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void serverTimeGivesTheKeyExactlyItsLifetime(Topology topology) {
        try (RedisStore store = topology.builder().prefix(prefix).build();
             RateLimiter l = RateLimiter.builder(Rule.of("srv", SmoothBursty.of(5.0))).store(store).build()) {
            // 105 permits, 5 of them saved: the ticket 20 s ahead, full a second later
            Decision d = l.tryAcquire("k", 105);
            assertThat(d.resetAfterMicros()).isEqualTo(21_000 * MS);
            long pttl = pttl(topology, prefix + ":{srv:k}:smooth_bursty");
            assertThat(pttl).isBetween(20_000L, 21_001L);
            assertThat(l.tryAcquire("k").allowed()).isFalse();
        }
    }
}
