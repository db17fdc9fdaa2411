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
 * One rule on the in-memory store and on Redis, sharing a manual clock, for the edge-case ITs of the window and
 * concurrency ports: every call goes to both and must decide alike, and the Redis keys can be inspected
 * without knowing how a state is encoded (TTL, existence).
 */
final class WindowPortsTwin implements AutoCloseable {

    final ManualClock clock;
    private final Topology topology;
    private final String prefix = "wp-" + UUID.randomUUID().toString().substring(0, 8);
    private final Store memoryStore;
    private final RedisStore redisStore;
    private final RateLimiter memory;
    private final RateLimiter redis;

    WindowPortsTwin(Topology topology, long startMicros, Rule rule) {
        this.topology = topology;
        this.clock = new ManualClock(startMicros);
        this.memoryStore = Store.memory().clock(clock).build();
        // The script's own answer, not a cached repeat of a denial (RedisDenialCacheIT tests those).
        this.redisStore = topology.builder().prefix(prefix).clock(clock).cacheDenials(false).build();
        this.memory = RateLimiter.builder(rule).store(memoryStore).sleeper(clock).build();
        this.redis = RateLimiter.builder(rule).store(redisStore).sleeper(clock).build();
    }

    Decision tryAcquire(String key, long permits) {
        return same(memory.tryAcquire(key, permits), redis.tryAcquire(key, permits), "try " + permits);
    }

    Decision tryAcquireAtMost(String key, long permits) {
        return same(memory.tryAcquireAtMost(key, permits), redis.tryAcquireAtMost(key, permits), "at most " + permits);
    }

    Decision reserve(String key, long permits, Duration maxWait) {
        return same(memory.reserve(key, permits, maxWait), redis.reserve(key, permits, maxWait), "reserve " + permits);
    }

    Decision peek(String key, long permits) {
        return same(memory.peek(key, permits), redis.peek(key, permits), "peek " + permits);
    }

    boolean release(String key, long lease) {
        boolean expected = memory.release(key, lease);
        assertThat(redis.release(key, lease)).as("release %d of %s at %d", lease, key, clock.nowMicros())
                .isEqualTo(expected);
        return expected;
    }

    void updateLimit(Limit limit) {
        memory.updateLimit(limit);
        redis.updateLimit(limit);
    }

    void reset(String key) {
        memory.reset(key);
        redis.reset(key);
    }

    /** The Redis key of a limit's state on {@code key} (names without characters that need escaping). */
    String stateKey(String limit, String key) {
        return prefix + ":{" + redis.rule().name() + ":" + key + "}:" + limit;
    }

    /** PTTL of a limit's state key: milliseconds, -2 when absent, -1 when it has no TTL. */
    long pttl(String limit, String key) {
        String k = stateKey(limit, key);
        return (Long) topology.call(k, "PTTL", k);
    }

    boolean exists(String limit, String key) {
        String k = stateKey(limit, key);
        return (Long) topology.call(k, "EXISTS", k) == 1;
    }

    private Decision same(Decision expected, Decision actual, String what) {
        assertThat(actual).as("%s at %d (Redis vs memory)", what, clock.nowMicros()).isEqualTo(expected);
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
