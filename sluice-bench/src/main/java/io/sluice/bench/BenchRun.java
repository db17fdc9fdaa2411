package io.sluice.bench;

import io.sluice.bench.attack.AttackSuite;
import io.sluice.bench.local.LocalSuite;
import io.sluice.bench.memory.MemorySuite;
import io.sluice.bench.redis.RedisAttackSuite;
import io.sluice.bench.redis.RedisSuite;
import io.sluice.bench.replay.ReplaySuite;
import io.sluice.bench.server.ServerSuite;
import io.sluice.bench.report.MarkdownReport;
import io.sluice.cli.BenchOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One {@code sluice bench} run: the chosen suites in order, the results file rewritten after each suite (an
 * interrupted run keeps what it measured), then the report.
 */
public final class BenchRun {
    private final BenchOptions options;
    private final Profile profile;
    private final PrintStream out;
    private final PrintStream err;
    private final Path logDir;

    /** A run whose tool logs go to a new temporary directory, kept for inspection. */
    public BenchRun(BenchOptions options, Profile profile, PrintStream out, PrintStream err) {
        this(options, profile, out, err, null);
    }

    /** A run whose tool logs go to {@code logDir} (null: a new temporary directory). */
    public BenchRun(BenchOptions options, Profile profile, PrintStream out, PrintStream err, Path logDir) {
        this.options = options;
        this.profile = profile;
        this.out = out;
        this.err = err;
        this.logDir = logDir;
    }

    /** Runs and returns the exit code: 0, or 1 when a suite failed or a file could not be written. */
    public int execute() {
        // Charts are drawn off screen; without this AWT looks for a display.
        System.setProperty("java.awt.headless", "true");
        try {
            if (options.reportOnly()) {
                BenchResults results = BenchResults.read(options.out());
                writeDocs(results);
                return 0;
            }
            return measure();
        } catch (IOException e) {
            err.println("sluice bench: " + e.getMessage());
            return 1;
        }
    }

    private int measure() throws IOException {
        Path logDir = this.logDir != null ? Files.createDirectories(this.logDir)
                : Files.createTempDirectory("sluice-bench-");
        Progress progress = new Progress(out);
        progress.say("sluice bench, %s profile: suites %s; results to %s; tool logs in %s", profile.name(),
                String.join(",", options.suites()), options.out(), logDir);
        Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        List<Measurement> rows = new ArrayList<>();
        boolean failed = false;
        BenchResults results = null;
        try (BenchContext context = new BenchContext(profile, progress, logDir, options.filter())) {
            for (String name : options.suites()) {
                Suite suite = suite(name);
                progress.say("suite %s", name);
                try {
                    rows.addAll(suite.run(context));
                } catch (Exception e) {
                    failed = true;
                    Path trace = logDir.resolve("failure-" + name + ".txt");
                    Files.writeString(trace, stackTrace(e), StandardCharsets.UTF_8);
                    err.println("sluice bench: suite " + name + " failed: " + e + " (stack trace in " + trace + ")");
                    rows.add(Measurement.of(name, "all").note("suite failed: " + e).build());
                }
                results = results(started, progress, context, rows);
                results.write(options.out());
            }
        }
        progress.say("wrote %s (%d measurements)", options.out(), rows.size());
        writeDocs(results);
        return failed ? 1 : 0;
    }

    private void writeDocs(BenchResults results) throws IOException {
        if (options.docs() == null || results == null) {
            return;
        }
        Path markdown = new MarkdownReport(results).write(options.docs());
        out.println("wrote " + markdown + " and its charts in " + options.docs().resolve("bench"));
    }

    private BenchResults results(Instant started, Progress progress, BenchContext context, List<Measurement> rows) {
        Map<String, String> versions = new TreeMap<>(Versions.libraries());
        versions.putAll(context.programVersions());
        return new BenchResults(BenchResults.SCHEMA, profile.name(), options.suites(), started.toString(),
                Math.round(progress.elapsedSeconds() * 10) / 10.0, Machine.current(), versions, List.copyOf(rows));
    }

    private static Suite suite(String name) {
        return switch (name) {
            case "local" -> new LocalSuite();
            case "redis" -> new RedisSuite();
            case "redis-attack" -> new RedisAttackSuite();
            case "memory" -> new MemorySuite();
            case "server" -> new ServerSuite();
            case "replay" -> new ReplaySuite();
            case "attack" -> new AttackSuite();
            default -> throw new IllegalArgumentException("unknown suite " + name);
        };
    }

    private static String stackTrace(Throwable e) {
        StringWriter text = new StringWriter();
        e.printStackTrace(new PrintWriter(text));
        return text.toString();
    }
}
