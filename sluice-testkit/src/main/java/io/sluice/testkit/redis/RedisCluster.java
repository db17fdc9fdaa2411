package io.sluice.testkit.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A Redis Cluster of {@code redis-server} child processes on free 127.0.0.1 ports: masters (3 by default) and
 * optionally replicas, created with {@code redis-cli --cluster create} and ready when every node reports
 * {@code cluster_state:ok} with all 16384 slots served.
 *
 * <p>{@link #shared()} is one 3-master cluster per JVM, started on first use and stopped by a shutdown hook or
 * by {@link SharedRedis}. Thread-safe.
 */
public final class RedisCluster implements AutoCloseable {

    private static final Duration READY = Duration.ofSeconds(30);
    /** Default {@code cluster-node-timeout}: how long a node may be unreachable before it is failed over. */
    public static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofSeconds(3);
    private static RedisCluster shared;

    private final List<RedisServer> nodes;

    private RedisCluster(List<RedisServer> nodes) {
        this.nodes = List.copyOf(nodes);
    }

    /**
     * Starts a cluster of {@code masters} masters with {@code replicasPerMaster} replicas each; the caller
     * closes it.
     *
     * @throws IllegalStateException when the servers or redis-cli are missing, or the cluster does not form
     */
    public static RedisCluster start(int masters, int replicasPerMaster) {
        return start(masters, replicasPerMaster, DEFAULT_NODE_TIMEOUT);
    }

    /**
     * As {@link #start(int, int)}, with the given {@code cluster-node-timeout}: failover tests use a short one so
     * a killed master's replica is promoted within a couple of seconds.
     *
     * @throws IllegalArgumentException unless the node timeout is between 100 ms and 1 minute
     */
    public static RedisCluster start(int masters, int replicasPerMaster, Duration nodeTimeout) {
        if (nodeTimeout == null || nodeTimeout.toMillis() < 100 || nodeTimeout.toMillis() > 60_000) {
            throw new IllegalArgumentException("nodeTimeout must be between 100 ms and 1 minute, was " + nodeTimeout);
        }
        if (masters < 3 || replicasPerMaster < 0) {
            throw new IllegalArgumentException("a cluster needs at least 3 masters and >= 0 replicas per master, was "
                    + masters + " and " + replicasPerMaster);
        }
        String cli = RedisServer.executable("redis-cli");
        List<RedisServer> nodes = new ArrayList<>();
        try {
            int count = masters * (1 + replicasPerMaster);
            for (int i = 0; i < count; i++) {
                nodes.add(RedisServer.start(List.of("--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf", "--cluster-node-timeout",
                        Long.toString(nodeTimeout.toMillis()))));
            }
            create(cli, nodes, replicasPerMaster);
            RedisCluster cluster = new RedisCluster(nodes);
            cluster.awaitReady(masters * replicasPerMaster);
            return cluster;
        } catch (RuntimeException e) {
            nodes.forEach(RedisServer::close);
            throw e;
        }
    }

    /** The 3-master cluster shared by every test of this JVM, started on first use. */
    public static synchronized RedisCluster shared() {
        if (shared == null) {
            shared = start(3, 0);
            SharedRedis.stopAtExit();
        }
        return shared;
    }

    /** Stops the shared cluster if one was started. */
    static synchronized void stopShared() {
        if (shared != null) {
            shared.close();
            shared = null;
        }
    }

    /** Every node, masters and replicas, in creation order (redis-cli makes the first ones masters). */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /** One {@code redis://127.0.0.1:<port>} URI per node: seeds for a cluster client. */
    public List<String> seedUris() {
        return nodes.stream().map(RedisServer::uri).collect(Collectors.toList());
    }

    /** The seed URIs as one comma-separated string. */
    public String uri() {
        return String.join(",", seedUris());
    }

    /** Runs one command on every node, returning the replies in node order. */
    public List<Object> callOnAll(String... args) {
        List<Object> replies = new ArrayList<>();
        for (RedisServer node : nodes) {
            replies.add(node.call(args));
        }
        return replies;
    }

    /**
     * The node that serves {@code slot} as a master in the topology as the first running node sees it now
     * (after a failover: the promoted replica), or null while that node sees no live master for it.
     */
    public RedisServer masterOf(int slot) {
        for (RedisServer node : nodes) {
            if (!node.isRunning()) {
                continue;
            }
            String topology;
            try {
                topology = String.valueOf(node.call("CLUSTER", "NODES"));
            } catch (RuntimeException unreachable) {
                continue;
            }
            for (String line : topology.split("\n")) {
                String[] f = line.trim().split(" ");
                if (f.length < 9 || !f[2].contains("master") || f[2].contains("fail")) {
                    continue;
                }
                for (int i = 8; i < f.length; i++) {
                    String range = f[i];
                    if (range.startsWith("[")) {
                        continue;   // a slot being migrated
                    }
                    int dash = range.indexOf('-');
                    int from = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                    int to = dash < 0 ? from : Integer.parseInt(range.substring(dash + 1));
                    if (slot >= from && slot <= to) {
                        return byAddress(f[1]);
                    }
                }
            }
            return null;
        }
        return null;
    }

    /** The node at {@code ip:port@cport} as CLUSTER NODES lists it, or null. */
    private RedisServer byAddress(String address) {
        String hostPort = address.contains("@") ? address.substring(0, address.indexOf('@')) : address;
        int port = Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
        for (RedisServer node : nodes) {
            if (node.port() == port) {
                return node;
            }
        }
        return null;
    }

    /** Removes every key on every master (FLUSHALL on the nodes that accept writes). */
    public void flushAll() {
        for (RedisServer node : nodes) {
            try {
                node.call("FLUSHALL");
            } catch (RespConnection.RespError readOnlyReplica) {
                // replicas refuse writes; their masters' flush reaches them
            }
        }
    }

    @Override
    public synchronized void close() {
        nodes.forEach(RedisServer::close);
    }

    @Override
    public String toString() {
        return "RedisCluster{" + uri() + "}";
    }

    private static void create(String cli, List<RedisServer> nodes, int replicasPerMaster) {
        List<String> command = new ArrayList<>(List.of(cli, "--cluster", "create"));
        for (RedisServer node : nodes) {
            command.add(node.host() + ":" + node.port());
        }
        command.addAll(List.of("--cluster-replicas", Integer.toString(replicasPerMaster), "--cluster-yes"));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] output = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed: "
                        + new String(output, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + cli, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating the cluster", e);
        }
    }

    /**
     * Waits until every node sees the whole cluster healthy: state ok, all slots served, all nodes known, every
     * replica attached to its master and in sync.
     */
    private void awaitReady(int replicas) {
        long deadline = System.nanoTime() + READY.toNanos();
        String notReady = "";
        while (System.nanoTime() < deadline) {
            notReady = "";
            for (RedisServer node : nodes) {
                String info = String.valueOf(node.call("CLUSTER", "INFO"));
                String topology = String.valueOf(node.call("CLUSTER", "NODES"));
                long attached = topology.lines().filter(l -> l.contains("slave")).count();
                String replication = String.valueOf(node.call("INFO", "replication"));
                boolean synced = !replication.contains("role:slave") || replication.contains("master_link_status:up");
                if (!info.contains("cluster_state:ok") || !info.contains("cluster_slots_ok:16384")
                        || !info.contains("cluster_known_nodes:" + nodes.size() + "\r") || attached != replicas
                        || !synced) {
                    notReady = node + ": " + info + topology + replication;
                    break;
                }
            }
            if (notReady.isEmpty()) {
                return;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the cluster", e);
            }
        }
        throw new IllegalStateException("the cluster did not become ready within " + READY + "; " + notReady);
    }
}
