package io.sluice.testkit.redis;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A {@code redis-server} child process for tests, on a free 127.0.0.1 port, without persistence, in its own
 * temporary directory. It can be paused (SIGSTOP), resumed, killed with SIGKILL and restarted on the same port,
 * which failure tests need.
 *
 * <p>{@link #shared()} is one server per JVM, started on first use and stopped by a shutdown hook or by
 * {@link SharedRedis} at the end of the test run; tests that pause, kill or restart a server must
 * {@link #start()} their own. Tests sharing a server keep apart by using their own keys.
 *
 * <p>Thread-safe: control methods are synchronized.
 */
public final class RedisServer implements AutoCloseable {

    /** Loopback only: the test servers have no password. */
    public static final String HOST = "127.0.0.1";

    private static final Duration STARTUP = Duration.ofSeconds(15);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);
    private static final int PORT_ATTEMPTS = 5;

    private static RedisServer shared;

    private final int port;
    private final Path dir;
    private final String config;
    private final List<String> extraArgs;
    private Process process;
    private boolean paused;

    private RedisServer(int port, Path dir, String config, List<String> extraArgs) {
        this.port = port;
        this.dir = dir;
        this.config = config;
        this.extraArgs = List.copyOf(extraArgs);
    }

    /**
     * Starts a new server on a free port; the caller closes it.
     *
     * @throws IllegalStateException when {@code redis-server} is not on the PATH or does not come up
     */
    public static RedisServer start() {
        return start(List.of());
    }

    /**
     * As {@link #start()}, with extra {@code redis-server} arguments, e.g. {@code "--rename-command", "FUNCTION", ""}
     * for a server that refuses a command as an older Redis would.
     */
    public static RedisServer startWith(String... extraArgs) {
        return start(List.of(extraArgs));
    }

    /** As {@link #start()}, with extra {@code redis-server} arguments (e.g. cluster mode). */
    static RedisServer start(List<String> extraArgs) {
        return start(null, extraArgs);
    }

    /**
     * As {@link #start()}, with a configuration file of {@code config} (null for none) in the server's
     * directory, passed first, and extra arguments (Sentinel needs both: a writable file and --sentinel).
     */
    static RedisServer start(String config, List<String> extraArgs) {
        String executable = executable("redis-server");
        Path dir = createTempDir();
        IllegalStateException last = null;
        for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
            // A free port can be taken between probing and binding; then try another.
            RedisServer server = new RedisServer(freePort(), dir, config, extraArgs);
            try {
                server.launch(executable);
                return server;
            } catch (IllegalStateException e) {
                last = e;
            }
        }
        deleteRecursively(dir);
        throw last;
    }

    /** The server shared by every test of this JVM, started on first use. */
    public static synchronized RedisServer shared() {
        if (shared == null || !shared.isRunning()) {
            shared = start();
            SharedRedis.stopAtExit();
        }
        return shared;
    }

    /** Stops the shared server if one was started. */
    static synchronized void stopShared() {
        if (shared != null) {
            shared.close();
            shared = null;
        }
    }

    public String host() {
        return HOST;
    }

    public int port() {
        return port;
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String uri() {
        return "redis://" + HOST + ":" + port;
    }

    /** The process id, for signals. */
    public synchronized long pid() {
        return process.pid();
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * Runs one command on a fresh connection and returns the reply (see {@link RespConnection}).
     *
     * @throws RespConnection.RespError for an error reply
     */
    public Object call(String... args) {
        try (RespConnection c = RespConnection.open(HOST, port, COMMAND_TIMEOUT)) {
            return c.call(args);
        }
    }

    /** Removes every key (FLUSHALL). */
    public void flushAll() {
        call("FLUSHALL");
    }

    /** Freezes the process with SIGSTOP: connections stay open, nothing is answered. */
    public synchronized void pause() {
        signal("STOP");
        paused = true;
    }

    /** Thaws a paused process with SIGCONT. */
    public synchronized void resume() {
        if (paused) {
            signal("CONT");
            paused = false;
        }
    }

    /** Kills the process with SIGKILL (no shutdown, connections reset) and waits for it to exit. */
    public synchronized void kill() {
        if (process != null) {
            process.destroyForcibly();
            waitFor(process);
            paused = false;
        }
    }

    /** Starts the server again on the same port after {@link #kill()} or {@link #stop()}; it starts empty. */
    public synchronized void restart() {
        if (isRunning()) {
            throw new IllegalStateException("redis-server on port " + port + " is still running; kill or stop it first");
        }
        launch(executable("redis-server"));
    }

    /** Stops the process: SHUTDOWN NOSAVE, then SIGKILL if it is still alive after a few seconds. */
    public synchronized void stop() {
        if (process == null || !process.isAlive()) {
            return;
        }
        resume();
        try (RespConnection c = RespConnection.open(HOST, port, Duration.ofSeconds(2))) {
            c.send("SHUTDOWN", "NOSAVE");
        } catch (RuntimeException ignored) {
            // unreachable already: fall through to the kill
        }
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                waitFor(process);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    /** Stops the server and deletes its directory. */
    @Override
    public synchronized void close() {
        stop();
        deleteRecursively(dir);
    }

    @Override
    public String toString() {
        return "RedisServer{" + uri() + "}";
    }

    // ------------------------------------------------------------------------------------------------ launching

    private void launch(String executable) {
        List<String> command = new ArrayList<>(List.of(executable));
        if (config != null) {
            command.add(writeConfigOnce().toString());
        }
        command.addAll(List.of("--bind", HOST, "--port", Integer.toString(port),
                "--save", "", "--appendonly", "no",
                "--dir", dir.toString(), "--daemonize", "no", "--logfile", ""));
        command.addAll(extraArgs);
        File log = dir.resolve("redis-" + port + ".log").toFile();
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log)).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + executable, e);
        }
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server on port " + port + " exited at startup: " + tail(log));
            }
            if (answersPing()) {
                return;
            }
            sleepMillis(20);
        }
        process.destroyForcibly();
        throw new IllegalStateException("redis-server on port " + port + " did not answer PING within " + STARTUP
                + ": " + tail(log));
    }

    /** The config file; written once, because Sentinel rewrites it with what it learns. */
    private Path writeConfigOnce() {
        Path file = dir.resolve("redis-" + port + ".conf");
        try {
            if (!Files.exists(file)) {
                Files.writeString(file, config, StandardCharsets.UTF_8);
            }
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private boolean answersPing() {
        try (RespConnection c = RespConnection.open(HOST, port, Duration.ofSeconds(1))) {
            return "PONG".equals(c.call("PING"));
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                    .redirectErrorStream(true).start();
            if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed: "
                        + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -" + signal, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending SIG" + signal, e);
        }
    }

    /**
     * The absolute path of {@code name} on the PATH.
     *
     * @throws IllegalStateException naming how to install it
     */
    static String executable(String name) {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String entry : path.split(File.pathSeparator)) {
                File candidate = new File(entry, name);
                if (candidate.isFile() && candidate.canExecute()) {
                    return candidate.getAbsolutePath();
                }
            }
        }
        throw new IllegalStateException(name + " is not on the PATH; install it: apt-get install redis-server, "
                + "or run ./run-tests");
    }

    private static int freePort() {
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return probe.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free port on " + HOST, e);
        }
    }

    private static Path createTempDir() {
        try {
            return Files.createTempDirectory("sluice-redis-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory for redis-server", e);
        }
    }

    private static String tail(File log) {
        try {
            List<String> lines = Files.readAllLines(log.toPath(), StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private static void waitFor(Process p) {
        try {
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for redis-server", e);
        }
    }

    static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort: a temp dir left behind is harmless
        }
    }
}
