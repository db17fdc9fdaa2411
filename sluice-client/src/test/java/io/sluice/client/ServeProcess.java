package io.sluice.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code sluice serve} process (this JVM's class path, {@code io.sluice.server.ServeCommand}) on a loopback
 * port chosen once, so that it can be stopped and started again on the same port, frozen ({@code SIGSTOP}) and
 * thawed ({@code SIGCONT}). Its output is kept for failure messages.
 */
final class ServeProcess implements AutoCloseable {

    private final List<String> args;
    private final int port;
    private final StringBuffer output = new StringBuffer();
    private Process process;

    /** A server on a free port with these extra arguments ({@code --store}, {@code --rules}, ...). */
    static ServeProcess start(String... extra) {
        ServeProcess p = new ServeProcess(freePort(), List.of(extra));
        p.start();
        return p;
    }

    /** A rule file in a temporary directory, for {@code --rules}. */
    static Path ruleFile(String yaml) {
        try {
            Path dir = Files.createTempDirectory("sluice-client-it");
            Path file = dir.resolve("rules.yaml");
            Files.writeString(file, yaml);
            file.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private ServeProcess(int port, List<String> extra) {
        this.port = port;
        this.args = List.copyOf(extra);
    }

    String uri() {
        return "http://127.0.0.1:" + port;
    }

    int port() {
        return port;
    }

    /** Starts the process and returns once it says it is ready. */
    synchronized void start() {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                "io.sluice.server.ServeCommand", "--http-port", String.valueOf(port), "--grpc-port", "0",
                // no quiet period: a stop (SIGTERM) ends at once, its clients' connections closed as the port
                // closes, instead of 1 s of quiet period and 1 s of the remote store's connection drain
                "--shutdown-quiet-period", "0s"));
        command.addAll(args);
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        BlockingQueue<Boolean> ready = new LinkedBlockingQueue<>();
        Process p = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    output.append(line).append('\n');
                    if (line.contains("sluice serve: ready")) {
                        ready.add(true);
                    }
                }
            } catch (IOException e) {
                // The process ended.
            }
            ready.add(false);
        }, "serve-output-" + port);
        reader.setDaemon(true);
        reader.start();
        try {
            Boolean ok = ready.poll(60, TimeUnit.SECONDS);
            if (ok == null || !ok) {
                stop();
                throw new IllegalStateException("sluice serve did not start:\n" + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Stops it (SIGTERM, then SIGKILL after 10 s) and waits for it to end. */
    synchronized void stop() {
        if (process == null) {
            return;
        }
        thaw();
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    /**
     * SIGSTOP: the process keeps its port and connections but answers nothing. Returns once the kernel reports
     * it stopped (a signal is delivered asynchronously).
     */
    synchronized void freeze() {
        signal("STOP");
        Path stat = Path.of("/proc", String.valueOf(process.pid()), "stat");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try {
            while (System.nanoTime() < deadline) {
                String s = Files.readString(stat);
                // The state follows the command name in parentheses: T when stopped.
                if (s.substring(s.lastIndexOf(')') + 2).startsWith("T")) {
                    return;
                }
                Thread.sleep(5);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw new IllegalStateException("sluice serve (pid " + process.pid() + ") did not stop on SIGSTOP");
    }

    /** SIGCONT. */
    synchronized void thaw() {
        signal("CONT");
    }

    private void signal(String name) {
        if (process == null || !process.isAlive()) {
            return;
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    String output() {
        return output.toString();
    }

    @Override
    public void close() {
        stop();
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
