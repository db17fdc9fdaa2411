package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import java.time.Duration;
import java.util.UUID;

/**
 * One rule on two stores, the in-memory store (the Java transitions) and Redis (the Lua ports), on one manual
 * clock: every call runs on both and asserts that they decide identically, then returns the decision for the
 * caller's own expectations. For the per-algorithm edge-case ITs of the ported buckets.
 */
final class PortTwin implements AutoCloseable {

    final ManualClock clock;
    final String prefix = "twin-" + UUID.randomUUID().toString().substring(0, 8);
    final Topology topology;
    private final Store memoryStore;
    private final RedisStore redisStore;
    private final RateLimiter memory;
    private final RateLimiter redis;
    private final String ruleName;

    PortTwin(Topology topology, long startMicros, String ruleName, Limit... limits) {
        this.topology = topology;
        this.clock = new ManualClock(startMicros);
        this.ruleName = ruleName;
        Rule rule = Rule.of(ruleName, limits);
        this.memoryStore = Store.memory().clock(clock).build();
        // The script's own answer, not a cached repeat of a denial (RedisDenialCacheIT tests those).
        this.redisStore = topology.builder().prefix(prefix).clock(clock).cacheDenials(false).build();
        this.memory = RateLimiter.builder(rule).store(memoryStore).sleeper(clock).build();
        this.redis = RateLimiter.builder(rule).store(redisStore).sleeper(clock).build();
    }

    Decision tryAcquire(String key, long permits) {
        return same(memory.tryAcquire(key, permits), redis.tryAcquire(key, permits), "tryAcquire " + permits);
    }

    Decision tryAcquireAtMost(String key, long permits) {
        return same(memory.tryAcquireAtMost(key, permits), redis.tryAcquireAtMost(key, permits),
                "tryAcquireAtMost " + permits);
    }

    Decision reserve(String key, long permits, Duration maxWait) {
        return same(memory.reserve(key, permits, maxWait), redis.reserve(key, permits, maxWait),
                "reserve " + permits + " within " + maxWait);
    }

    Decision peek(String key, long permits) {
        return same(memory.peek(key, permits), redis.peek(key, permits), "peek " + permits);
    }

    void updateLimit(Limit limit) {
        memory.updateLimit(limit);
        redis.updateLimit(limit);
    }

    /** The Redis key of one limit's state on {@code key} (a key without its own hash tag). */
    String stateKey(String key, String limit) {
        return prefix + ":{" + ruleName + ":" + key + "}:" + limit;
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

    private Decision same(Decision expected, Decision actual, String what) {
        assertThat(actual).as(what + " at t=" + clock.nowMicros() + " (memory, then Redis)").isEqualTo(expected);
        return actual;
    }

    @Override
    public void close() {
        memory.close();
        redis.close();
        memoryStore.close();
        redisStore.close();
    }
}
