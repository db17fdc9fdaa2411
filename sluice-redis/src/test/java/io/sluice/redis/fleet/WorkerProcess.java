package io.sluice.redis.fleet;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A worker JVM of a multi-process test ({@link FleetWorker}, {@link SyncedFleetWorker}): started with this JVM's
 * java and test classpath, told what to do one line at a time on its standard input, answering one line at a time
 * on its standard output (read into a queue), its standard error kept in {@code target/fleet-logs} and quoted when
 * it does not answer as expected.
 */
final class WorkerProcess {
    private static final String EOF = "\u0000EOF";

    private final String name;
    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path log;

    private WorkerProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(this::readLines, name.replace(' ', '-') + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code main} with {@code args} in a small JVM ({@code maxHeap}, serial GC, C1 only: these processes
     * are many and short-lived), its log at {@code target/fleet-logs/<logName>.log}.
     *
     * @param name how errors name the process, e.g. "fleet worker 2"
     */
    static WorkerProcess start(String name, String logName, String maxHeap, Class<?> main, List<String> args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
                "-Xmx" + maxHeap, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", main.getName()));
        command.addAll(args);
        try {
            Path dir = Files.createDirectories(Path.of("target", "fleet-logs"));
            Path log = dir.resolve(logName + ".log");
            return new WorkerProcess(name, new ProcessBuilder(command).redirectError(log.toFile()).start(), log);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + command, e);
        }
    }

    private void readLines() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException ignored) {
            // the process went away; EOF below says so
        }
        lines.add(EOF);
    }

    void send(String command) {
        try {
            stdin.write(command + "\n");
            stdin.flush();
        } catch (IOException e) {
            throw new AssertionError(name + " is gone (" + e + "): " + logTail(), e);
        }
    }

    /** The next output line, which must start with {@code start}, within {@code within}. */
    String expect(String start, Duration within) {
        String line;
        try {
            line = lines.poll(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + name, e);
        }
        if (line == null) {
            throw new AssertionError(name + " did not print '" + start + "' within " + within + ": " + logTail());
        }
        if (line.equals(EOF)) {
            throw new AssertionError(name + " exited before printing '" + start + "': " + logTail());
        }
        if (!line.startsWith(start)) {
            throw new AssertionError(name + " printed '" + line.substring(0, Math.min(200, line.length()))
                    + "', expected '" + start + "...': " + logTail());
        }
        return line;
    }

    /** Asks the process to quit (QUIT, then end of input). */
    void quit() {
        try {
            stdin.write("QUIT\n");
            stdin.close();
        } catch (IOException ignored) {
            // already gone
        }
    }

    /** Waits for the process to exit, killing it after 10 s. */
    void awaitExit() {
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    private String logTail() {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return log + ":\n" + String.join("\n", all.subList(Math.max(0, all.size() - 30), all.size()));
        } catch (IOException e) {
            return "(no log " + log + ": " + e + ")";
        }
    }
}
