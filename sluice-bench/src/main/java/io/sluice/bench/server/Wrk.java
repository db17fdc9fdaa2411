package io.sluice.bench.server;

import io.sluice.bench.redis.LocalRedis;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HTTP load generator of the server suite: <a href="https://github.com/wg/wrk">wrk</a> (Debian package
 * {@code wrk}), a C program on its own event loop, so the load costs the machine far less than a JVM client
 * would and the server gets the rest of it. Each run POSTs checks through {@code check.lua} (a resource next to
 * this class) and returns what that script counted.
 */
final class Wrk {
    private static final Pattern RESULT = Pattern.compile("^sluice-wrk (.*)$", Pattern.MULTILINE);

    private final String executable;
    private final Path script;
    private final Path logDir;
    /** Runs so far, for the log file names; the eviction flood runs two at once. */
    private final java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();

    private Wrk(String executable, Path script, Path logDir) {
        this.executable = executable;
        this.script = script;
        this.logDir = logDir;
    }

    /** wrk from the PATH with the script copied into {@code logDir}, or null when wrk is not installed. */
    static Wrk find(Path logDir) throws IOException {
        String executable = LocalRedis.find("wrk");
        if (executable == null) {
            return null;
        }
        Path script = logDir.resolve("check.lua");
        try (InputStream in = Wrk.class.getResourceAsStream("check.lua")) {
            if (in == null) {
                throw new IllegalStateException("check.lua is missing from the bench jar");
            }
            Files.write(script, in.readAllBytes());
        }
        return new Wrk(executable, script, logDir);
    }

    /** wrk's version line, e.g. "wrk debian/4.1.0-3+b2 [epoll]". */
    String version() throws IOException, InterruptedException {
        Process process = new ProcessBuilder(executable, "--version").redirectErrorStream(true).start();
        String text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor(10, TimeUnit.SECONDS);
        String first = text.strip().lines().findFirst().orElse("unknown");
        int copyright = first.indexOf(" Copyright");
        return copyright > 0 ? first.substring(0, copyright) : first;
    }

    /**
     * What one wrk run counted.
     *
     * @param requests      answers received
     * @param seconds       the run's length as wrk measured it
     * @param admitted      200 answers
     * @param rejected      429 answers
     * @param other         any other status
     * @param p50Us         median latency
     * @param p99Us         99th percentile latency
     * @param socketErrors  connect, read, write errors and timeouts
     */
    record Result(long requests, double seconds, long admitted, long rejected, long other, double p50Us, double p99Us,
                  long socketErrors) {

        double perSecond() {
            return requests / seconds;
        }
    }

    /**
     * One run of {@code seconds} over {@code connections} connections (one wrk thread: on two cores a second
     * one would only take CPU from the server) against {@code baseUrl}, checking {@code rule} for {@code keys}
     * keys named after {@code prefix}.
     */
    Result run(String baseUrl, int connections, int seconds, String rule, int keys, String prefix)
            throws IOException, InterruptedException {
        Path log = logDir.resolve(String.format("wrk-%03d.txt", runs.incrementAndGet()));
        Process process = new ProcessBuilder(executable, "-t1", "-c" + connections, "-d" + seconds + "s",
                "--timeout", "10s", "-s", script.toString(), baseUrl, "--", rule, Integer.toString(keys), prefix)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(seconds + 60L, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("wrk did not finish a " + seconds + " s run within a minute more: " + log);
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        Matcher line = RESULT.matcher(output);
        if (process.exitValue() != 0 || !line.find()) {
            throw new IllegalStateException("wrk exited with " + process.exitValue() + " without a result line: "
                    + output.strip().lines().findFirst().orElse("(no output)") + " (log " + log + ")");
        }
        Map<String, Long> fields = new HashMap<>();
        for (String field : line.group(1).trim().split(" ")) {
            int eq = field.indexOf('=');
            fields.put(field.substring(0, eq), Long.parseLong(field.substring(eq + 1)));
        }
        return new Result(fields.get("requests"), fields.get("duration_us") / 1e6, fields.get("admitted"),
                fields.get("rejected"), fields.get("other"), fields.get("p50_us"), fields.get("p99_us"),
                fields.get("socket_errors"));
    }
}
