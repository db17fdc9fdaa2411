package io.sluice;

import io.sluice.internal.memory.MemoryStore;

/**
 * Configures the in-memory store ({@link Store#memory()}).
 *
 * <p>The store is thread-safe without a global lock: each key's state is one immutable value swapped by
 * compare-and-set, so decisions on one key are linearizable and decisions on different keys never contend.
 * Memory: keys whose state has expired (no state outlives the longest window it describes) are dropped by an
 * amortized sweep that runs inline every {@code max(4096, keys)} decisions (counted per thread and added up by
 * batches of 64, so decisions on distinct keys share no counter). When more than {@code maxKeys}
 * keys are live, a sweep drops the expired ones and then the ones closest to expiring until 90% of
 * {@code maxKeys} remain; a live key dropped this way forgets its state (its next request is judged as a
 * fresh key), so size {@code maxKeys} above your working set.
 */
public final class MemoryStoreBuilder {

    /** Default {@link #maxKeys(long)}. */
    public static final long DEFAULT_MAX_KEYS = 1_000_000;

    private Clock clock = Clock.system();
    private long maxKeys = DEFAULT_MAX_KEYS;

    MemoryStoreBuilder() {}

    /** The time source. Default {@link Clock#system()}. */
    public MemoryStoreBuilder clock(Clock clock) {
        this.clock = Checks.notNull(clock, "clock");
        return this;
    }

    /**
     * The most keys kept before live keys are evicted. Default {@value #DEFAULT_MAX_KEYS}.
     *
     * @throws IllegalArgumentException unless in [1, 2^31]
     */
    public MemoryStoreBuilder maxKeys(long maxKeys) {
        this.maxKeys = Checks.count(maxKeys, "max_keys", 1, 1L << 31);
        return this;
    }

    public Store build() {
        return new MemoryStore(clock, maxKeys);
    }
}
