package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import java.util.concurrent.CompletableFuture;

/**
 * How the Redis store decides the rules of one {@link io.sluice.Mode}: {@link ExactMode} (one script call per
 * request), {@link CoalescedMode} (a target's concurrent requests in one call), {@link LeasedMode} (permits leased
 * from Redis and spent in process) and {@link SyncedMode} (decided in process against a view synced every
 * interval). {@link DefaultRedisStore} routes each request to its rule's mode and applies the rule's failure
 * policy to whatever the mode could not decide.
 *
 * <p>Every call to Redis a mode makes goes through the store's {@link RedisGate}, and fails with a
 * {@link io.sluice.redis.RedisUnavailableException} when Redis is out of reach, so the circuit breaker and the
 * failure policies work the same in every mode. Implementations are thread-safe and never block the caller on
 * Redis: they return futures.
 */
interface StoreMode extends AutoCloseable {

    /** Decides {@code request} on {@code key} under {@code rule}, whose mode is this one. */
    CompletableFuture<Decision> decide(Rule rule, String key, Request request);

    /** Returns a lease of a concurrency limit that Redis granted (never one of the local fallback). */
    CompletableFuture<Boolean> release(Rule rule, String key, long lease);

    /**
     * Forgets what this mode holds in process for the key ({@code RateLimiter.reset}; the store deletes the key's
     * states in Redis). Called for every mode, whatever the rule's mode: a rule may have changed mode since.
     */
    void forget(Rule rule, String key);

    /** Stops what the mode runs in the background, pushing what it still owes Redis (best effort). */
    @Override
    default void close() {}
}
