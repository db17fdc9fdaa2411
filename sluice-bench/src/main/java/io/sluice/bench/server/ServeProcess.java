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
public final class ServeProcess implements AutoCloseable {
    private static final Pattern HTTP_LINE = Pattern.compile("HTTP on (http://127\\.0\\.0\\.1:\\d+)");
    private static final Pattern GRPC_LINE = Pattern.compile("gRPC on 127\\.0\\.0\\.1:(\\d+)");
    /** A JVM start on a two-core machine shared with builds has taken 40 s; a bound, not an expectation. */
    private static final long START_SECONDS = 120;
    /**
     * The heap {@code ./sluice serve} gives the server by default on a machine with 1 GiB or more (the launcher
     * script; docs/memory-store.md), so the server runs here as a user's does.
     */
    static final String LAUNCHER_HEAP = "-Xmx512m";

    private final Process process;
    private final String baseUrl;
    private final int grpcPort;

    private ServeProcess(Process process, String baseUrl, int grpcPort) {
        this.process = process;
        this.baseUrl = baseUrl;
        this.grpcPort = grpcPort;
    }

    /**
     * Starts {@code sluice serve} with {@code rules} on {@code store} ({@code memory} or a Redis URI) and waits
     * until it says it is ready.
     *
     * @throws IllegalStateException when it exits or is not ready within two minutes (the log says why)
     */
    static ServeProcess start(Path dir, String name, Path rules, String store) throws IOException, InterruptedException {
        return start(dir, name, List.of(rules), store);
    }

    /** As {@link #start(Path, String, Path, String)} with several rule files (Sluice rules, Envoy configs). */
    public static ServeProcess start(Path dir, String name, List<Path> rules, String store)
            throws IOException, InterruptedException {
        Path config = dir.resolve(name + "-serve.yaml");
        // Ports 0: free ports, printed. No reloads, and no quiet period when stopping: the suite stops the
        // server only after its last run has returned.
        Files.writeString(config, String.join("\n",
                "# sluice bench: the server suite's " + name + " server",
                "bind: 127.0.0.1",
                "http_port: 0",
                "grpc_port: 0",
                "rules: [" + String.join(", ", rules.stream().map(r -> "\"" + r.toAbsolutePath() + "\"").toList()) + "]",
                "store: \"" + store + "\"",
                "reload_interval: 0s",
                "shutdown_quiet_period: 0s",
                ""), StandardCharsets.UTF_8);
        return launch(dir.resolve(name + "-serve.log"), store, "io.sluice.cli.Main", "serve", "--config",
                config.toString());
    }

    /**
     * The server suite's ceiling: {@code io.sluice.server.EmptyEndpoint}, the same HTTP stack as
     * {@code sluice serve} answering {@code POST /v1/check} with a constant 200, in a JVM started as the
     * server's is (same heap), on a free loopback port.
     */
    static ServeProcess startEmptyEndpoint(Path dir) throws IOException, InterruptedException {
        return launch(dir.resolve("empty-endpoint.log"), "empty endpoint", "io.sluice.server.EmptyEndpoint", "0");
    }

    private static ServeProcess launch(Path log, String store, String... mainAndArgs)
            throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new java.util.ArrayList<>(List.of(java.toString(), LAUNCHER_HEAP, "-cp",
                System.getProperty("java.class.path")));
        command.addAll(List.of(mainAndArgs));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<String> url = new CompletableFuture<>();
        CompletableFuture<Integer> grpc = new CompletableFuture<>();
        Thread copier = new Thread(() -> copy(process, log, url, grpc), "sluice-bench-serve-log");
        copier.setDaemon(true);
        copier.start();
        try {
            String address = url.get(START_SECONDS, TimeUnit.SECONDS);
            return new ServeProcess(process, address, grpc.getNow(-1));
        } catch (ExecutionException | TimeoutException e) {
            process.destroyForcibly();
            String reason = e instanceof TimeoutException ? "not ready within " + START_SECONDS + " s"
                    : e.getCause().getMessage();
            throw new IllegalStateException("sluice serve (" + store + "): " + reason + "; log " + log);
        }
    }

    /** Copies the server's console to {@code log} and completes {@code url} at its ready line. */
    private static void copy(Process process, Path log, CompletableFuture<String> url,
            CompletableFuture<Integer> grpcPort) {
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
                Matcher grpc = GRPC_LINE.matcher(line);
                if (grpc.find()) {
                    grpcPort.complete(Integer.parseInt(grpc.group(1)));
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
    public double rssMb() {
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
    public String baseUrl() {
        return baseUrl;
    }

    /** The gRPC port, or -1 if the server did not print it before it was ready. */
    public int grpcPort() {
        return grpcPort;
    }

    /** The server's process id, for reading its /proc entries. */
    public long pid() {
        return process.pid();
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
