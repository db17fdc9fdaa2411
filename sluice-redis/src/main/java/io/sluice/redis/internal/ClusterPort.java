package io.sluice.redis.internal;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@link RedisPort} on a Redis Cluster. Lettuce routes each {@code EVALSHA} to the master of its first key's
 * slot (all keys of one call share that slot), follows MOVED/ASK redirections, and broadcasts
 * {@code SCRIPT LOAD} to every node, replicas included, so a promoted replica already has the script.
 */
final class ClusterPort implements RedisPort {

    private final ClientResources resources;
    private final RedisClusterClient client;
    private final StatefulRedisClusterConnection<String, String> connection;

    private ClusterPort(ClientResources resources, RedisClusterClient client,
                        StatefulRedisClusterConnection<String, String> connection) {
        this.resources = resources;
        this.client = client;
        this.connection = connection;
    }

    /** Connects; on failure releases what it created and rethrows Lettuce's exception. */
    static ClusterPort connect(StoreSettings settings) {
        ClientResources resources = Ports.newResources(settings);
        RedisClusterClient client = RedisClusterClient.create(resources, settings.uris());
        client.setOptions(Ports.clusterOptions(settings));
        try {
            return new ClusterPort(resources, client, client.connect(StringCodec.UTF8));
        } catch (RuntimeException e) {
            Ports.shutdown(client, resources);
            throw e;
        }
    }

    @Override
    public CompletableFuture<List<Object>> evalsha(String sha, ScriptCall call) {
        return Ports.evalsha(connection.async(), sha, call);
    }

    /**
     * The calls written one after another on the shared connection, without waiting for replies: Netty gathers
     * the writes of one event-loop turn, so they still leave as a pipeline per node. Not with auto-flush turned
     * off on a connection of its own, as on standalone: Lettuce opens a cluster's node connections lazily, and a
     * command queued for a node whose connection was still being opened when the batch was flushed could sit
     * unflushed until it timed out (seen as 1 s timeouts of first batches in BatchIT and
     * RedisMemoryEquivalenceIT on the 3-master cluster).
     */
    @Override
    public List<CompletableFuture<List<Object>>> evalshaPipelined(String sha, List<ScriptCall> calls) {
        List<CompletableFuture<List<Object>>> replies = new ArrayList<>(calls.size());
        for (ScriptCall call : calls) {
            replies.add(Ports.evalsha(connection.async(), sha, call));
        }
        return replies;
    }

    @Override
    public CompletableFuture<Void> scriptLoad(String script) {
        // Lettuce's cluster SCRIPT LOAD runs on every known node and completes after all of them.
        return connection.async().scriptLoad(script).toCompletableFuture().thenApply(sha -> null);
    }

    @Override
    public CompletableFuture<Long> del(List<String> keys) {
        return connection.async().del(keys.toArray(new String[0])).toCompletableFuture();
    }

    @Override
    public boolean sameSlot(List<String> keys) {
        int slot = KeyLayout.slot(keys.get(0));
        for (String key : keys) {
            if (KeyLayout.slot(key) != slot) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void close() {
        connection.close();
        Ports.shutdown(client, resources);
    }
}
