package io.sluice.redis.internal;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/** {@link RedisPort} on one Redis server, directly or through Sentinel. */
final class StandalonePort implements RedisPort {

    private final ClientResources resources;
    private final RedisClient client;
    private final RedisURI uri;
    private final StatefulRedisConnection<String, String> connection;
    private final ReentrantLock pipelineLock = new ReentrantLock();
    private StatefulRedisConnection<String, String> pipeline;

    private StandalonePort(ClientResources resources, RedisClient client, RedisURI uri,
                           StatefulRedisConnection<String, String> connection) {
        this.resources = resources;
        this.client = client;
        this.uri = uri;
        this.connection = connection;
    }

    /** Connects; on failure releases what it created and rethrows Lettuce's exception. */
    static StandalonePort connect(StoreSettings settings, ClientOptions options) {
        ClientResources resources = Ports.newResources(settings);
        RedisURI uri = settings.uris().get(0);
        RedisClient client = RedisClient.create(resources);
        client.setOptions(options);
        try {
            return new StandalonePort(resources, client, uri, client.connect(StringCodec.UTF8, uri));
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
            StatefulRedisConnection<String, String> c = pipelineConnection();
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
    private StatefulRedisConnection<String, String> pipelineConnection() {
        if (pipeline == null) {
            pipeline = client.connect(StringCodec.UTF8, uri);
            pipeline.setAutoFlushCommands(false);
        }
        return pipeline;
    }

    @Override
    public CompletableFuture<Void> scriptLoad(String script) {
        return connection.async().scriptLoad(script).toCompletableFuture().thenApply(sha -> null);
    }

    @Override
    public CompletableFuture<Long> del(List<String> keys) {
        return connection.async().del(keys.toArray(new String[0])).toCompletableFuture();
    }

    @Override
    public boolean sameSlot(List<String> keys) {
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
