package io.sluice.bench.redis;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.RemoteAsyncBucketBuilder;
import io.github.bucket4j.distributed.proxy.RemoteBucketBuilder;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bucket4j's Lettuce proxy manager: the bucket state is read (GET), changed in the client and written back
 * with a compare-and-swap script; a lost race retries. With {@code batching}, Bucket4j's batching optimization
 * merges the concurrent requests of this JVM for one bucket into one CAS.
 */
final class Bucket4jContender implements RedisContender {
    private final boolean batching;
    private final RedisLimits limits;
    private final RedisClient client;
    private final StatefulRedisConnection<String, byte[]> connection;
    private final LettuceBasedProxyManager<String> proxies;
    private final BucketConfiguration configuration;
    private final ConcurrentHashMap<String, BucketProxy> syncBuckets = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, AsyncBucketProxy> asyncBuckets = new ConcurrentHashMap<>();

    Bucket4jContender(String uri, boolean batching, RedisLimits limits) {
        this.batching = batching;
        this.limits = limits;
        this.configuration = BucketConfiguration.builder()
                .addLimit(limit -> limit.capacity(limits.burst()).refillGreedy(limits.rate(), limits.period()))
                .build();
        this.client = RedisClient.create(uri);
        this.connection = client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
        // Keys expire once the bucket would be full again, as Sluice's do: same memory behaviour.
        this.proxies = Bucket4jLettuce.casBasedBuilder(connection)
                .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(
                        Duration.ofSeconds(1)))
                .build();
    }

    @Override
    public String system() {
        return batching ? "bucket4j-batch" : "bucket4j";
    }

    @Override
    public String algorithm() {
        return "token_bucket";
    }

    @Override
    public String config() {
        return limits.ratePerPeriod() + ", capacity " + limits.burst() + ", greedy refill"
                + (batching ? ", Optimizations.batching()" : "");
    }

    private BucketProxy syncBucket(String key) {
        BucketProxy bucket = syncBuckets.get(key);
        if (bucket != null) {
            return bucket;
        }
        return syncBuckets.computeIfAbsent(key, k -> {
            RemoteBucketBuilder<String> builder = proxies.builder();
            if (batching) {
                builder = builder.withOptimization(Optimizations.batching());
            }
            return builder.build(k, () -> configuration);
        });
    }

    private AsyncBucketProxy asyncBucket(String key) {
        AsyncBucketProxy bucket = asyncBuckets.get(key);
        if (bucket != null) {
            return bucket;
        }
        return asyncBuckets.computeIfAbsent(key, k -> {
            RemoteAsyncBucketBuilder<String> builder = proxies.asAsync().builder();
            if (batching) {
                builder = builder.withOptimization(Optimizations.batching());
            }
            return builder.build(k, () -> CompletableFuture.completedFuture(configuration));
        });
    }

    @Override
    public boolean tryAcquire(String key) {
        return syncBucket(key).tryConsume(1);
    }

    @Override
    public CompletableFuture<Boolean> tryAcquireAsync(String key) {
        return asyncBucket(key).tryConsume(1);
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
