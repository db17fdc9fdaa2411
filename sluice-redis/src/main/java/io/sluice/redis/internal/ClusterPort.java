package io.sluice.redis.internal;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@link RedisPort} on a Redis Cluster. Lettuce routes each {@code EVALSHA} and {@code FCALL} to the master of its
 * first key's slot (all keys of one call share that slot), follows MOVED/ASK redirections, and broadcasts
 * {@code SCRIPT LOAD} to every node, replicas included, so a promoted replica already has the script. It does not
 * broadcast {@code FUNCTION LOAD}: this port sends it to every master it knows, and replicas get the library by
 * replication. A master it did not know yet (added, or promoted without the library) answers "Function not found"
 * and the {@link ScriptRunner} loads again, on the masters of the topology as Lettuce knows it by then.
 */
final class ClusterPort implements RedisPort {

    /** Resources the port created and shuts down, or null when they belong to the application. */
    private final ClientResources ownResources;
    private final RedisClusterClient client;
    private final boolean ownClient;
    private final CommandDeadline deadline;
    private final StatefulRedisClusterConnection<String, String> connection;

    private ClusterPort(ClientResources ownResources, RedisClusterClient client, boolean ownClient,
                        CommandDeadline deadline) {
        this.ownResources = ownResources;
        this.client = client;
        this.ownClient = ownClient;
        this.deadline = deadline;
        try {
            this.connection = client.connect(StringCodec.UTF8);
        } catch (RuntimeException e) {
            Ports.shutdown(client, ownClient, ownResources);
            throw e;
        }
    }

    /**
     * Connects a client of the port's own to the settings' seeds, on {@code resources} when given (left running
     * on close), else on resources of its own; on failure releases what it created and rethrows Lettuce's
     * exception.
     */
    static ClusterPort connect(StoreSettings settings, ClientResources resources) {
        ClientResources own = resources == null ? Ports.newResources(settings) : null;
        RedisClusterClient client = RedisClusterClient.create(resources == null ? own : resources, settings.uris());
        client.setOptions(Ports.clusterOptions(settings));
        return new ClusterPort(own, client, true, CommandDeadline.NONE);
    }

    /**
     * Connects through the application's cluster client, to its own seeds and with its own options (topology
     * refresh included); the store's timeout is applied per command.
     */
    static ClusterPort connect(StoreSettings settings, RedisClusterClient client) {
        return new ClusterPort(null, client, false, Ports.foreignDeadline(client, settings));
    }

    @Override
    public CompletableFuture<List<Object>> evalsha(String sha, ScriptCall call) {
        return Ports.evalsha(connection.async(), sha, call, deadline);
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
            replies.add(Ports.evalsha(connection.async(), sha, call, deadline));
        }
        return replies;
    }

    @Override
    public CompletableFuture<Void> scriptLoad(String script) {
        // Lettuce's cluster SCRIPT LOAD runs on every known node and completes after all of them.
        return deadline.guard(connection.async().scriptLoad(script)).thenApply(sha -> null);
    }

    @Override
    public CompletableFuture<List<Object>> fcall(String function, ScriptCall call) {
        return Ports.fcall(connection.async(), function, call, deadline);
    }

    /** As {@link #evalshaPipelined}, and for the same reason on the shared connection. */
    @Override
    public List<CompletableFuture<List<Object>>> fcallPipelined(String function, List<ScriptCall> calls) {
        List<CompletableFuture<List<Object>>> replies = new ArrayList<>(calls.size());
        for (ScriptCall call : calls) {
            replies.add(Ports.fcall(connection.async(), function, call, deadline));
        }
        return replies;
    }

    @Override
    public CompletableFuture<Void> functionLoad(String library) {
        List<CompletableFuture<String>> loads = new ArrayList<>();
        for (RedisClusterNode node : connection.getPartitions()) {
            if (node.getRole().isUpstream()) {
                loads.add(connection.getConnectionAsync(node.getNodeId())
                        .thenCompose(c -> deadline.guard(c.async().functionLoad(library, true))));
            }
        }
        if (loads.isEmpty()) {
            return CompletableFuture.failedFuture(new IllegalStateException("the cluster topology names no master"));
        }
        return CompletableFuture.allOf(loads.toArray(new CompletableFuture<?>[0]));
    }

    @Override
    public CompletableFuture<Long> del(List<String> keys) {
        return deadline.guard(connection.async().del(keys.toArray(new String[0])));
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
        Ports.shutdown(client, ownClient, ownResources);
    }
}
