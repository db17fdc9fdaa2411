package io.sluice.bench.replay;

import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Suite;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The replay suite: how many trace lines per second {@code sluice replay} decides on the in-memory store. It
 * runs the command as a user would, in a child JVM on this JVM's class path, on two generated traces of
 * different lengths; the difference of lines over the difference of wall time cancels JVM start-up and
 * rule-file parsing. Until {@code sluice replay} is part of the build the row says so and nothing fails.
 *
 * <p>The hook for later: the rules and trace written here follow the replay format (rules: YAML
 * {@code limits:}; trace: JSON lines with {@code t_ms}, {@code key}, {@code limit}); if that format changes,
 * {@link #writeRules} and {@link #writeTrace} are the two places to follow it.
 */
public final class ReplaySuite implements Suite {

    private static final long TRACE_START_MS = 1_767_225_600_000L;   // 2026-01-01T00:00:00Z

    @Override
    public String name() {
        return "replay";
    }

    @Override
    public List<Measurement> run(BenchContext context) throws Exception {
        Path dir = Files.createDirectories(context.logDir().resolve("replay"));
        Path rules = writeRules(dir.resolve("rules.yaml"));
        long bigLines = context.profile().replayLines();
        long smallLines = Math.max(1, bigLines / 10);
        Path small = writeTrace(dir.resolve("small.jsonl"), smallLines);
        Path big = writeTrace(dir.resolve("big.jsonl"), bigLines);
        Measurement.Builder row = Measurement.of(name(), "sluice").variant("plain").mode("trace")
                .algorithm("token_bucket").config("100 per 1 s, burst 100; 1,000 keys, one request per ms")
                .keys(1000).threads(1);
        Run first = replay(context, rules, small, dir.resolve("small.out"));
        if (first.exitCode != 0) {
            String reason = first.output.contains("unknown command")
                    ? "sluice replay is not part of this build yet"
                    : "sluice replay failed (exit " + first.exitCode + "): " + firstLine(first.output);
            context.progress().say("  replay: %s", reason);
            return List.of(row.note(reason).build());
        }
        Run second = replay(context, rules, big, dir.resolve("big.out"));
        if (second.exitCode != 0) {
            return List.of(row.note("sluice replay failed (exit " + second.exitCode + "): "
                    + firstLine(second.output)).build());
        }
        double linesPerSecond = (bigLines - smallLines) / ((second.nanos - first.nanos) / 1e9);
        context.progress().say("  replay: %,.0f trace lines/s", linesPerSecond);
        return List.of(row.decisionsPerS(linesPerSecond).runs(1).build());
    }

    private record Run(int exitCode, long nanos, String output) {}

    private static Run replay(BenchContext context, Path rules, Path trace, Path out)
            throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path log = context.logDir().resolve("replay-" + trace.getFileName() + ".log");
        long t0 = System.nanoTime();
        Process process = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                "io.sluice.cli.Main", "replay", "--rules", rules.toString(), "--trace", trace.toString(),
                "--out", out.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(10, TimeUnit.MINUTES)) {
            process.destroyForcibly();
        }
        long nanos = System.nanoTime() - t0;
        return new Run(process.exitValue(), nanos, Files.readString(log, StandardCharsets.UTF_8));
    }

    static Path writeRules(Path file) throws IOException {
        Files.writeString(file, String.join("\n",
                "# sluice bench: the replay suite's rules",
                "limits:",
                "  per_user: {algorithm: token_bucket, capacity: 100, refill_tokens: 100, refill_period: 1s}",
                ""), StandardCharsets.UTF_8);
        return file;
    }

    static Path writeTrace(Path file, long lines) throws IOException {
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (long i = 0; i < lines; i++) {
                out.write("{\"t_ms\": " + (TRACE_START_MS + i) + ", \"key\": \"user:" + (i % 1000)
                        + "\", \"limit\": \"per_user\"}\n");
            }
        }
        return file;
    }

    private static String firstLine(String text) {
        String trimmed = text.strip();
        int end = trimmed.indexOf('\n');
        return end < 0 ? trimmed : trimmed.substring(0, end);
    }
}
