package io.sluice.server;

import io.sluice.SluiceListener;
import io.sluice.Store;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Opens the store {@code --store} names. The one place that knows which stores exist, so that adding one is a
 * few lines here.
 */
public final class StoreFactory {

    private static final String MEMORY_MAX_KEYS = "memory?max_keys=";

    private StoreFactory() {}

    /**
     * The server's Redis store settings ({@code redis_timeout}, {@code redis_breaker_failures},
     * {@code redis_breaker_pause}, {@code redis_prefix}, {@code redis_cache_denials} and {@code redis_scripting} in
     * the config file; each also an option and an environment variable).
     *
     * @param timeout         how long one Redis command may take, connecting included
     * @param breakerFailures consecutive unavailable calls that open the circuit breaker
     * @param breakerPause    how long an open breaker answers by the failure policy before one call probes
     * @param prefix          the namespace of every key the store writes (servers sharing limits need the same)
     * @param cacheDenials    whether exact-mode denials Redis just gave are repeated without a round trip
     * @param scripting       how the store runs its scripts: a functions library where allowed ({@code auto}), or
     *                        forced to {@code functions} or {@code eval}
     */
    public record RedisTuning(Duration timeout, int breakerFailures, Duration breakerPause, String prefix,
                              boolean cacheDenials, io.sluice.redis.Scripting scripting) {

        /**
         * The server's defaults: 500 ms, 3 failures, 250 ms. After Redis comes back, answers are normal again
         * within one timeout and one pause (the last probe that failed, then the pause it started), about
         * 0.85 s with Lettuce's 100 ms timer tick. The library's defaults (1 s, 2 s) took up to 3.1 s. The
         * price: a Redis that stalls longer than 500 ms (a fork on a large dataset, a slow script, a congested
         * network, an overloaded host) fails calls that a longer timeout would have waited out; and during an
         * outage one probe every 250 ms costs its caller up to one timeout. The timeout is the larger share
         * because a false timeout fails a request while a short pause only costs probes. Raise
         * {@code redis_timeout} for a Redis far away or under such stalls; recovery then takes about
         * {@code redis_timeout + redis_breaker_pause}.
         */
        public static final RedisTuning SERVER_DEFAULT = new RedisTuning(Duration.ofMillis(500), 3,
                Duration.ofMillis(250));

        /** The timeout and breaker given, with the library's key prefix, cached denials and scripting. */
        public RedisTuning(Duration timeout, int breakerFailures, Duration breakerPause) {
            this(timeout, breakerFailures, breakerPause, io.sluice.redis.RedisStore.Builder.DEFAULT_PREFIX, true,
                    io.sluice.redis.Scripting.AUTO);
        }

        /** These settings with another {@code redis_timeout}. */
        public RedisTuning withTimeout(Duration value) {
            return new RedisTuning(value, breakerFailures, breakerPause, prefix, cacheDenials, scripting);
        }

        /** These settings with another {@code redis_breaker_failures}. */
        public RedisTuning withBreakerFailures(int value) {
            return new RedisTuning(timeout, value, breakerPause, prefix, cacheDenials, scripting);
        }

        /** These settings with another {@code redis_breaker_pause}. */
        public RedisTuning withBreakerPause(Duration value) {
            return new RedisTuning(timeout, breakerFailures, value, prefix, cacheDenials, scripting);
        }

        /** These settings with another {@code redis_prefix}. */
        public RedisTuning withPrefix(String value) {
            return new RedisTuning(timeout, breakerFailures, breakerPause, value, cacheDenials, scripting);
        }

        /** These settings with another {@code redis_cache_denials}. */
        public RedisTuning withCacheDenials(boolean value) {
            return new RedisTuning(timeout, breakerFailures, breakerPause, prefix, value, scripting);
        }

        /** These settings with another {@code redis_scripting}. */
        public RedisTuning withScripting(io.sluice.redis.Scripting value) {
            return new RedisTuning(timeout, breakerFailures, breakerPause, prefix, cacheDenials, value);
        }

        /** @throws IllegalArgumentException naming the setting and its range */
        public RedisTuning {
            try {
                io.sluice.redis.internal.StoreSettings.checkPrefix(prefix);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("redis_prefix must be 1 to 64 characters without '{', '}' or"
                        + " whitespace, was " + (prefix == null ? "none" : "'" + prefix + "'"));
            }
            try {
                io.sluice.redis.internal.StoreSettings.checkTimeout(timeout);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("redis_timeout must be between 1ms and 1h, was " + timeout);
            }
            if (breakerFailures < 1 || breakerFailures > 1000) {
                throw new IllegalArgumentException("redis_breaker_failures must be in [1, 1000], was "
                        + breakerFailures);
            }
            if (breakerPause == null || breakerPause.compareTo(Duration.ofMillis(1)) < 0
                    || breakerPause.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("redis_breaker_pause must be between 1ms and 1h, was "
                        + breakerPause);
            }
            if (scripting == null) {
                throw new IllegalArgumentException("redis_scripting must be auto, functions or eval, was none");
            }
        }
    }

    /**
     * A new store for {@code spec}: {@code memory} (at most {@link io.sluice.MemoryStoreBuilder#DEFAULT_MAX_KEYS}
     * keys, or {@code memory?max_keys=N} for another bound; docs/memory-store.md sizes it against the heap), or a
     * {@code redis://} / {@code rediss://} URI.
     *
     * @throws IllegalArgumentException saying what is wrong with the spec, or that its store is not part of this
     *                                  build
     */
    public static Store open(String spec) {
        return open(spec, () -> SluiceListener.NONE, RedisTuning.SERVER_DEFAULT);
    }

    /**
     * As {@link #open(String)}, with a listener told of the Redis store's calls, breaker transitions, leases and
     * syncs, asked for only when the store is Redis (the in-memory store has none of these, so it gets no
     * meters that could only read NaN), and Redis failure settings.
     */
    public static Store open(String spec, Supplier<? extends SluiceListener> redisListener, RedisTuning tuning) {
        return open(spec, redisListener, tuning, null);
    }

    /**
     * As {@link #open(String, Supplier, RedisTuning)}, deciding at {@code clock}'s time when it is not null
     * (the Redis store then runs in client-time mode).
     */
    public static Store open(String spec, Supplier<? extends SluiceListener> redisListener, RedisTuning tuning,
                             io.sluice.Clock clock) {
        return open(spec, redisListener, tuning, clock, null);
    }

    /**
     * As {@link #open(String, Supplier, RedisTuning, io.sluice.Clock)}, a Redis store's client on
     * {@code resources} when not null (the caller shuts them down after closing the store), else on resources
     * of the store's own.
     */
    public static Store open(String spec, Supplier<? extends SluiceListener> redisListener, RedisTuning tuning,
                             io.sluice.Clock clock, io.lettuce.core.resource.ClientResources resources) {
        if (spec.equals("memory")) {
            return clock == null ? Store.memory().build() : Store.memory().clock(clock).build();
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
            return clock == null ? Store.memory().maxKeys(maxKeys).build()
                    : Store.memory().maxKeys(maxKeys).clock(clock).build();
        }
        String lower = spec.toLowerCase(java.util.Locale.ROOT);
        if (isRedis(spec)) {
            // Every server process pointed at the same Redis decides in it, which is how several share limits.
            // Two or more comma-separated seed URIs mean a Redis Cluster (as `sluice replay --store` reads them).
            boolean cluster = !lower.startsWith("redis-sentinel://") && spec.contains(",");
            io.sluice.redis.RedisStore.Builder redis = io.sluice.redis.RedisStore.builder().uri(spec).cluster(cluster)
                    .timeout(tuning.timeout()).circuitBreaker(tuning.breakerFailures(), tuning.breakerPause())
                    .prefix(tuning.prefix()).cacheDenials(tuning.cacheDenials()).scripting(tuning.scripting())
                    .listener(redisListener.get());
            if (resources != null) {
                redis.clientResources(resources);
            }
            return (clock == null ? redis : redis.clock(clock)).build();
        }
        throw new IllegalArgumentException("--store must be memory, memory?max_keys=N or a redis://, rediss:// or redis-sentinel:// URI, was '" + spec + "'");
    }

    /** Whether {@code spec} names a Redis store (a {@code redis://}, {@code rediss://} or Sentinel URI). */
    static boolean isRedis(String spec) {
        String lower = spec.toLowerCase(java.util.Locale.ROOT);
        return lower.startsWith("redis://") || lower.startsWith("rediss://") || lower.startsWith("redis-sentinel://");
    }

    /** The spec as logs and the startup banner show it: a Redis URI without its password. */
    public static String describe(String spec) {
        return spec.replaceFirst("^(rediss?://)[^@/]*@", "$1***@");
    }
}
