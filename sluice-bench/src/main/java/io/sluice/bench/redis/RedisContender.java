package io.sluice.bench.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One system deciding "one permit for this key?" on Redis, synchronously and asynchronously, with the
 * limit of {@link RedisLimits} in its own terms. Thread-safe.
 */
public interface RedisContender extends AutoCloseable {

    /** sluice, bucket4j, bucket4j-batch, redisson or bare-lua. */
    String system();

    /** How the system is used, when it has several ways (Sluice: plain; later coalesced, leased, synced). */
    default String variant() {
        return null;
    }

    /** The algorithm as Sluice names it. */
    String algorithm();

    /** The limit in words. */
    String config();

    /** Sets up state the system needs per key before its first decision (not measured), after FLUSHALL. */
    default void prepare(List<String> keys) throws Exception {
    }

    /** Blocks until decided; true when admitted. */
    boolean tryAcquire(String key) throws Exception;

    /** Decides without blocking the caller. */
    CompletableFuture<Boolean> tryAcquireAsync(String key);

    /** The most admissions one key may see within {@code micros} under the configured limit. */
    long admissionBound(long micros);

    @Override
    void close();
}
