package io.sluice.server;

import io.sluice.Store;
import io.sluice.micrometer.SluiceMetrics;
import io.sluice.rules.RuleFileException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What a {@link SluiceServer} opens from its settings before anything listens, and releases once its ports are
 * released: the store (unless one was given), the Redis client resources that store runs on, the metrics, the
 * rules in force, the hot-key tracker and the rule reloader. Opening is all or nothing: when a step fails, what
 * the earlier steps opened is released, exactly as a stop releases it, and the failure is thrown.
 *
 * @param store      the store every decision is made in
 * @param ownsStore  whether the server opened the store (and so closes it); false for a store it was given
 * @param redisLoops the client resources of a Redis store the server opened, or null
 * @param metrics    the server's Prometheus metrics
 * @param rules      the rules in force, swapped whole by the reloader
 * @param reloader   watches the rule files; null when the bundled example is served
 * @param hotKeys    the keys decided most often, for {@code /v1/admin/top}
 */
record ServerResources(Store store, boolean ownsStore, RedisEventLoops redisLoops, ServerMetrics metrics,
                       AtomicReference<RuleSet> rules, RuleReloader reloader, HotKeys hotKeys) {

    /**
     * Reads the rules and opens the store; {@code given} is the store to decide in, or null to open the one
     * {@link Settings#storeSpec()} names.
     *
     * @param clientClock whether an opened store takes each call's time from the request ({@link RequestClock})
     * @throws RuleFileException        when a rule file is invalid
     * @throws IOException              when a rule file cannot be read
     * @throws IllegalArgumentException when the store spec is not usable
     */
    static ServerResources open(Settings settings, Store given, boolean clientClock)
            throws IOException, RuleFileException {
        RuleSet.Sources sources = readRules(settings.rules());
        boolean owns = given == null;
        ServerMetrics metrics = new ServerMetrics();
        RedisEventLoops loops = null;
        Store store = given;
        try {
            // A Redis store this server opens runs on the HTTP server's event loops (RedisEventLoops says why).
            if (owns && StoreFactory.isRedis(settings.storeSpec())) {
                loops = RedisEventLoops.create(settings.redis().breakerPause());
            }
            if (owns) {
                store = StoreFactory.open(settings.storeSpec(), () -> new SluiceMetrics(metrics.registry()),
                        settings.redis(), clientClock ? new RequestClock() : null,
                        loops == null ? null : loops.resources());
            }
            HotKeys hotKeys = new HotKeys(io.sluice.Clock.system(), HotKeys.DEFAULT_CAPACITY);
            AtomicReference<RuleSet> rules = new AtomicReference<>(RuleSet.bind(sources, store, hotKeys,
                    settings.redisMode()));
            metrics.rulesLoaded(rules.get().limitCount());
            RuleReloader reloader = settings.rules().isEmpty() ? null
                    : new RuleReloader(settings.rules(), store, rules, metrics, settings.reloadInterval());
            return new ServerResources(store, owns, loops, metrics, rules, reloader, hotKeys);
        } catch (IOException | RuntimeException e) {
            release(owns ? store : null, loops, metrics);
            throw e;
        }
    }

    /** The rule files' sources, or the bundled example's when no file was named. */
    private static RuleSet.Sources readRules(List<Path> files) throws IOException, RuleFileException {
        if (files.isEmpty()) {
            return RuleSet.read(List.of());
        }
        RuleSources.Read read = new RuleSources(files).read();
        return RuleSet.combine(read.names(), read.texts());
    }

    /** Stops watching the rule files; the first step of a stop, before the ports are released. */
    void stopReloading() {
        if (reloader != null) {
            reloader.close();
        }
    }

    /**
     * Closes the store if the server opened it, then the Redis client resources it ran on, then the metrics.
     * Closing a Redis store waits for its connection to close on those resources' event loops, so this must not
     * run on one of them.
     */
    void release() {
        release(ownsStore ? store : null, redisLoops, metrics);
    }

    private static void release(Store ownedStore, RedisEventLoops loops, ServerMetrics metrics) {
        if (ownedStore != null) {
            ownedStore.close();
        }
        if (loops != null) {
            loops.close();
        }
        metrics.close();
    }
}
