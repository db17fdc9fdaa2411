package io.sluice.bench.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.util.concurrent.CompletableFuture;

/**
 * The floor: the smallest token-bucket script that does the job (read two fields, refill, take, write, set a
 * TTL), called with EVALSHA through Lettuce on one connection. No validation, no multi-limit rules, no
 * replay protection, no retry-after: what any Lua rate limiter costs at least.
 */
final class BareLuaContender implements RedisContender {

    static final String SCRIPT = String.join("\n",
            "local t = redis.call('TIME')",
            "local now = tonumber(t[1]) * 1000000 + tonumber(t[2])",
            "local capacity = tonumber(ARGV[1])",
            "local per_us = tonumber(ARGV[2]) / 1000000",
            "local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')",
            "local tokens = tonumber(state[1]) or capacity",
            "local at = tonumber(state[2]) or now",
            "tokens = math.min(capacity, tokens + (now - at) * per_us)",
            "local allowed = 0",
            "if tokens >= 1 then",
            "  tokens = tokens - 1",
            "  allowed = 1",
            "end",
            "redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)",
            "redis.call('PEXPIRE', KEYS[1], ARGV[3])",
            "return allowed");

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisAsyncCommands<String, String> commands;
    private final String sha;
    private final RedisLimits limits;
    private final String[] args;

    BareLuaContender(String uri, RedisLimits limits) {
        this.limits = limits;
        double perSecond = limits.rate() * 1e9 / limits.period().toNanos();
        // The key lives until the bucket would be full again (plus a second), as Bucket4j's and Sluice's do.
        long ttlMillis = (long) Math.ceil(limits.burst() / perSecond * 1000) + 1000;
        this.args = new String[] {Long.toString(limits.burst()), Double.toString(perSecond), Long.toString(ttlMillis)};
        this.client = RedisClient.create(uri);
        this.connection = client.connect();
        this.commands = connection.async();
        this.sha = connection.sync().scriptLoad(SCRIPT);
    }

    @Override
    public String system() {
        return "bare-lua";
    }

    @Override
    public String algorithm() {
        return "token_bucket";
    }

    @Override
    public String config() {
        return limits.ratePerPeriod() + ", capacity " + limits.burst();
    }

    @Override
    public boolean tryAcquire(String key) throws Exception {
        return tryAcquireAsync(key).get();
    }

    @Override
    public CompletableFuture<Boolean> tryAcquireAsync(String key) {
        return commands.<Long>evalsha(sha, ScriptOutputType.INTEGER, new String[] {key}, args)
                .toCompletableFuture().thenApply(allowed -> allowed == 1L);
    }

    @Override
    public long admissionBound(long micros) {
        return limits.bucketBound(limits.burst(), micros);
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}
