package io.sluice.cli;

import io.sluice.Clock;
import io.sluice.Store;

/**
 * Where a replay keeps limit state, chosen with {@code --store}. A replay opens one store per rules file,
 * each on that run's virtual clock (the trace's {@code t_ms}), so the trace's time is the store's time.
 */
interface ReplayStore {

    /** A new, empty store reading time from {@code clock}. */
    Store open(Clock clock);

    /** The store as {@code --store} named it, for the summary. */
    String describe();

    /**
     * The store {@code spec} names: {@code memory}, or a {@code redis://} / {@code rediss://} URI.
     *
     * @throws UsageException when the spec is unknown or that store is not part of this build
     */
    static ReplayStore forSpec(String spec) throws UsageException {
        if (spec.equals("memory")) {
            return new ReplayStore() {
                @Override
                public Store open(Clock clock) {
                    // Never evict live keys: a simulator that forgot state would report decisions the library
                    // does not make. State still expires with its windows, so memory follows the live keys.
                    return Store.memory().clock(clock).maxKeys(1L << 31).build();
                }

                @Override
                public String describe() {
                    return "memory";
                }
            };
        }
        if (spec.startsWith("redis://") || spec.startsWith("rediss://")) {
            // When sluice-redis lands: return a ReplayStore whose open(clock) is
            //   RedisStore.builder().uri(spec).clock(clock).build()
            // (client time, so the trace's t_ms is the time every script sees).
            throw new UsageException("--store " + spec + ": the Redis store (module sluice-redis) is not part of"
                    + " this build yet; use --store memory");
        }
        throw new UsageException("--store must be memory or a redis:// URI, was '" + spec + "'");
    }
}
