package io.sluice.redis;

import io.sluice.testkit.redis.RedisCluster;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.RespConnection;
import java.util.ArrayList;
import java.util.List;

/** The two shared test deployments, and inspection of the keys they hold whatever the node. */
public enum Topology {
    STANDALONE, CLUSTER;

    /** A store builder pointing at the shared server or cluster. */
    public RedisStore.Builder builder() {
        return this == STANDALONE ? RedisStore.builder().uri(RedisServer.shared().uri())
                : RedisStore.builder().uri(RedisCluster.shared().uri()).cluster(true);
    }

    /** The nodes that hold keys. */
    public List<RedisServer> nodes() {
        return this == STANDALONE ? List.of(RedisServer.shared()) : RedisCluster.shared().nodes();
    }

    /** Runs a command about {@code key} on the node that owns it. */
    public Object call(String key, String... command) {
        RespConnection.RespError moved = null;
        for (RedisServer node : nodes()) {
            try {
                return node.call(command);
            } catch (RespConnection.RespError e) {
                if (!e.getMessage().startsWith("MOVED")) {
                    throw e;
                }
                moved = e;
            }
        }
        throw new IllegalStateException("no node owns " + key, moved);
    }

    /** The state stored at {@code key} (on the node that owns it), or null when there is none. */
    public StoredState state(String key) {
        return StoredState.parse(call(key, "GET", key));
    }

    /** Keys matching {@code pattern} on every node. */
    public List<String> keys(String pattern) {
        List<String> keys = new ArrayList<>();
        for (RedisServer node : nodes()) {
            for (Object k : (List<?>) node.call("KEYS", pattern)) {
                keys.add((String) k);
            }
        }
        return keys;
    }

    /** Keys matching {@code pattern}, per node. */
    public List<List<String>> keysPerNode(String pattern) {
        List<List<String>> out = new ArrayList<>();
        for (RedisServer node : nodes()) {
            List<String> keys = new ArrayList<>();
            for (Object k : (List<?>) node.call("KEYS", pattern)) {
                keys.add((String) k);
            }
            out.add(keys);
        }
        return out;
    }

    /** Script calls (EVALSHA and FCALL, whichever the store uses) the nodes have run, from INFO commandstats. */
    public long scriptCalls() {
        return scriptCalls(nodes());
    }

    /** As {@link #scriptCalls()} on {@code nodes}. */
    public static long scriptCalls(List<RedisServer> nodes) {
        long calls = 0;
        for (RedisServer node : nodes) {
            for (String line : String.valueOf(node.call("INFO", "commandstats")).split("\r?\n")) {
                if (line.startsWith("cmdstat_evalsha:calls=") || line.startsWith("cmdstat_fcall:calls=")) {
                    calls += Long.parseLong(line.substring(line.indexOf('=') + 1, line.indexOf(',')));
                }
            }
        }
        return calls;
    }

    /** Empties every node's script cache and deletes every functions library, as a restart without persistence does. */
    public void flushScripts() {
        nodes().forEach(n -> {
            n.call("SCRIPT", "FLUSH");
            n.call("FUNCTION", "FLUSH");
        });
    }
}
