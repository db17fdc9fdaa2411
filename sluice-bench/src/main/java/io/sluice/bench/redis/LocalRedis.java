package io.sluice.bench.redis;

import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.RespConnection;
import java.io.File;
import java.time.Duration;

/**
 * The {@code redis-server} the Redis suites measure against: the testkit's {@link RedisServer}, a child process
 * on a free 127.0.0.1 port without persistence (disk writes would add noise unrelated to the limiters),
 * stopped with the run; plus the harness's own admin connections to it.
 */
public final class LocalRedis implements AutoCloseable {

    public static final String HOST = RedisServer.HOST;

    private final RedisServer server;

    private LocalRedis(RedisServer server) {
        this.server = server;
    }

    /**
     * Starts {@code redis-server} and waits until it answers.
     *
     * @throws IllegalStateException when it is not on the PATH or does not come up
     */
    public static LocalRedis start() {
        return new LocalRedis(RedisServer.start());
    }

    /** Whether {@code name} is an executable on the PATH. */
    public static boolean onPath(String name) {
        return find(name) != null;
    }

    /** The executable's absolute path on the PATH, or null. */
    public static String find(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            File candidate = new File(dir, name);
            if (candidate.isFile() && candidate.canExecute()) {
                return candidate.getAbsolutePath();
            }
        }
        return null;
    }

    public int port() {
        return server.port();
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String uri() {
        return server.uri();
    }

    /** A new admin connection; the caller closes it. */
    public RespConnection admin() {
        return RespConnection.open(HOST, port(), Duration.ofSeconds(60));
    }

    /** Stops the server and deletes its directory. */
    @Override
    public void close() {
        server.close();
    }
}
