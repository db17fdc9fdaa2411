package io.sluice.bench.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code sluice serve} as a user runs it: a child JVM on this JVM's class path (the bench jar carries the
 * launcher), listening on free loopback ports, its console copied to a log file. The suite measures it from
 * outside, so nothing of the bench's own JVM (JMH's leftovers, the Redis suite's clients) shares its heap or JIT.
 */
final class ServeProcess implements AutoCloseable {
    private static final Pattern HTTP_LINE = Pattern.compile("HTTP on (http://127\\.0\\.0\\.1:\\d+)");
    private static final long START_SECONDS = 60;
    /**
     * The heap {@code ./sluice serve} gives the server by default on a machine with 1 GiB or more (the launcher
     * script; docs/memory-store.md), so the server runs here as a user's does.
     */
    static final String LAUNCHER_HEAP = "-Xmx512m";

    private final Process process;
    private final String baseUrl;

    private ServeProcess(Process process, String baseUrl) {
        this.process = process;
        this.baseUrl = baseUrl;
    }

    /**
     * Starts {@code sluice serve} with {@code rules} on {@code store} ({@code memory} or a Redis URI) and waits
     * until it says it is ready.
     *
     * @throws IllegalStateException when it exits or is not ready within a minute (the log says why)
     */
    static ServeProcess start(Path dir, String name, Path rules, String store) throws IOException, InterruptedException {
        Path config = dir.resolve(name + "-serve.yaml");
        // Ports 0: free ports, printed. No reloads, and no quiet period when stopping: the suite stops the
        // server only after its last run has returned.
        Files.writeString(config, String.join("\n",
                "# sluice bench: the server suite's " + name + " server",
                "bind: 127.0.0.1",
                "http_port: 0",
                "grpc_port: 0",
                "rules: " + rules.toAbsolutePath(),
                "store: \"" + store + "\"",
                "reload_interval: 0s",
                "shutdown_quiet_period: 0s",
                ""), StandardCharsets.UTF_8);
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path log = dir.resolve(name + "-serve.log");
        Process process = new ProcessBuilder(List.of(java.toString(), LAUNCHER_HEAP, "-cp", System.getProperty("java.class.path"),
                "io.sluice.cli.Main", "serve", "--config", config.toString()))
                .redirectErrorStream(true).start();
        CompletableFuture<String> url = new CompletableFuture<>();
        Thread copier = new Thread(() -> copy(process, log, url), "sluice-bench-serve-log");
        copier.setDaemon(true);
        copier.start();
        try {
            return new ServeProcess(process, url.get(START_SECONDS, TimeUnit.SECONDS));
        } catch (ExecutionException | TimeoutException e) {
            process.destroyForcibly();
            String reason = e instanceof TimeoutException ? "not ready within " + START_SECONDS + " s"
                    : e.getCause().getMessage();
            throw new IllegalStateException("sluice serve (" + store + "): " + reason + "; log " + log);
        }
    }

    /** Copies the server's console to {@code log} and completes {@code url} at its ready line. */
    private static void copy(Process process, Path log, CompletableFuture<String> url) {
        String address = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)); var out = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                out.write(line);
                out.newLine();
                out.flush();
                Matcher http = HTTP_LINE.matcher(line);
                if (http.find()) {
                    address = http.group(1);
                }
                if (line.startsWith("sluice serve: ready") && address != null) {
                    url.complete(address);
                }
            }
        } catch (IOException e) {
            url.completeExceptionally(e);
        }
        url.completeExceptionally(new IllegalStateException("exited before it was ready"));
    }

    /** The server's resident set (VmRSS of /proc/PID/status) in MiB, or NaN where there is no /proc. */
    double rssMb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux, or the process is gone: no figure
        }
        return Double.NaN;
    }

    /** {@code http://127.0.0.1:<port>}. */
    String baseUrl() {
        return baseUrl;
    }

    /** Stops the server (SIGTERM: its graceful stop), forcibly after 20 seconds. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
