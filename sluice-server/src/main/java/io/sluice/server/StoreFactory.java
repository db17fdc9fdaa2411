package io.sluice.server;

import io.sluice.Store;

/**
 * Opens the store {@code --store} names. The one place that knows which stores exist, so that adding one is a
 * few lines here.
 */
public final class StoreFactory {

    private static final String MEMORY_MAX_KEYS = "memory?max_keys=";

    private StoreFactory() {}

    /**
     * A new store for {@code spec}: {@code memory} (at most {@link io.sluice.MemoryStoreBuilder#DEFAULT_MAX_KEYS}
     * keys, or {@code memory?max_keys=N} for another bound; docs/memory-store.md sizes it against the heap), or a
     * {@code redis://} / {@code rediss://} URI.
     *
     * @throws IllegalArgumentException saying what is wrong with the spec, or that its store is not part of this
     *                                  build
     */
    public static Store open(String spec) {
        return open(spec, io.sluice.SluiceListener.NONE);
    }

    /**
     * As {@link #open(String)}, with a listener told of the Redis store's calls, breaker transitions, leases and
     * syncs (the in-memory store has none of these).
     */
    public static Store open(String spec, io.sluice.SluiceListener listener) {
        if (spec.equals("memory")) {
            return Store.memory().build();
        }
        if (spec.startsWith(MEMORY_MAX_KEYS)) {
            String value = spec.substring(MEMORY_MAX_KEYS.length());
            long maxKeys;
            try {
                maxKeys = Long.parseLong(value.replace("_", ""));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--store memory?max_keys= must be a whole number of keys, was '"
                        + value + "'");
            }
            return Store.memory().maxKeys(maxKeys).build();
        }
        String lower = spec.toLowerCase(java.util.Locale.ROOT);
        if (lower.startsWith("redis://") || lower.startsWith("rediss://") || lower.startsWith("redis-sentinel://")) {
            // Every server process pointed at the same Redis decides in it, which is how several share limits.
            // Two or more comma-separated seed URIs mean a Redis Cluster (as `sluice replay --store` reads them).
            boolean cluster = !lower.startsWith("redis-sentinel://") && spec.contains(",");
            return io.sluice.redis.RedisStore.builder().uri(spec).cluster(cluster).listener(listener).build();
        }
        throw new IllegalArgumentException("--store must be memory, memory?max_keys=N or a redis://, rediss:// or redis-sentinel:// URI, was '" + spec + "'");
    }

    /** The spec as logs and the startup banner show it: a Redis URI without its password. */
    public static String describe(String spec) {
        return spec.replaceFirst("^(rediss?://)[^@/]*@", "$1***@");
    }
}
