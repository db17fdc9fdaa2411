package io.sluice.redis;

import io.sluice.Clock;
import io.sluice.SluiceListener;
import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Store;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.sluice.redis.internal.ClientSource;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.redis.internal.RedisUris;
import io.sluice.redis.internal.StoreSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link Store} inside Redis: every decision is one Lua call ({@code FCALL} of Sluice's functions library on
 * Redis 7, else {@code EVALSHA}; see {@link Builder#scripting}), one round trip that checks and charges all limits
 * of the rule on the key atomically, on Redis standalone, Sentinel or Cluster.
 *
 * <pre>{@code
 * try (RedisStore store = RedisStore.builder().uri("redis://127.0.0.1:6379").build();
 *      RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
 *     Decision d = limiter.tryAcquire("user:42");
 * }
 * }</pre>
 *
 * <p>On the application's own Lettuce client (the store opens its own connections through it, and leaves the
 * client running when closed), or on its {@code ClientResources}:
 *
 * <pre>{@code
 * RedisStore store = RedisStore.builder().client(redisClient).build();          // or a RedisClusterClient
 * RedisStore store = RedisStore.builder().clientResources(resources).uri("redis://10.0.0.5:6379").build();
 * }</pre>
 *
 * <p><b>Thread safety:</b> one store is shared by any number of threads and limiters over one connection.
 * <b>Consistency:</b> a decision is atomic across all limits of its rule on its key, linearizable per key, and
 * never charged twice, even when the client reconnects and replays the call (each call carries a request id
 * that the script remembers for twice the timeout plus a second). <b>Time:</b> Redis server time
 * ({@code TIME}) by default, or the builder's {@link Builder#clock clock}. <b>Failure:</b> when Redis is
 * unreachable or does not answer within the timeout, the call fails with {@link RedisUnavailableException}, or,
 * when the rule has a {@link io.sluice.FailurePolicy} other than {@code raise}, is decided by it
 * ({@link io.sluice.Decision#source()} says so); an error reply (a script error) always throws
 * {@link RedisStoreException}. After a timeout or a lost connection the call may still run in Redis, once at
 * most. A circuit breaker ({@link Builder#circuitBreaker}) stops calling Redis after a few consecutive
 * failures, so an outage costs a caller at most one timeout and then local speed. A synchronous call waits at
 * most the timeout, Lettuce's 100 ms timer tick and 200 ms. See docs/failure-policies.md. Futures complete on
 * Lettuce's I/O threads: do not block in their callbacks.
 *
 * <p><b>Keys</b> are {@code <prefix>:{<rule>:<key>}:<limit>}: all limits of one rule on one key share a hash
 * tag, hence a Cluster slot. A key that carries its own non-empty {@code {tag}} gives that tag to its state
 * ({@code <prefix>:<rule>:<key>:<limit>}), so keys sharing a tag can be decided together atomically by
 * {@link #decideAll}. Every key has a TTL: no state outlives the window it describes.
 *
 * <p><b>Coalesced mode</b> ({@link io.sluice.Mode#coalesced()}): requests for one rule on one key that arrive
 * while a call for it is in flight wait, and go together in the next call (at most 128 per call), decided inside
 * Redis one after another in arrival order at one instant, each exactly as its own call would have been; a
 * request with no call in flight goes at once. Releases of such a rule queue with its decisions; {@code reset}
 * does not queue. A failed call fails each of its requests with the same {@link RedisStoreException}. See
 * docs/coalesced-mode.md.
 *
 * <p>Every algorithm of {@code io.sluice} has its Lua port, so every rule the in-memory store runs, this store
 * runs too, in every {@link io.sluice.Mode} the algorithm allows.
 *
 * <p><b>Cached denials</b> ({@link Builder#cacheDenials}, on by default): in exact mode, a try that Redis has
 * just denied is denied again locally, without a round trip, for as long as Redis would deny it too
 * ({@link io.sluice.Decision.Source#CACHED}); a key under a password-guessing attack then costs Redis one call
 * per retry-after instead of one per request. See docs/cached-denials.md for exactly when it applies.
 */
public interface RedisStore extends Store {

    /** A builder; {@link Builder#uri} or {@link Builder#client} is required. */
    static Builder builder() {
        return new Builder();
    }

    /**
     * Decides many requests in one pipelined flush and returns their decisions in order.
     *
     * <p>Each request is one script call: atomic and all or nothing across its targets when all their keys
     * share one hash slot (always on standalone and Sentinel; on Cluster when they share a {@code {tag}}).
     * Targets in different Cluster slots are each decided atomically on their own, and not across each other:
     * a target that admits stays charged even when another rejects (and a best-effort request charges each
     * target what that target could grant); the returned decision then combines them (allowed only if all
     * allowed, the smallest grant). Requests are independent of each other: there is no atomicity across the
     * batch, and the whole batch is decided at one client time.
     *
     * @throws RedisStoreException when Redis fails (see the class comment)
     */
    List<Decision> decideAll(List<BatchRequest> requests);

    /**
     * {@link Store#decideTogether}, in one script call: atomic and all or nothing across the targets whenever
     * their keys share one hash slot, which is always the case on standalone and Sentinel. On Cluster, targets
     * whose keys hash to different slots cannot be decided in one call: this throws rather than decide them
     * apart. Give the keys one {@code {tag}} to put them in one slot, or opt into
     * {@link #decideTogetherAcrossSlots}. Always exact, whatever the rules' modes, as {@link #decideAll}; a
     * single target is {@link #decide}.
     *
     * @throws IllegalArgumentException for invalid targets, or on Cluster for targets in different slots
     * @throws RedisStoreException      when Redis fails (see the class comment)
     */
    @Override
    Decision decideTogether(List<Target> targets, Request request);

    /**
     * {@link #decideTogether} with the documented non-atomic fallback on Cluster: targets in different slots are
     * each decided atomically on their own, and not across each other, as {@link #decideAll} does. A target that
     * admits stays charged even when another rejects; the decision combines them (allowed only if all allowed).
     * Where the keys share a slot it is exactly {@link #decideTogether}.
     */
    Decision decideTogetherAcrossSlots(List<Target> targets, Request request);

    /** As {@link #decideAll}, without blocking the caller. */
    CompletableFuture<List<Decision>> decideAllAsync(List<BatchRequest> requests);

    /**
     * The state of the circuit breaker in front of Redis: {@code CLOSED} while calls go through, {@code OPEN}
     * while they are decided by the rules' failure policies without calling Redis, {@code HALF_OPEN} while one
     * probe is out. For health checks.
     */
    io.sluice.SluiceListener.BreakerState breakerState();

    /**
     * Closes the store's connections, and the client and client resources if the store created them: a client or
     * resources passed to the builder are left running for their owner to shut down.
     */
    @Override
    void close();

    /** Configures a {@link RedisStore}. Not thread-safe; {@link #build} may be called more than once. */
    final class Builder {

        /** Default {@link #prefix}. */
        public static final String DEFAULT_PREFIX = "sluice";
        /** Default {@link #timeout}. */
        public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);

        private final List<String> uris = new ArrayList<>();
        private boolean cluster;
        private boolean clusterExplicit;
        private String prefix = DEFAULT_PREFIX;
        private Duration timeout = DEFAULT_TIMEOUT;
        private Clock clock;
        private int breakerFailures = StoreSettings.DEFAULT_BREAKER_FAILURES;
        private Duration breakerCoolDown = StoreSettings.DEFAULT_BREAKER_COOL_DOWN;
        private SluiceListener listener = SluiceListener.NONE;
        private AbstractRedisClient client;
        private ClientResources clientResources;
        private boolean cacheDenials = true;
        private Scripting scripting = Scripting.AUTO;

        Builder() {}

        /**
         * Use the application's standalone or Sentinel client instead of creating one: the store opens its own
         * connections through it (so its event loops and timers are shared, and the store's scripts never wait
         * behind the application's commands) to {@link #uri} if given, else to the URI the client was created
         * with. The client keeps its options; the store applies its {@link #timeout} to each of its own commands
         * nonetheless, as its own client would. {@link RedisStore#close()} closes the store's connections only;
         * the client stays with its owner, who must not shut it down before closing the store. Replaces an
         * earlier {@link #clientResources}.
         *
         * @throws IllegalArgumentException when {@code client} is null
         */
        public Builder client(RedisClient client) {
            this.client = notNull(client, "client");
            this.clientResources = null;
            return this;
        }

        /**
         * Use the application's Redis Cluster client instead of creating one: the store opens its own connection
         * through it, to the client's seeds and with its options (topology refresh included; the store's own
         * client would refresh on every adaptive trigger, at most once a second, and every 10 s), and applies its
         * {@link #timeout} to each of its own commands. Do not also give {@link #uri}. The client stays with its
         * owner (see {@link #client(RedisClient)}). Replaces an earlier {@link #clientResources}.
         *
         * @throws IllegalArgumentException when {@code client} is null
         */
        public Builder client(RedisClusterClient client) {
            this.client = notNull(client, "client");
            this.clientResources = null;
            return this;
        }

        /**
         * Create the store's client on the application's Lettuce {@link ClientResources} (event loops, timers,
         * DNS resolver) rather than on resources of its own; with {@link #uri} as usual. The store shuts down its
         * client on close, never these resources. Replaces an earlier {@link #client}.
         *
         * @throws IllegalArgumentException when {@code resources} is null
         */
        public Builder clientResources(ClientResources resources) {
            this.clientResources = notNull(resources, "clientResources");
            this.client = null;
            return this;
        }

        private static <T> T notNull(T value, String name) {
            if (value == null) {
                throw new IllegalArgumentException(name + " must not be null");
            }
            return value;
        }

        /**
         * Where Redis is: {@code redis://[user:password@]host[:port][/database]}, {@code rediss://...} for
         * TLS, or {@code redis-sentinel://host:port[,host:port]/?sentinelMasterId=mymaster} (Lettuce's URI
         * syntax). With {@link #cluster(boolean) cluster(true)} one or more comma-separated seed nodes; a seed
         * without a scheme inherits the first one's scheme and credentials
         * ({@code redis://:secret@10.0.0.1:7000,10.0.0.2:7000}). Calling it again adds seeds.
         *
         * @throws IllegalArgumentException for a malformed URI or an unknown scheme
         */
        public Builder uri(String uri) {
            uris.addAll(RedisUris.split(uri));
            return this;
        }

        /** Whether {@link #uri} names the seeds of a Redis Cluster. Default {@code false}. */
        public Builder cluster(boolean cluster) {
            this.cluster = cluster;
            this.clusterExplicit = true;
            return this;
        }

        /**
         * The namespace of every key the store writes. Default {@value #DEFAULT_PREFIX}.
         *
         * @throws IllegalArgumentException unless 1 to 64 characters without '{', '}' or whitespace (braces
         *                                  would change the keys' hash slots)
         */
        public Builder prefix(String prefix) {
            this.prefix = StoreSettings.checkPrefix(prefix);
            return this;
        }

        /**
         * How long any one Redis command may take. Default 1 s. Connecting (and its handshake) may take as long,
         * but at least 1 s, so that a short timeout does not keep a cold or busy process from connecting. A command that times out
         * is completed with an error (Lettuce {@code TimeoutOptions}, whose timer ticks every 100 ms, so up to
         * that much later) and never re-sent; the script remembers each decision for twice this long plus a
         * second, so a call re-sent before its timeout cannot charge again.
         *
         * @throws IllegalArgumentException unless between 1 ms and 1 hour
         */
        public Builder timeout(Duration timeout) {
            this.timeout = StoreSettings.checkTimeout(timeout);
            return this;
        }

        /**
         * Decide with this clock's time instead of Redis server time: for replaying recorded traffic and for
         * deterministic tests. Every client of the same keys should then use the same time source. Default:
         * none, the script reads Redis {@code TIME}.
         *
         * <p>Key expiry is still counted by the Redis server's clock, as the remaining duration at the time of
         * the decision, so a clock that runs slower than real time can see state expire early.
         */
        private Duration clientTimeSlack = StoreSettings.DEFAULT_CLIENT_TIME_SLACK;

        public Builder clock(Clock clock) {
            if (clock == null) {
                throw new IllegalArgumentException("clock must not be null");
            }
            this.clock = clock;
            return this;
        }

        /**
         * With {@link #clock(Clock)}: how much longer than a state's remaining lifetime its key lives, counted on
         * the Redis server's clock. Default 1 s, for client clocks that track real time; a replay whose virtual
         * clock runs far ahead of or behind real time needs more (sluice replay uses an hour). Decisions never
         * depend on it as long as a key outlives its state: the script compares expiry with the client's time.
         *
         * @throws IllegalArgumentException unless in [0, 366 days]
         */
        public Builder clientTimeSlack(Duration slack) {
            if (slack == null || slack.isNegative() || slack.compareTo(Duration.ofDays(366)) > 0) {
                throw new IllegalArgumentException("clientTimeSlack must be in [0, 366 days], was " + slack);
            }
            this.clientTimeSlack = slack;
            return this;
        }

        /**
         * The circuit breaker in front of Redis: after {@code failures} consecutive failed calls (timeouts,
         * lost or refused connections; not script errors) it stops calling Redis for {@code coolDown}, deciding
         * by each rule's {@link io.sluice.FailurePolicy} at local speed, then lets one probe call through,
         * which closes it on success or opens it for another cool-down. Default 3 failures, 2 s.
         *
         * @throws IllegalArgumentException unless failures in [1, 1000] and the cool-down in [1 ms, 1 h]
         */
        public Builder circuitBreaker(int failures, Duration coolDown) {
            StoreSettings.checkBreaker(failures, coolDown);
            this.breakerFailures = failures;
            this.breakerCoolDown = coolDown;
            return this;
        }

        /** Told of Redis calls, breaker transitions, leases and syncs; default {@link SluiceListener#NONE}. */
        public Builder listener(SluiceListener listener) {
            if (listener == null) {
                throw new IllegalArgumentException("listener must not be null");
            }
            this.listener = listener;
            return this;
        }

        /**
         * Whether a rule in exact mode answers a try locally, without a round trip, while Redis would still deny
         * it: after Redis denied a try for {@code p} permits of a key with retry-after {@code r}, tries for
         * exactly {@code p} permits of that key are denied here until {@code r} has passed since the call was
         * sent (answered here for at most 1 s, then Redis is asked again), with {@link io.sluice.Decision.Source#CACHED}. Never more permissive than asking Redis, and never
         * more restrictive unless something outside this store opens the key early (a reset by another process, a
         * key deleted by hand or evicted, a failover that lost writes). Not for rules with a concurrency limit or
         * {@code count_rejected}, nor for reservations, best-effort tries, peeks or the other modes. At most
         * 8,192 denied keys are remembered. Default {@code true}. See docs/cached-denials.md.
         */
        public Builder cacheDenials(boolean cacheDenials) {
            this.cacheDenials = cacheDenials;
            return this;
        }

        /**
         * How the store runs its Lua: {@link Scripting#FUNCTIONS} (a Redis 7 functions library, loaded with
         * {@code FUNCTION LOAD REPLACE} on every master when the store connects, called with {@code FCALL}: less
         * Redis CPU per decision), {@link Scripting#EVAL} ({@code SCRIPT LOAD} and {@code EVALSHA}, for Redis 6 and
         * for users without {@code +function}/{@code +fcall}), or {@link Scripting#AUTO}: functions where Redis
         * allows them, else {@code EVALSHA}, decided once when the store connects and logged (at INFO when it falls back). Decisions
         * are the same either way. Default {@code AUTO}. See docs/redis-script-protocol.md, "Functions or EVALSHA".
         *
         * @throws IllegalArgumentException when {@code scripting} is null
         */
        public Builder scripting(Scripting scripting) {
            this.scripting = notNull(scripting, "scripting");
            return this;
        }

        /**
         * Connects and loads the script (see {@link #scripting}).
         *
         * @throws IllegalArgumentException when neither a URI nor a client was given, the URIs do not fit the
         *                                  topology, a cluster client was given with a URI or with
         *                                  {@code cluster(false)}, a standalone client with
         *                                  {@code cluster(true)}, or a standalone client without a URI of its own
         *                                  was given none
         * @throws RedisStoreException      when Redis cannot be reached, or refuses functions under
         *                                  {@code scripting(FUNCTIONS)}
         */
        public RedisStore build() {
            // The URIs' timeout bounds the connection handshake (and Sentinel lookups), not decisions.
            ClientSource source = new ClientSource(client, clientResources);
            boolean clusterTopology = cluster;
            List<RedisURI> parsed;
            if (client == null) {
                parsed = RedisUris.parse(uris, cluster, StoreSettings.connectTimeout(timeout));
            } else {
                if (cluster != source.clusterClient() && clusterExplicit) {
                    throw new IllegalArgumentException("cluster(" + cluster + ") does not match the client, a "
                            + client.getClass().getSimpleName());
                }
                clusterTopology = source.clusterClient();
                if (clusterTopology && !uris.isEmpty()) {
                    throw new IllegalArgumentException("a RedisClusterClient connects to its own seeds; do not give "
                            + "uri(...) with it");
                }
                parsed = uris.isEmpty() ? List.of() : RedisUris.parse(uris, false, StoreSettings.connectTimeout(timeout));
            }
            StoreSettings settings = new StoreSettings(parsed, clusterTopology, prefix, timeout, clock, true,
                    clientTimeSlack, breakerFailures, breakerCoolDown, listener, cacheDenials, scripting);
            return DefaultRedisStore.connect(settings, source);
        }
    }
}
