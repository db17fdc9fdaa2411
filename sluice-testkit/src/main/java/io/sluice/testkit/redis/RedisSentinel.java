package io.sluice.testkit.redis;

import java.time.Duration;
import java.util.List;

/**
 * A Redis Sentinel process watching one {@link RedisServer} as master {@code masterName}, quorum 1, on a free
 * 127.0.0.1 port: enough to connect through {@code redis-sentinel://} URIs. The caller closes it (the master
 * stays). Thread-safe.
 */
public final class RedisSentinel implements AutoCloseable {

    private static final Duration READY = Duration.ofSeconds(10);

    private final RedisServer process;
    private final String masterName;

    private RedisSentinel(RedisServer process, String masterName) {
        this.process = process;
        this.masterName = masterName;
    }

    /** Starts a sentinel for {@code master} and waits until it reports the master's address. */
    public static RedisSentinel start(RedisServer master, String masterName) {
        String config = "sentinel monitor " + masterName + " " + master.host() + " " + master.port() + " 1\n"
                + "sentinel down-after-milliseconds " + masterName + " 2000\n";
        RedisSentinel sentinel = new RedisSentinel(RedisServer.start(config, List.of("--sentinel")), masterName);
        try {
            sentinel.awaitMaster(master);
            return sentinel;
        } catch (RuntimeException e) {
            sentinel.close();
            throw e;
        }
    }

    public int port() {
        return process.port();
    }

    /** {@code redis-sentinel://127.0.0.1:<port>/?sentinelMasterId=<name>}. */
    public String uri() {
        return "redis-sentinel://" + RedisServer.HOST + ":" + port() + "/?sentinelMasterId=" + masterName;
    }

    @Override
    public void close() {
        process.close();
    }

    private void awaitMaster(RedisServer master) {
        long deadline = System.nanoTime() + READY.toNanos();
        while (System.nanoTime() < deadline) {
            Object addr = process.call("SENTINEL", "get-master-addr-by-name", masterName);
            if (addr instanceof List<?> l && l.size() == 2 && String.valueOf(master.port()).equals(l.get(1))) {
                return;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the sentinel", e);
            }
        }
        throw new IllegalStateException("the sentinel on port " + port() + " did not report master " + masterName);
    }
}
