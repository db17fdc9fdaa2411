package io.sluice.bench.server;

import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.bench.redis.RedisContender;
import io.sluice.bench.redis.RedisLimits;
import io.sluice.client.RemoteStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The library deciding in {@code sluice serve}: a {@link RateLimiter} on a {@link RemoteStore}, under the
 * server's own {@code bench} rule (the same definition, so the server accepts its fingerprint). One store, so
 * every call in flight shares one HTTP/2 connection, with the store's default batching (many calls per request
 * while it is busy), as an application would run it.
 */
final class RemoteClientContender implements RedisContender {

    private static final String ALGORITHM = "token_bucket";

    private final RemoteStore store;
    private final RateLimiter limiter;

    RemoteClientContender(String baseUrl) {
        // A timeout far above any answer time: the row measures throughput, and a loaded machine can hold a call
        // up longer than the default second (a timed-out call would open the breaker and end the row).
        this.store = RemoteStore.builder().uri(baseUrl).timeout(Duration.ofSeconds(10)).build();
        Rule bench = Rule.of("bench", RedisLimits.LOAD.sluice(ALGORITHM).named("per_key"));
        this.limiter = RateLimiter.builder(bench).store(store).build();
    }

    @Override
    public String system() {
        return "sluice";
    }

    @Override
    public String variant() {
        return "memory/remote-client";
    }

    @Override
    public String algorithm() {
        return ALGORITHM;
    }

    @Override
    public String config() {
        return RedisLimits.LOAD.describe(ALGORITHM) + "; RemoteStore, batching by default (POST /v1/store/call alone,"
                + " /v1/store/calls when 4 requests are out) over one HTTP/2 connection";
    }

    @Override
    public boolean tryAcquire(String key) {
        return limiter.tryAcquire(key).allowed();
    }

    @Override
    public CompletableFuture<Boolean> tryAcquireAsync(String key) {
        return limiter.tryAcquireAsync(key, 1).thenApply(d -> d.allowed());
    }

    @Override
    public long admissionBound(long micros) {
        return RedisLimits.LOAD.bucketBound(RedisLimits.LOAD.burst(), micros);
    }

    @Override
    public void close() {
        limiter.close();
        store.close();
    }
}
