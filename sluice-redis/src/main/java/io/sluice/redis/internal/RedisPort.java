package io.sluice.redis.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The few Redis operations the store needs, over one shared connection: the narrow seam between the store and
 * the client library (as bucket4j's {@code RedisApi}), implemented for a standalone/Sentinel connection and for
 * a Cluster connection. Implementations are thread-safe; every future completes, at the latest with a timeout
 * error after the configured timeout.
 */
public interface RedisPort extends AutoCloseable {

    /** {@code EVALSHA sha} with the call's keys and arguments; the reply is the script's list of strings. */
    CompletableFuture<List<Object>> evalsha(String sha, ScriptCall call);

    /**
     * {@code EVALSHA} for every call, written together and flushed once (on a connection of its own, so other
     * callers' commands do not wait for the batch); replies in call order.
     */
    List<CompletableFuture<List<Object>>> evalshaPipelined(String sha, List<ScriptCall> calls);

    /** {@code SCRIPT LOAD script} on every node that may run it; completes when all have it. */
    CompletableFuture<Void> scriptLoad(String script);

    /** {@code FCALL function} with the call's keys and arguments; the reply is the function's list. */
    CompletableFuture<List<Object>> fcall(String function, ScriptCall call);

    /** {@code FCALL} for every call, written together and flushed once, as {@link #evalshaPipelined}. */
    List<CompletableFuture<List<Object>>> fcallPipelined(String function, List<ScriptCall> calls);

    /**
     * {@code FUNCTION LOAD REPLACE library} on every master (replicas get it by replication); completes when all
     * have it.
     */
    CompletableFuture<Void> functionLoad(String library);

    /** {@code DEL keys}; the keys may span slots. */
    CompletableFuture<Long> del(List<String> keys);

    /** Whether one script call may touch all of {@code keys}: always on standalone, same slot on Cluster. */
    boolean sameSlot(List<String> keys);

    /** Closes the connections, the client and the client resources the port created. */
    @Override
    void close();
}
