package io.sluice;

import java.util.concurrent.CompletableFuture;

/**
 * Where limit state lives and where decisions are made: in process memory ({@link #memory()}), inside
 * Redis ({@code sluice-redis}), or elsewhere. A store is shared by any number of {@link RateLimiter}s; keys
 * are namespaced by {@link Rule#name()}.
 *
 * <p>Every store runs the same algorithms with the same semantics and passes the contract suite in
 * {@code sluice-testkit}. Each store chooses its time source and documents it. Implementations are
 * thread-safe. Decisions never throw for a valid request; arguments were validated by the limiter.
 */
public interface Store extends AutoCloseable {

    /** Decides {@code request} for {@code key} under every limit of {@code rule}, all or nothing. */
    Decision decide(Rule rule, String key, Request request);

    /** As {@link #decide}, without blocking the caller. */
    CompletableFuture<Decision> decideAsync(Rule rule, String key, Request request);

    /** Returns a concurrency lease; false when the lease is unknown or already expired. */
    boolean release(Rule rule, String key, long lease);

    /** As {@link #release}, without blocking the caller. */
    CompletableFuture<Boolean> releaseAsync(Rule rule, String key, long lease);

    /** Forgets all state of {@code key} under {@code rule}: the next request sees a fresh key. */
    void reset(Rule rule, String key);

    /** Releases the store's resources; the default does nothing. */
    @Override
    default void close() {
    }

    /** A builder for the in-memory store. */
    static MemoryStoreBuilder memory() {
        return new MemoryStoreBuilder();
    }
}
