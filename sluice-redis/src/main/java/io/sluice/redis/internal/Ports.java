package io.sluice.redis.internal;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Client settings shared by the two ports. */
final class Ports {

    private Ports() {}

    /** Opens the right port for the settings. */
    static RedisPort connect(StoreSettings settings) {
        return settings.cluster() ? ClusterPort.connect(settings) : StandalonePort.connect(settings, options(settings));
    }

    /**
     * Every command times out after the store's timeout and is then completed, so Lettuce never re-sends it
     * after a reconnect (TimeoutOptions; see docs/redis-script-protocol.md, "Replays"). Connection attempts are
     * bounded by the same timeout. Auto-reconnect stays on (Lettuce's default, at-least-once).
     */
    static ClientOptions options(StoreSettings settings) {
        return ClientOptions.builder()
                .timeoutOptions(TimeoutOptions.enabled(settings.timeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(settings.timeout()).build())
                .build();
    }

    /** As {@link #options}, and the topology is refreshed whenever Redis redirects or a node is lost. */
    static ClusterClientOptions clusterOptions(StoreSettings settings) {
        return ClusterClientOptions.builder()
                .timeoutOptions(TimeoutOptions.enabled(settings.timeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(settings.timeout()).build())
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers().build())
                .build();
    }

    /** The store owns its client resources (event loops, timers) and shuts them down on close. */
    static ClientResources newResources() {
        return DefaultClientResources.create();
    }

    /** One script call on either topology's async commands (standalone and cluster share the scripting API). */
    static CompletableFuture<List<Object>> evalsha(RedisScriptingAsyncCommands<String, String> commands, String sha,
                                                   ScriptCall call) {
        return commands.<List<Object>>evalsha(sha, ScriptOutputType.MULTI, call.keys(), call.args())
                .toCompletableFuture();
    }

    static void shutdown(AbstractRedisClient client, ClientResources resources) {
        client.shutdown(0, 2, TimeUnit.SECONDS);
        resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(3_000);
    }
}
