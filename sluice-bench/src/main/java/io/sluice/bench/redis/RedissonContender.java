package io.sluice.bench.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's {@code RRateLimiter}: the rate per interval (RateType.OVERALL), one limiter per key, Redisson's
 * default connection pool. Its algorithm keeps each permit in a sorted set for the
 * interval, so it has no burst parameter: the limit is the rate over any one-second window.
 */
final class RedissonContender implements RedisContender {
    private final RedissonClient redisson;
    private final RedisLimits limits;
    private final ConcurrentHashMap<String, RRateLimiter> limiters = new ConcurrentHashMap<>();

    RedissonContender(String uri, RedisLimits limits) {
        this.limits = limits;
        Config config = new Config();
        config.useSingleServer().setAddress(uri);
        this.redisson = Redisson.create(config);
    }

    @Override
    public String system() {
        return "redisson";
    }

    @Override
    public String algorithm() {
        return "sliding_log";
    }

    @Override
    public String config() {
        return limits.ratePerPeriod() + " (RateType.OVERALL)";
    }

    private RRateLimiter limiter(String key) {
        RRateLimiter limiter = limiters.get(key);
        return limiter != null ? limiter : limiters.computeIfAbsent(key, k -> redisson.getRateLimiter("rrl:" + k));
    }

    @Override
    public void prepare(List<String> keys) {
        // A Redisson limiter must be configured in Redis before its first acquire; that is setup, not load.
        limiters.clear();
        List<CompletableFuture<Boolean>> pending = new ArrayList<>();
        for (String key : keys) {
            pending.add(limiter(key).trySetRateAsync(RateType.OVERALL, limits.rate(), limits.period())
                    .toCompletableFuture());
            if (pending.size() == 512) {
                CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
                pending.clear();
            }
        }
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
    }

    @Override
    public boolean tryAcquire(String key) {
        return limiter(key).tryAcquire();
    }

    @Override
    public CompletableFuture<Boolean> tryAcquireAsync(String key) {
        return limiter(key).tryAcquireAsync().toCompletableFuture();
    }

    @Override
    public long admissionBound(long micros) {
        return limits.windowBound(micros);
    }

    @Override
    public void close() {
        redisson.shutdown();
    }
}
