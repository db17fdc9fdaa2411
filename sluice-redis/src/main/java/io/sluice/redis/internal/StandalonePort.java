package io.sluice.redis.internal;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;

/** {@link RedisPort} on one Redis server, directly or through Sentinel. */
final class StandalonePort implements RedisPort {

    /** Resources the port created and shuts down, or null when they belong to the application. */
    private final ClientResources ownResources;
    private final RedisClient client;
    private final boolean ownClient;
    /** The URI to connect to, or null for the application's client's own default URI. */
    private final RedisURI uri;
    private final CommandDeadline deadline;
    private final StatefulRedisConnection<String, String> connection;
    private final ReentrantLock pipelineLock = new ReentrantLock();
    private StatefulRedisConnection<String, String> pipeline;

    private StandalonePort(ClientResources ownResources, RedisClient client, boolean ownClient, RedisURI uri,
                           CommandDeadline deadline) {
        this.ownResources = ownResources;
        this.client = client;
        this.ownClient = ownClient;
        this.uri = uri;
        this.deadline = deadline;
        try {
            this.connection = open();
        } catch (RuntimeException e) {
            Ports.shutdown(client, ownClient, ownResources);
            throw e;
        }
    }

    /**
     * Connects a client of the port's own, on {@code resources} when given (left running on close), else on
     * resources of its own; on failure releases what it created and rethrows Lettuce's exception.
     */
    static StandalonePort connect(StoreSettings settings, ClientResources resources) {
        ClientResources own = resources == null ? Ports.newResources(settings) : null;
        RedisClient client = RedisClient.create(resources == null ? own : resources);
        client.setOptions(Ports.options(settings));
        return new StandalonePort(own, client, true, settings.uris().get(0), CommandDeadline.NONE);
    }

    /**
     * Connects through the application's client, to the settings' URI if one was given, else to the client's
     * own URI; the client's options stay as they are, and the store's timeout is applied per command.
     *
     * @throws IllegalArgumentException when neither the settings nor the client name a URI
     */
    static StandalonePort connect(StoreSettings settings, RedisClient client) {
        RedisURI uri = settings.uris().isEmpty() ? null : settings.uris().get(0);
        try {
            return new StandalonePort(null, client, false, uri, Ports.foreignDeadline(client, settings));
        } catch (IllegalStateException e) {
            if (uri == null) {
                throw new IllegalArgumentException("the RedisClient was created without a URI; give the store one "
                        + "with uri(...)", e);
            }
            throw e;
        }
    }

    private StatefulRedisConnection<String, String> open() {
        StatefulRedisConnection<String, String> c = uri == null ? client.connect(StringCodec.UTF8)
                : client.connect(StringCodec.UTF8, uri);
        return c;
    }

    @Override
    public CompletableFuture<List<Object>> evalsha(String sha, ScriptCall call) {
        return Ports.evalsha(connection.async(), sha, call, deadline);
    }

    @Override
    public List<CompletableFuture<List<Object>>> evalshaPipelined(String sha, List<ScriptCall> calls) {
        return pipelined(calls, (c, call) -> Ports.evalsha(c.async(), sha, call, deadline));
    }

    @Override
    public CompletableFuture<List<Object>> fcall(String function, ScriptCall call) {
        return Ports.fcall(connection.async(), function, call, deadline);
    }

    @Override
    public List<CompletableFuture<List<Object>>> fcallPipelined(String function, List<ScriptCall> calls) {
        return pipelined(calls, (c, call) -> Ports.fcall(c.async(), function, call, deadline));
    }

    private List<CompletableFuture<List<Object>>> pipelined(List<ScriptCall> calls,
            BiFunction<StatefulRedisConnection<String, String>, ScriptCall, CompletableFuture<List<Object>>> send) {
        List<CompletableFuture<List<Object>>> replies = new ArrayList<>(calls.size());
        pipelineLock.lock();
        try {
            StatefulRedisConnection<String, String> c = pipelineConnection();
            for (ScriptCall call : calls) {
                replies.add(send.apply(c, call));
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
            pipeline = open();
            pipeline.setAutoFlushCommands(false);
        }
        return pipeline;
    }

    @Override
    public CompletableFuture<Void> scriptLoad(String script) {
        return deadline.guard(connection.async().scriptLoad(script)).thenApply(sha -> null);
    }

    @Override
    public CompletableFuture<Void> functionLoad(String library) {
        return deadline.guard(connection.async().functionLoad(library, true)).thenApply(name -> null);
    }

    @Override
    public CompletableFuture<Long> del(List<String> keys) {
        return deadline.guard(connection.async().del(keys.toArray(new String[0])));
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
        Ports.shutdown(client, ownClient, ownResources);
    }
}
