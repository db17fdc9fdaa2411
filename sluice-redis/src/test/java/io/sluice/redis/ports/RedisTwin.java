package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.StoreTwin;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Function;

/**
 * The testkit's {@link StoreTwin} with the in-memory store (the Java transitions) as the reference and Redis (the
 * Lua ports) under test, plus inspection of the Redis keys that does not need to know how a state is encoded (TTL,
 * existence). For the per-algorithm edge-case ITs. The Redis store answers with the script's own answer, not a
 * cached repeat of a denial (RedisDenialCacheIT tests those).
 */
final class RedisTwin implements AutoCloseable {

    /** 2026-01-01T00:00Z in µs: a start for timelines that need today's magnitudes rather than the epoch's. */
    static final long TODAY = 1_767_225_600_000_000L;

    final ManualClock clock;
    final String prefix;
    final Topology topology;
    private final StoreTwin twin;

    /** {@code rule} on a fresh prefix, the clock starting at {@code startMicros}. */
    RedisTwin(Topology topology, long startMicros, Rule rule) {
        this(topology, "twin-" + UUID.randomUUID().toString().substring(0, 8), new ManualClock(startMicros), rule);
    }

    /** A rule of {@code limits} named {@code ruleName} on a fresh prefix, the clock starting at {@code startMicros}. */
    RedisTwin(Topology topology, long startMicros, String ruleName, Limit... limits) {
        this(topology, startMicros, Rule.of(ruleName, limits));
    }

    RedisTwin(Topology topology, String prefix, ManualClock clock, Rule rule) {
        this.topology = topology;
        this.prefix = prefix;
        this.clock = clock;
        Store memory = Store.memory().clock(clock).build();
        RedisStore redis = topology.builder().prefix(prefix).clock(clock).cacheDenials(false).build();
        this.twin = new StoreTwin(clock, rule, memory, redis);
    }

    Decision both(Function<RateLimiter, Decision> call) {
        return twin.both(call);
    }

    Decision tryAcquire(String key, long permits) {
        return twin.tryAcquire(key, permits);
    }

    Decision tryAcquireAtMost(String key, long permits) {
        return twin.tryAcquireAtMost(key, permits);
    }

    Decision reserve(String key, long permits, Duration maxWait) {
        return twin.reserve(key, permits, maxWait);
    }

    Decision peek(String key, long permits) {
        return twin.peek(key, permits);
    }

    boolean release(String key, long lease) {
        return twin.release(key, lease);
    }

    void updateLimit(Limit limit) {
        twin.updateLimit(limit);
    }

    void reset(String key) {
        twin.reset(key);
    }

    Rule rule() {
        return twin.rule();
    }

    /** The Redis key of {@code limit}'s state on {@code key} (names without characters that need escaping). */
    String stateKey(String key, String limit) {
        return prefix + ":{" + rule().name() + ":" + key + "}:" + limit;
    }

    boolean exists(String key, String limit) {
        String k = stateKey(key, limit);
        return ((Long) topology.call(k, "EXISTS", k)) == 1;
    }

    /** The state key's TTL in milliseconds (-2: no key, -1: no TTL). */
    long pttl(String key, String limit) {
        String k = stateKey(key, limit);
        return (Long) topology.call(k, "PTTL", k);
    }

    /**
     * Asserts the client-time TTL rule: the state lives {@code untilExpiry} µs (rounded up to a millisecond)
     * plus the 1 s of slack, counted on the server's clock since the write; a little has passed since.
     */
    void assertTtl(String key, String limit, long untilExpiryMicros) {
        long expected = (untilExpiryMicros + 999) / 1_000 + 1_000;
        assertThat(pttl(key, limit)).as("PTTL of " + stateKey(key, limit))
                .isLessThanOrEqualTo(expected).isGreaterThan(expected - 900);
    }

    /** Asserts the four fields an edge case pins, each failure naming the field and showing the whole decision. */
    static void assertDecision(Decision d, boolean allowed, long remaining, long retryAfter, long resetAfter) {
        assertThat(d.allowed()).as("allowed: %s", d).isEqualTo(allowed);
        assertThat(d.remaining()).as("remaining: %s", d).isEqualTo(remaining);
        assertThat(d.retryAfterMicros()).as("retry-after: %s", d).isEqualTo(retryAfter);
        assertThat(d.resetAfterMicros()).as("reset-after: %s", d).isEqualTo(resetAfter);
    }

    @Override
    public void close() {
        twin.close();
    }
}
