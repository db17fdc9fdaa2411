package io.sluice;

import io.sluice.internal.memory.MemoryStore;

/**
 * Configures the in-memory store ({@link Store#memory()}).
 *
 * <p>The store is thread-safe without a global lock: each key's state is one immutable value swapped by
 * compare-and-set, so decisions on one key are linearizable and decisions on different keys never contend.
 *
 * <p>Memory: no request ever pays for a pass over the whole store. Keys whose state has expired (no state
 * outlives the longest window it describes) are dropped by an incremental sweep: every 64 decisions (counted
 * per thread, so decisions on distinct keys share no counter) it examines the next 64 keys of a cursor that
 * walks the store in laps, a lap starting at most every {@code max(4096, keys)} decisions, and drops a key it
 * finds expired on two visits in a row with no decision on it in between (so a key that expires between its
 * requests is kept, not re-created each time); so an idle expired key is dropped within about
 * {@code 3 · max(4096, keys)} decisions. A live key is never dropped while the store holds
 * at most {@code maxKeys} keys. An insertion that takes it past {@code maxKeys} evicts before it returns: of
 * the next 8 keys of the cursor, every expired one, or if none has expired, the one whose state expires first
 * (a sample, as Redis's {@code volatile-ttl} policy does; not the store-wide earliest). Under insertions from
 * several threads at once the store may exceed {@code maxKeys} by about as many keys as there are threads.
 * A live key dropped this way forgets its state (its next request is judged as a fresh key), so size
 * {@code maxKeys} above your working set. Each key costs about 200 bytes of heap on a 64-bit JVM with
 * compressed references (docs/memory-store.md has the measurement).
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
