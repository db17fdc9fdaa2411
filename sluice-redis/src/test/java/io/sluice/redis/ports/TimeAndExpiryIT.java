package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Server time against client time, and the rule that every key the store writes expires. */
@ExtendWith(SharedRedis.class)
class TimeAndExpiryIT {

    private final String prefix = "time-" + UUID.randomUUID().toString().substring(0, 8);

    private static long serverMicros(Topology topology) {
        List<?> t = (List<?>) topology.nodes().get(0).call("TIME");
        return Long.parseLong((String) t.get(0)) * 1_000_000 + Long.parseLong((String) t.get(1));
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void serverTimeModeUsesRedisTime(Topology topology) {
        long window = 3_600_000_000L;
        try (RedisStore store = topology.builder().prefix(prefix).build();
             RateLimiter l = RateLimiter.builder(Rule.of("srv", FixedWindow.of(5, Duration.ofHours(1))))
                     .store(store).build()) {
            long before = serverMicros(topology);
            Decision d = l.tryAcquire("k");
            long after = serverMicros(topology);
            // The reset is the rest of the epoch-aligned hour at the server's TIME during the call.
            assertThat(d.resetAfterMicros()).isBetween(window - after % window, window - before % window);
            long start = topology.state(prefix + ":{srv:k}:fixed_window").windowStart();
            assertThat(start).isEqualTo(before - before % window);
            // The key expires when the window ends, by the absolute time the script set (PEXPIRETIME, Redis 7):
            // exact, and unlike a PTTL read afterwards, independent of how long the test took to ask.
            long expiresAtMillis = (Long) topology.call("k", "PEXPIRETIME", prefix + ":{srv:k}:fixed_window");
            assertThat(expiresAtMillis * 1000).isEqualTo(start + window);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void clientTimeModeUsesTheClockEvenFarFromServerTime(Topology topology) {
        ManualClock clock = new ManualClock(946_684_800_123_456L); // 2000-01-01T00:00:00.123456Z
        try (RedisStore store = topology.builder().prefix(prefix).clock(clock).build();
             RateLimiter l = RateLimiter.builder(Rule.of("cli", FixedWindow.of(5, Duration.ofSeconds(10))))
                     .store(store).build()) {
            Decision d = l.tryAcquire("k");
            assertThat(d.resetAfterMicros()).isEqualTo(10_000_000 - 123_456);
            assertThat(topology.state(prefix + ":{cli:k}:fixed_window").windowStart()).isEqualTo(946684800000000L);
            // The TTL is the remaining duration counted on the server's clock, plus one second of slack.
            long pttl = (Long) topology.call("k", "PTTL", prefix + ":{cli:k}:fixed_window");
            assertThat(pttl).isBetween(10_800L, 10_877L);
            clock.advance(Duration.ofSeconds(10));
            assertThat(l.tryAcquire("k").remaining()).as("a new window by the client's clock").isEqualTo(4);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aClockOutsideTheSupportedRangeIsAnError(Topology topology) {
        ManualClock clock = new ManualClock(-1);
        try (RedisStore store = topology.builder().prefix(prefix).clock(clock).build();
             RateLimiter l = RateLimiter.builder(Rule.of("bad", FixedWindow.of(5, Duration.ofSeconds(10))))
                     .store(store).build()) {
            assertThatThrownBy(() -> l.tryAcquire("k")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("clock reading");
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void everyKeyTheStoreWritesHasATtl(Topology topology) {
        ManualClock clock = new ManualClock();
        Rule rule = Rule.of("ttl", FixedWindow.of(3, Duration.ofSeconds(30)).named("short"),
                FixedWindow.of(10, Duration.ofDays(366)).named("long").withCountRejected(true));
        try (RedisStore store = topology.builder().prefix(prefix).clock(clock).build();
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            for (int i = 0; i < 40; i++) {
                l.tryAcquire("user:" + (i % 7), 1 + i % 3);
                l.peek("user:" + (i % 5), 1);
                l.tryAcquireAtMost("{t}:" + (i % 3), 2);
            }
            List<String> keys = topology.keys(prefix + ":*");
            assertThat(keys).isNotEmpty();
            for (String key : keys) {
                long pttl = (Long) topology.call(key, "PTTL", key);
                assertThat(pttl).as(key).isPositive();
                if (key.endsWith(":short")) {
                    assertThat(pttl).as(key).isLessThanOrEqualTo(31_000);
                }
            }
            assertThat(keys).anyMatch(k -> k.endsWith(":long")).anyMatch(k -> k.contains(":r:"));
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void nothingIsStoredForAKeyWithNothingToRemember(Topology topology) {
        try (RedisStore store = topology.builder().prefix(prefix).clock(new ManualClock()).build();
             RateLimiter l = RateLimiter.builder(Rule.of("empty", FixedWindow.of(3, Duration.ofSeconds(30))))
                     .store(store).build()) {
            l.peek("k", 3);
            l.peek("k", 0);
            assertThat(topology.keys(prefix + ":{empty:*")).isEmpty();
            l.tryAcquire("k");
            l.reset("k");
            assertThat(topology.keys(prefix + ":{empty:k}:fixed_window")).isEmpty();
        }
    }
}
