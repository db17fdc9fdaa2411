package io.sluice.cli;

import io.sluice.Clock;
import io.sluice.FixedWindow;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.redis.RedisStore;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Where a replay keeps limit state, chosen with {@code --store}. A replay opens one store per rules file,
 * each on that run's virtual clock (the trace's {@code t_ms}), so the trace's time is the store's time.
 */
interface ReplayStore {

    /**
     * A new, empty store reading time from {@code clock}.
     *
     * @throws UsageException when the store's address is malformed
     * @throws io.sluice.redis.RedisStoreException when Redis cannot be reached
     */
    Store open(Clock clock) throws UsageException;

    /** The store as {@code --store} named it, without credentials, for the summary. */
    String describe();

    /**
     * How much more real time than trace time replaying any stretch of the trace may take before the store
     * could decide differently from the library ({@code Long.MAX_VALUE}: no limit).
     */
    default long maxLagMicros() {
        return Long.MAX_VALUE;
    }

    /**
     * The store {@code spec} names: {@code memory}, or a Redis URI: {@code redis://} or {@code rediss://} for one
     * server, {@code redis-sentinel://} for Sentinel, two or more comma-separated seeds for a Redis Cluster.
     *
     * @throws UsageException when the spec is unknown or malformed
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
        String lower = spec.toLowerCase(Locale.ROOT);
        if (lower.startsWith("redis://") || lower.startsWith("rediss://") || lower.startsWith("redis-sentinel://")) {
            return new Redis(spec);
        }
        throw new UsageException("--store must be memory or a redis:// URI, was '" + spec + "'");
    }

    /**
     * The Redis store, deciding with client time = the trace's clock, so every script sees the line's
     * {@code t_ms} and the decisions are the in-memory store's, byte for byte.
     *
     * <p><b>Namespaces.</b> Every store this replay opens (one per rules file, {@code --compare} included) gets
     * its own key prefix, {@code sluice-replay-<64 random bits>-<n>}, so each starts from clean state and the
     * rules files never see each other's keys. A fresh random prefix, rather than deleting a fixed prefix
     * first: deleting would have to SCAN the whole keyspace of every master (slow on a large Redis, and not
     * atomic), would wipe the state of a replay running at the same time under the same prefix, and one wrong
     * prefix would wipe a live limiter's state; a random prefix is empty by construction and never touches a
     * key it did not write. The replay's keys are left to their TTLs: each is gone at most its state's
     * remaining lifetime on the trace's clock, plus a second, after the replay last wrote it. The prefix holds
     * no ':' so that no other prefix plus rule name can spell the same key.
     *
     * <p><b>Lag.</b> With client time the script gives each key a TTL of its remaining lifetime on the trace's
     * clock plus one second, and Redis counts that TTL in real time. A replay that runs slower than the trace
     * (a dense burst: thousands of lines within a second of trace time) would see keys vanish while their
     * state is still live, and admit what the library would reject. So the replay may lag the trace by at most
     * {@link #maxLagMicros} (that second, less a margin for round trips) over any stretch, and stops with an
     * error beyond it rather than print decisions the library would not make.
     */
    final class Redis implements ReplayStore {
        private static final SecureRandom RANDOM = new SecureRandom();
        private static final Pattern CREDENTIALS = Pattern.compile("(?<=://)[^@/,]*@");
        private static final int WARM_UP_CALLS = 300;
        private static final long WARM_UP_NANOS = 3_000_000_000L;

        private final String spec;
        private final boolean cluster;
        private final String run;
        private int opened;

        Redis(String spec) throws UsageException {
            this.spec = spec;
            // Cluster seeds are comma-separated; a Sentinel URI lists its sentinels with commas too.
            this.cluster = !spec.toLowerCase(Locale.ROOT).startsWith("redis-sentinel://") && spec.contains(",");
            this.run = String.format("%016x", RANDOM.nextLong());
            try {
                RedisStore.builder().uri(spec);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--store " + describe() + ": " + e.getMessage());
            }
        }

        /** The prefix of the {@code n}th store of this replay (0 for the main rules file). */
        String prefix(int n) {
            return "sluice-replay-" + run + "-" + n;
        }

        @Override
        public Store open(Clock clock) throws UsageException {
            String prefix = prefix(opened++);
            RedisStore store;
            try {
                store = RedisStore.builder().uri(spec).cluster(cluster).prefix(prefix).clock(clock)
                        .clientTimeSlack(KEY_SLACK).build();
            } catch (IllegalArgumentException e) {
                throw new UsageException("--store " + describe() + ": " + e.getMessage());
            }
            try {
                warmUp(store);
            } catch (RuntimeException e) {
                store.close();
                throw e;
            }
            return store;
        }

        /**
         * The first calls of a fresh client are slow (class loading, JIT): hundreds of milliseconds that would
         * count as lag (see {@link #maxLagMicros}) at the trace's first lines. Peeks of a key without state
         * write nothing, so they warm the path up and leave the namespace empty.
         */
        private static void warmUp(Store store) {
            Rule rule = Rule.of("sluice-replay-warmup", FixedWindow.of(1, Duration.ofSeconds(1)));
            Request peek = Request.peek(1);
            long deadline = System.nanoTime() + WARM_UP_NANOS;
            for (int i = 0; i < WARM_UP_CALLS && System.nanoTime() < deadline; i++) {
                store.decide(rule, "warmup", peek);
            }
        }

        @Override
        public String describe() {
            return CREDENTIALS.matcher(spec).replaceAll("***@");
        }

        /**
         * How long a replay's keys outlive their state on the server's clock: the trace's virtual clock and real
         * time drift apart by however long the replay takes, so an hour rather than the store's default second.
         * The keys are in a fresh random namespace and disappear an hour after the replay.
         */
        static final Duration KEY_SLACK = Duration.ofHours(1);

        /** A replay may fall behind its trace by the keys' slack, less a margin, before state could expire early. */
        @Override
        public long maxLagMicros() {
            return KEY_SLACK.toNanos() / 1_000 - 100_000;
        }
    }
}
