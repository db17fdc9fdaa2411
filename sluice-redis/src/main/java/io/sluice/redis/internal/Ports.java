package io.sluice.redis.internal;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.async.RedisFunctionAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Client settings shared by the two ports. */
final class Ports {

    private static final Log log = Log.get(Ports.class);

    private Ports() {}

    /** Opens the right port for the settings, on a client of the store's own. */
    static RedisPort connect(StoreSettings settings) {
        return connect(settings, ClientSource.OWN);
    }

    /** Opens the right port for the settings, on the client or the resources {@code source} names. */
    static RedisPort connect(StoreSettings settings, ClientSource source) {
        if (source.client() instanceof RedisClusterClient c) {
            return ClusterPort.connect(settings, c);
        }
        if (source.client() instanceof RedisClient c) {
            return StandalonePort.connect(settings, c);
        }
        return settings.cluster() ? ClusterPort.connect(settings, source.resources())
                : StandalonePort.connect(settings, source.resources());
    }

    /**
     * Every command times out after the store's timeout and is then completed, so Lettuce never re-sends it
     * after a reconnect (TimeoutOptions; see docs/redis-script-protocol.md, "Replays"). Connection attempts are
     * bounded by {@link StoreSettings#connectTimeout()} (the same timeout, at least 1 s). Auto-reconnect stays on (Lettuce's default, at-least-once).
     *
     * <p>While disconnected, commands are accepted and queued (Lettuce's default {@code DisconnectedBehavior}),
     * not rejected: a connection that drops and comes back within the timeout costs nothing, and a queued
     * command still times out after one timeout, so an outage costs a caller at most that; after
     * {@link StoreSettings#breakerFailures} such failures the circuit breaker stops sending. The request queue
     * stays unbounded (Lettuce's default) for the same reason: every queued command leaves it within one timeout
     * and the open breaker adds none, so it holds at most one timeout's worth of calls.
     */
    static ClientOptions options(StoreSettings settings) {
        return ClientOptions.builder()
                .timeoutOptions(TimeoutOptions.enabled(settings.timeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(settings.connectTimeout()).build())
                .build();
    }

    /**
     * Lettuce re-reads the cluster topology at most this often on its adaptive triggers (its default, 30 s,
     * would leave a failover unseen for up to 30 s when the first trigger fires before the replica is promoted).
     */
    static final Duration ADAPTIVE_REFRESH_INTERVAL = Duration.ofSeconds(1);
    /** Lettuce re-reads the cluster topology this often regardless, as a backstop for missed triggers. */
    static final Duration PERIODIC_REFRESH = Duration.ofSeconds(10);
    /** Reconnect attempts to a lost node after which Lettuce re-reads the topology (its default is 5). */
    static final int REFRESH_AFTER_RECONNECT_ATTEMPTS = 3;

    /**
     * As {@link #options}, and the cluster topology is followed through a failover: re-read on every adaptive
     * trigger (MOVED/ASK redirections, persistent reconnect failures to a node, unknown or uncovered slots) at
     * most once per {@link #ADAPTIVE_REFRESH_INTERVAL}, and every {@link #PERIODIC_REFRESH} regardless;
     * connections to nodes that left the topology are closed.
     */
    static ClusterClientOptions clusterOptions(StoreSettings settings) {
        return ClusterClientOptions.builder()
                .timeoutOptions(TimeoutOptions.enabled(settings.timeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(settings.connectTimeout()).build())
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(ADAPTIVE_REFRESH_INTERVAL)
                        .refreshTriggersReconnectAttempts(REFRESH_AFTER_RECONNECT_ATTEMPTS)
                        .enablePeriodicRefresh(PERIODIC_REFRESH)
                        .closeStaleConnections(true)
                        .build())
                .build();
    }

    /** The shortest and the longest ceiling of the reconnect delay (see {@link #reconnectCeiling}). */
    static final Duration MIN_RECONNECT_CEILING = Duration.ofMillis(100);
    static final Duration MAX_RECONNECT_CEILING = Duration.ofSeconds(1);

    /**
     * The longest pause between two reconnect attempts: the breaker's cool-down within [100 ms, 1 s]. Lettuce's
     * default backs off to 30 s, so after a long outage the connection could come back up to 30 s after Redis
     * did, and every breaker probe meanwhile would cost a timeout. Capped at the cool-down, a connection is
     * normally back by the time the breaker probes; the floor keeps a dead server from being hammered.
     */
    static Duration reconnectCeiling(StoreSettings settings) {
        return reconnectCeiling(settings.breakerCoolDown());
    }

    /** {@link #reconnectCeiling(StoreSettings)} for a breaker that cools down for {@code coolDown}. */
    static Duration reconnectCeiling(Duration coolDown) {
        return coolDown.compareTo(MIN_RECONNECT_CEILING) < 0 ? MIN_RECONNECT_CEILING
                : coolDown.compareTo(MAX_RECONNECT_CEILING) > 0 ? MAX_RECONNECT_CEILING : coolDown;
    }

    /**
     * The store owns its client resources (event loops, timers) and shuts them down on close. Reconnects back
     * off exponentially from 1 ms (1, 2, 4, ... ms) up to {@link #reconnectCeiling}.
     */
    static ClientResources newResources(StoreSettings settings) {
        return DefaultClientResources.builder().reconnectDelay(reconnectDelay(settings.breakerCoolDown())).build();
    }

    /** The reconnect delay of {@link #newResources}: from 1 ms, doubling, up to {@link #reconnectCeiling}. */
    static Delay reconnectDelay(Duration breakerCoolDown) {
        return Delay.exponential(Duration.ZERO, reconnectCeiling(breakerCoolDown), 2, TimeUnit.MILLISECONDS);
    }

    /** One script call on either topology's async commands (standalone and cluster share the scripting API). */
    static CompletableFuture<List<Object>> evalsha(RedisScriptingAsyncCommands<String, String> commands, String sha,
                                                   ScriptCall call, CommandDeadline deadline) {
        return deadline.guard(commands.<List<Object>>evalsha(sha, ScriptOutputType.MULTI, call.keys(), call.args()));
    }

    /** One function call on either topology's async commands. */
    static CompletableFuture<List<Object>> fcall(RedisFunctionAsyncCommands<String, String> commands, String function,
                                                 ScriptCall call, CommandDeadline deadline) {
        return deadline.guard(commands.<List<Object>>fcall(function, ScriptOutputType.MULTI, call.keys(), call.args()));
    }

    /** The deadline for commands on a client the store did not create (see {@link CommandDeadline}). */
    static CommandDeadline foreignDeadline(AbstractRedisClient client, StoreSettings settings) {
        return new CommandDeadline(client.getResources().timer(), settings.timeout());
    }

    /** How long closing waits for the client, then for its resources, before it gives up on them. */
    static final Duration SHUTDOWN_BOUND = Duration.ofSeconds(3);

    /**
     * Shuts down what the store created: the client when {@code ownClient}, the resources when not null (the
     * caller passes null for resources it was given). Each wait is bounded by {@link #SHUTDOWN_BOUND}: Lettuce's
     * {@code shutdown(quiet, timeout, unit)} passes its timeout to the event loops only, and waits without a bound
     * for the client's connections to close, which never happens for a cluster connection whose setup timed out
     * (a test run hung 25 minutes there). Whatever is left then is abandoned with a log line, not waited for.
     */
    static void shutdown(AbstractRedisClient client, boolean ownClient, ClientResources ownResources) {
        if (ownClient) {
            awaitShutdown(client.shutdownAsync(0, 2, TimeUnit.SECONDS), SHUTDOWN_BOUND, "the Redis client");
        }
        if (ownResources != null) {
            ownResources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(SHUTDOWN_BOUND.toMillis());
        }
    }

    /**
     * Waits at most {@code bound} for a shutdown; false (and one WARN line naming {@code what}) when it did not
     * finish in time or failed.
     */
    static boolean awaitShutdown(CompletableFuture<Void> shutdown, Duration bound, String what) {
        try {
            shutdown.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            log.warn("{} did not shut down within {}; leaving it to finish on its own", what, bound);
        } catch (ExecutionException e) {
            log.warn("{} failed to shut down cleanly: {}", what, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }
}
