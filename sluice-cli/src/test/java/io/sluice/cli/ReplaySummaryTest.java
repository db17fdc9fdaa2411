package io.sluice.cli;

import static io.sluice.cli.ReplayRun.replay;
import static io.sluice.cli.ReplayRun.resource;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --summary}: counts, the exact peak in any window, the longest wait; per rule and key class. */
class ReplaySummaryTest {

    @TempDir
    Path dir;
    private Path fixed;
    private Path log;
    private Path trace;

    @BeforeEach
    void write() throws IOException {
        fixed = Files.writeString(dir.resolve("fixed.yaml"),
                "limits:\n  per_second: {algorithm: fixed_window, limit: 3, window: 1s}\n");
        log = Files.writeString(dir.resolve("log.yaml"),
                "limits:\n  per_second: {algorithm: sliding_log, limit: 3, window: 1s}\n");
        trace = Files.writeString(dir.resolve("trace.jsonl"), String.join("\n",
                "{\"t_ms\": 700, \"key\": \"user:1\", \"limit\": \"per_second\"}",
                "{\"t_ms\": 800, \"key\": \"user:1\", \"limit\": \"per_second\"}",
                "{\"t_ms\": 900, \"key\": \"user:1\", \"limit\": \"per_second\"}",
                "{\"t_ms\": 950, \"key\": \"user:1\", \"limit\": \"per_second\"}",
                "{\"t_ms\": 1000, \"key\": \"user:1\", \"limit\": \"per_second\", \"permits\": 3}",
                "{\"t_ms\": 1001, \"key\": \"user:1\", \"limit\": \"per_second\"}",
                "{\"t_ms\": 1001, \"key\": \"user:22\", \"limit\": \"per_second\"}",
                "{\"t_ms\": 1002, \"key\": \"10.0.0.1\", \"limit\": \"per_second\", \"op\": \"peek\"}",
                "{\"t_ms\": 1002, \"key\": \"10.0.0.1\", \"limit\": \"per_second\"}",
                ""));
    }

    @Test
    void fixedWindowShowsTheDoubleBurstAndTheSlidingLogDoesNot() {
        ReplayRun run = replay("--rules", fixed, "--trace", trace, "--summary", "--compare", log);

        assertThat(run.exitCode()).as(run.err()).isZero();
        // Standard output carries the summary alone. fixed_window admits 3 at 0.7-0.9 s and 3 more at 1.0 s:
        // 6 for user:1 within one second, 7 for the class with user:22 at 1.001 s. The sliding log never lets
        // more than 3 through in any second for one key. The peek is not counted.
        assertThat(run.out()).isEqualTo(String.join("\n",
                "rules " + fixed + " (store memory)",
                "9 trace lines",
                "rule              key class  requests  admitted  rejected  permits  window  peak/key  peak/class  longest wait",
                "limit:per_second  user:#            7         5         2        7      1s         6           7          0 ms",
                "limit:per_second  #.#.#.#           1         1         0        1      1s         1           1          0 ms",
                "",
                "rules " + log + " (store memory)",
                "9 trace lines",
                "rule              key class  requests  admitted  rejected  permits  window  peak/key  peak/class  longest wait",
                "limit:per_second  user:#            7         4         3        4      1s         3           4          0 ms",
                "limit:per_second  #.#.#.#           1         1         0        1      1s         1           1          0 ms",
                ""));
    }

    @Test
    void keyClassPattern() {
        ReplayRun run = replay("--rules", fixed, "--trace", trace, "--summary", "--key-class", ":.*");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("\nlimit:per_second  user#             7 ")
                .contains("\nlimit:per_second  10.0.0.1          1 ");
    }

    @Test
    void longestWaitOfAShapingAlgorithm(@TempDir Path out) {
        ReplayRun run = replay("--rules", resource("leaky_bucket.yaml"), "--trace", resource("leaky_bucket.jsonl"),
                "--summary", "--out", out.resolve("d.jsonl"));

        assertThat(run.exitCode()).as(run.err()).isZero();
        // Seven acquires at 0 wait up to 5 s (the sixth); the delaying bucket admits 7 of 9, nodelay 3 of 4.
        assertThat(run.out()).contains(
                "limit:nginx    u#                9         7         2        7      1s         6           6       5000 ms",
                "limit:nodelay  u#                4         3         1        3      1s         3           3          0 ms");
    }
}
