package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import java.util.function.Function;

/**
 * The same rule on the in-memory store and on Redis, on one manual clock: every call runs on both and must
 * decide identically, so an edge-case test states its expectations once and checks the port against the Java
 * transition at the same time.
 */
final class TwinLimiter implements AutoCloseable {

    final ManualClock clock;
    final String prefix;
    private final Store memoryStore;
    private final RedisStore redisStore;
    private final RateLimiter memory;
    private final RateLimiter redis;

    TwinLimiter(Topology topology, String prefix, ManualClock clock, Rule rule) {
        this.clock = clock;
        this.prefix = prefix;
        this.memoryStore = Store.memory().clock(clock).build();
        // The script's own answer, not a cached repeat of a denial (RedisDenialCacheIT tests those).
        this.redisStore = topology.builder().prefix(prefix).clock(clock).cacheDenials(false).build();
        this.memory = RateLimiter.builder(rule).store(memoryStore).sleeper(clock).build();
        this.redis = RateLimiter.builder(rule).store(redisStore).sleeper(clock).build();
    }

    /** The decision of {@code call} on Redis, after checking that memory decides the same. */
    Decision both(Function<RateLimiter, Decision> call) {
        Decision expected = call.apply(memory);
        Decision actual = call.apply(redis);
        assertThat(actual).as("Redis against memory at t=" + clock.nowMicros()).isEqualTo(expected);
        return actual;
    }

    void updateLimit(Limit limit) {
        memory.updateLimit(limit);
        redis.updateLimit(limit);
    }

    void reset(String key) {
        memory.reset(key);
        redis.reset(key);
    }

    Rule rule() {
        return redis.rule();
    }

    /** The Redis key of {@code limit}'s state on {@code key}. */
    String stateKey(String key, String limit) {
        return prefix + ":{" + rule().name() + ":" + key + "}:" + limit;
    }

    @Override
    public void close() {
        memory.close();
        redis.close();
        memoryStore.close();
        redisStore.close();
    }
}
