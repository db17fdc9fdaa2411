package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SmoothWarmingUp;
import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * smooth_warming_up's port at its edges, through the whole stack on standalone and on the cluster. Every
 * decision is also made by the in-memory store on the same clock and must be equal ({@link RedisTwin}).
 * The numbers are Guava's testWarmUp: 2 permits/s (500,000 us), warmup 4 s, cold factor 3: threshold 4
 * permits, maxPermits 8, slope 250,000 us per permit.
 */
@ExtendWith(SharedRedis.class)
class SmoothWarmingUpRedisIT {

    private static final long MS = 1_000;
    private static final long T0 = 1_767_225_600_000_000L;
    private static final Duration FOREVER = Duration.ofDays(365L * 1000);
    private static final SmoothWarmingUp GUAVA = SmoothWarmingUp.of(2.0, Duration.ofSeconds(4));

    private final String prefix = "swu-" + UUID.randomUUID().toString().substring(0, 8);

    private RedisTwin twin(Topology topology, ManualClock clock, Limit limit) {
        return new RedisTwin(topology, prefix, clock, Rule.of("swu", limit));
    }

    private static long pttl(Topology topology, String key) {
        return (Long) topology.call(key, "PTTL", key);
    }

    /** Acquires one permit at a time as Guava's acquire() does: reserve, then sleep the wait. */
    private static List<Long> acquire(RedisTwin l, int times) {
        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            Decision d = l.both(r -> r.reserve("k", 1, FOREVER));
            waits.add(d.waitMicros());
            l.clock.advanceMicros(d.waitMicros());
        }
        return waits;
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aNewKeyIsColdAndWarmsUpAsGuavasTestWarmUp(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), GUAVA)) {
            Decision peek = l.both(r -> r.peek("k", 0));
            assertThat(peek.remaining()).as("cold: all 8 permits stored").isEqualTo(8);
            assertThat(peek.resetAfterMicros()).isZero();
            assertThat(topology.keys(prefix + ":*")).isEmpty();
            assertThat(acquire(l, 1)).containsExactly(0L);
            // 7 stored, ticket at 1.375 s: full again 1 permit * 500,000 us later
            assertThat(pttl(topology, l.stateKey("k", "smooth_warming_up"))).isBetween(1_875L, 2_875L);
            assertThat(acquire(l, 7)).containsExactly(1_375 * MS, 1_125 * MS, 875 * MS, 625 * MS, 500 * MS, 500 * MS,
                    500 * MS);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aKeyThatCooledDownIsExactlyANewKey(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), GUAVA)) {
            acquire(l, 8);
            Decision warm = l.both(r -> r.peek("k", 0));
            assertThat(warm.resetAfterMicros()).as("4 s of idling after the last ticket").isEqualTo(4_500 * MS);
            l.clock.advanceMicros(4_499_999);
            assertThat(l.both(r -> r.peek("k", 0)).remaining()).isEqualTo(7);
            l.clock.advanceMicros(1);
            Decision cold = l.both(r -> r.peek("k", 0));
            assertThat(cold.remaining()).isEqualTo(8);
            assertThat(cold.resetAfterMicros()).isZero();
            assertThat(acquire(l, 6)).containsExactly(0L, 1_375 * MS, 1_125 * MS, 875 * MS, 625 * MS, 500 * MS);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void atTheEpochAndAtTheEndOfTheClock(Topology topology) {
        ManualClock clock = new ManualClock(0);
        try (RedisTwin l = twin(topology, clock, GUAVA)) {
            Decision huge = l.both(r -> r.reserve("k", Limit.MAX_COUNT, FOREVER));
            assertThat(huge.waitMicros()).isZero();
            assertThat(huge.resetAfterMicros()).as("the ticket saturates at the end of the clock")
                    .isEqualTo(Arith.NEVER); // full again only past the end of the clock
            assertThat(l.both(r -> r.tryAcquire("k")).retryAfterMicros()).isEqualTo(Arith.MAX_TIME);
            assertThat(pttl(topology, l.stateKey("k", "smooth_warming_up"))).isGreaterThan(Arith.MAX_TIME / 1_000);

            clock.setMicros(Arith.MAX_TIME);
            Decision last = l.both(r -> r.tryAcquire("k", 3));
            assertThat(last.allowed()).isTrue();
            assertThat(last.resetAfterMicros()).isEqualTo(Arith.NEVER); // past the end of the clock
            Decision fresh = l.both(r -> r.tryAcquire("other"));
            assertThat(fresh.resetAfterMicros()).isEqualTo(Arith.NEVER); // past the end of the clock
            assertThat(l.both(r -> r.peek("other", 0)).remaining()).as("the ticket has not moved past the clock")
                    .isEqualTo(7);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void bestEffortGrantsEverythingOnceTheTicketHasCome(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), GUAVA)) {
            assertThat(l.both(r -> r.tryAcquireAtMost("k", Limit.MAX_COUNT)).granted()).isEqualTo(Limit.MAX_COUNT);
            Decision none = l.both(r -> r.tryAcquireAtMost("k", 5));
            assertThat(none.granted()).isZero();
            assertThat(none.retryAfterMicros()).isEqualTo(Arith.MAX_TIME - T0);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void newParametersScaleTheStoredPermitsAsGuavasSetRate(Topology topology) {
        try (RedisTwin l = twin(topology, new ManualClock(T0), GUAVA)) {
            acquire(l, 2); // 6 stored, ticket at 2.5 s, now 1.375 s
            l.clock.advanceMillis(1_375);
            // 6.5 stored at 2/s; at 4/s the threshold is 8 and maxPermits 16: 6.5 * 16 / 8 = 13
            l.updateLimit(SmoothWarmingUp.of(4.0, Duration.ofSeconds(4)));
            Decision faster = l.both(r -> r.peek("k", 0));
            assertThat(faster.remaining()).isEqualTo(13);
            assertThat(faster.resetAfterMicros()).as("3 permits at 4 s / 16").isEqualTo(750 * MS);
            l.both(r -> r.reserve("k", 3, FOREVER));
            l.updateLimit(SmoothWarmingUp.of(4.0, Duration.ofSeconds(4)).withColdFactor(1.0));
            l.both(r -> r.reserve("k", 3, FOREVER));
            l.updateLimit(SmoothWarmingUp.of(4.0, Duration.ofMillis(1)));
            Decision shortWarmup = l.both(r -> r.peek("k", 0));
            assertThat(shortWarmup.remaining()).isZero();
            l.clock.advanceMillis(10_000);
            assertThat(l.both(r -> r.peek("k", 0)).remaining()).isEqualTo(l.both(r -> r.peek("new", 0)).remaining());
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void extremeParametersDecideAsJava(Topology topology) {
        ManualClock clock = new ManualClock(T0);
        List<SmoothWarmingUp> limits = List.of(
                new SmoothWarmingUp("w", 1_000_000.0, Duration.ofDays(366), 1000.0),
                new SmoothWarmingUp("w", 1.0 / 31_622_400, Duration.ofDays(366), 1000.0),
                new SmoothWarmingUp("w", 1.0 / 31_622_400, Duration.ofNanos(1_000), 1.0),
                new SmoothWarmingUp("w", 7.3, Duration.ofNanos(7_000), 2.5),
                new SmoothWarmingUp("w", 1_000_000.0, Duration.ofNanos(1_000), 3.0));
        Random random = new Random(7);
        for (int n = 0; n < limits.size(); n++) {
            try (RedisTwin l = new RedisTwin(topology, prefix, clock, Rule.of("x" + n, limits.get(n)))) {
                for (int i = 0; i < 40; i++) {
                    long permits = random.nextBoolean() ? 1 + random.nextInt(5) : Limit.MAX_COUNT - random.nextInt(3);
                    Duration maxWait = Duration.ofMillis(random.nextInt(3_000));
                    switch (random.nextInt(4)) {
                        case 0 -> l.both(r -> r.tryAcquire("k", permits));
                        case 1 -> l.both(r -> r.tryAcquireAtMost("k", permits));
                        case 2 -> l.both(r -> r.reserve("k", permits, maxWait));
                        default -> l.both(r -> r.peek("k", 0));
                    }
                    clock.advanceMicros(random.nextInt(3) == 0 ? 0 : (long) Math.pow(10, random.nextInt(14)));
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void serverTimeGivesTheKeyExactlyItsLifetime(Topology topology) {
        try (RedisStore store = topology.builder().prefix(prefix).build();
             RateLimiter l = RateLimiter.builder(Rule.of("srv", GUAVA)).store(store).build()) {
            // 20 permits from a cold key: the 8 stored cost 6 s (the trapezoid and the rectangle), the 12 fresh ones
            // 6 s, and the empty key is full again 4 s after the ticket
            assertThat(l.tryAcquire("k", 20).resetAfterMicros()).isEqualTo(16_000 * MS);
            assertThat(pttl(topology, prefix + ":{srv:k}:smooth_warming_up")).isBetween(15_000L, 16_001L);
            assertThat(l.tryAcquire("k").allowed()).isFalse();
        }
    }
}
