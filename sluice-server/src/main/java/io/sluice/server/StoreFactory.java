package io.sluice.server;

import io.sluice.Store;

/**
 * Opens the store {@code --store} names. The one place that knows which stores exist, so that adding one is a
 * few lines here.
 */
public final class StoreFactory {

    private StoreFactory() {}

    /**
     * A new store for {@code spec}: {@code memory}, or a {@code redis://} / {@code rediss://} URI.
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
        return open(spec, listener, null);
    }

    /**
     * As {@link #open(String, io.sluice.SluiceListener)}, deciding at {@code clock}'s time when it is not null
     * (the Redis store then runs in client-time mode).
     */
    public static Store open(String spec, io.sluice.SluiceListener listener, io.sluice.Clock clock) {
        if (spec.equals("memory")) {
            return clock == null ? Store.memory().build() : Store.memory().clock(clock).build();
        }
        String lower = spec.toLowerCase(java.util.Locale.ROOT);
        if (lower.startsWith("redis://") || lower.startsWith("rediss://") || lower.startsWith("redis-sentinel://")) {
            // Every server process pointed at the same Redis decides in it, which is how several share limits.
            // Two or more comma-separated seed URIs mean a Redis Cluster (as `sluice replay --store` reads them).
            boolean cluster = !lower.startsWith("redis-sentinel://") && spec.contains(",");
            io.sluice.redis.RedisStore.Builder redis = io.sluice.redis.RedisStore.builder().uri(spec).cluster(cluster)
                    .listener(listener);
            return (clock == null ? redis : redis.clock(clock)).build();
        }
        throw new IllegalArgumentException("--store must be memory or a redis://, rediss:// or redis-sentinel:// URI, was '" + spec + "'");
    }

    /** The spec as logs and the startup banner show it: a Redis URI without its password. */
    public static String describe(String spec) {
        return spec.replaceFirst("^(rediss?://)[^@/]*@", "$1***@");
    }
}
