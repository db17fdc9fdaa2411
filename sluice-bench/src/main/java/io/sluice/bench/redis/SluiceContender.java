package io.sluice.bench.redis;

import io.sluice.Decision;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.redis.RedisStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** Sluice's Redis store through the public facade: one EVALSHA per decision. */
final class SluiceContender implements RedisContender {
    private final String algorithm;
    private final RedisLimits limits;
    private final RedisStore store;
    private final RateLimiter limiter;

    SluiceContender(String uri, String algorithm, RedisLimits limits, Duration timeout) {
        this(RedisStore.builder().uri(uri).timeout(timeout).build(), algorithm, limits);
    }

    /** On {@code store}, which this contender closes. */
    SluiceContender(RedisStore store, String algorithm, RedisLimits limits) {
        this.algorithm = algorithm;
        this.limits = limits;
        this.store = store;
        this.limiter = RateLimiter.builder(Rule.of("bench", limits.sluice(algorithm))).store(store).build();
    }

    @Override
    public String system() {
        return "sluice";
    }

    @Override
    public String variant() {
        return "plain";
    }

    @Override
    public String algorithm() {
        return algorithm;
    }

    @Override
    public String config() {
        return limits.describe(algorithm);
    }

    @Override
    public boolean tryAcquire(String key) {
        return limiter.tryAcquire(key).allowed();
    }

    @Override
    public CompletableFuture<Boolean> tryAcquireAsync(String key) {
        return limiter.tryAcquireAsync(key, 1).thenApply(Decision::allowed);
    }

    @Override
    public long admissionBound(long micros) {
        return limits.sluiceBound(algorithm, micros);
    }

    @Override
    public void close() {
        limiter.close();
        store.close();
    }
}
