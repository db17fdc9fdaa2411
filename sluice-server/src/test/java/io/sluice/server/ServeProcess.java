package io.sluice.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real {@code sluice serve} process (this JVM's class path, {@link ServeCommand}), its standard output and
 * standard error kept apart, line by line, for the tests of what an operator sees: exit statuses, log lines,
 * environment variables, shutdown.
 */
final class ServeProcess implements AutoCloseable {

    final Process process;
    final List<String> stdout = Collections.synchronizedList(new ArrayList<>());
    final List<String> stderr = Collections.synchronizedList(new ArrayList<>());
    private final Thread[] readers;
    int httpPort;
    int grpcPort;

    private ServeProcess(Process process) {
        this.process = process;
        this.readers = new Thread[] {drain(process.getInputStream(), stdout), drain(process.getErrorStream(), stderr)};
    }

    /** Starts {@code sluice serve} with these arguments and environment variables (none of the test's own SLUICE_). */
    static ServeProcess launch(Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                ServeCommand.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().keySet().removeIf(k -> k.startsWith("SLUICE_"));
        pb.environment().putAll(env);
        try {
            return new ServeProcess(pb.start());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@link #launch}, on free ports, returning once it says it is ready (or failing with its output). */
    static ServeProcess start(Map<String, String> env, String... args) throws InterruptedException {
        List<String> all = new ArrayList<>(List.of("--http-port", "0", "--grpc-port", "0"));
        all.addAll(List.of(args));
        ServeProcess p = launch(env, all.toArray(new String[0]));
        p.awaitReady();
        return p;
    }

    private void awaitReady() throws InterruptedException {
        Pattern http = Pattern.compile("^sluice serve: HTTP on https?://127\\.0\\.0\\.1:(\\d+)");
        Pattern grpc = Pattern.compile("^sluice serve: gRPC on 127\\.0\\.0\\.1:(\\d+)");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline && process.isAlive()) {
            List<String> lines;
            synchronized (stdout) {
                lines = new ArrayList<>(stdout);
            }
            if (lines.stream().anyMatch(l -> l.startsWith("sluice serve: ready"))) {
                for (String l : lines) {
                    Matcher h = http.matcher(l);
                    Matcher g = grpc.matcher(l);
                    if (h.find()) {
                        httpPort = Integer.parseInt(h.group(1));
                    }
                    if (g.find()) {
                        grpcPort = Integer.parseInt(g.group(1));
                    }
                }
                return;
            }
            Thread.sleep(20);
        }
        close();
        throw new AssertionError("sluice serve did not become ready:\n" + output());
    }

    /** Waits for the process to end by itself (it could not start) and returns its exit status. */
    int exitStatus() throws InterruptedException {
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("sluice serve did not exit:\n" + output());
        }
        joinReaders();
        return process.exitValue();
    }

    /** SIGTERM; returns the milliseconds until the process had exited (at most 60 s are waited). */
    long terminate() throws InterruptedException {
        long start = System.nanoTime();
        // Through the handle: Process.destroy() would also close the pipes, losing what the process says while
        // it stops.
        process.toHandle().destroy();
        boolean exited = process.waitFor(60, TimeUnit.SECONDS);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        if (!exited) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            throw new AssertionError("sluice serve did not exit within 60 s of SIGTERM:\n" + output());
        }
        joinReaders();
        return millis;
    }

    String base(String scheme) {
        return scheme + "://127.0.0.1:" + httpPort;
    }

    String output() {
        List<String> all = new ArrayList<>();
        synchronized (stdout) {
            all.addAll(stdout);
        }
        synchronized (stderr) {
            all.addAll(stderr);
        }
        return String.join("\n", all);
    }

    List<String> stderrLines() {
        synchronized (stderr) {
            return List.copyOf(stderr);
        }
    }

    private void joinReaders() throws InterruptedException {
        for (Thread t : readers) {
            t.join(10_000);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Thread drain(InputStream in, List<String> into) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    into.add(line);
                }
            } catch (IOException e) {
                // the process ended
            }
        }, "serve-process-output");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
