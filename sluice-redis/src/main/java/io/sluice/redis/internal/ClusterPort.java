package io.sluice.redis.internal;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@link RedisPort} on a Redis Cluster. Lettuce routes each {@code EVALSHA} to the master of its first key's
 * slot (all keys of one call share that slot), follows MOVED/ASK redirections, and broadcasts
 * {@code SCRIPT LOAD} to every node, replicas included, so a promoted replica already has the script.
 */
final class ClusterPort implements RedisPort {

    private final ClientResources resources;
    private final RedisClusterClient client;
    private final StatefulRedisClusterConnection<String, String> connection;
    private final ReentrantLock pipelineLock = new ReentrantLock();
    private StatefulRedisClusterConnection<String, String> pipeline;

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

    @Override
    public List<CompletableFuture<List<Object>>> evalshaPipelined(String sha, List<ScriptCall> calls) {
        List<CompletableFuture<List<Object>>> replies = new ArrayList<>(calls.size());
        pipelineLock.lock();
        try {
            StatefulRedisClusterConnection<String, String> c = pipelineConnection();
            for (ScriptCall call : calls) {
                replies.add(Ports.evalsha(c.async(), sha, call));
            }
            c.flushCommands();
        } finally {
            pipelineLock.unlock();
        }
        return replies;
    }

    /** The batch connection, opened on first use; only called under the pipeline lock. */
    private StatefulRedisClusterConnection<String, String> pipelineConnection() {
        if (pipeline == null) {
            pipeline = client.connect(StringCodec.UTF8);
            pipeline.setAutoFlushCommands(false);
        }
        return pipeline;
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
        pipelineLock.lock();
        try {
            if (pipeline != null) {
                pipeline.close();
            }
        } finally {
            pipelineLock.unlock();
        }
        connection.close();
        Ports.shutdown(client, resources);
    }
}
