package io.sluice.cli;

import static io.sluice.cli.ReplayRun.replay;
import static io.sluice.cli.ReplayRun.resource;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each algorithm replays a small trace through the command itself; the output must equal the committed
 * decisions byte for byte. Why each expected line is right is written down in
 * {@code src/test/resources/replay/GOLDEN.md}.
 */
class ReplayGoldenTest {

    @ParameterizedTest
    @ValueSource(strings = {"fixed_window", "sliding_log", "sliding_window", "rolling_window", "token_bucket",
            "gcra", "leaky_bucket", "smooth_bursty", "smooth_warming_up", "refresh_period", "concurrency",
            "multi_limit", "shadow", "calendar_window", "together", "tiers", "lockout", "settle"})
    void decisionsMatchTheHandCheckedGolden(String name) throws Exception {
        ReplayRun run = replay("--rules", resource(name + ".yaml"), "--trace", resource(name + ".jsonl"));

        assertThat(run.err()).isEmpty();
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).isEqualTo(Files.readString(resource(name + ".expected.jsonl")));
    }

    @Test
    void outWritesTheSameBytesToAFile(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("decisions.jsonl");

        ReplayRun run = replay("--rules", resource("fixed_window.yaml"), "--trace", resource("fixed_window.jsonl"),
                "--out", out);

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).isEmpty();
        assertThat(Files.readString(out)).isEqualTo(Files.readString(resource("fixed_window.expected.jsonl")));
        assertThat(dir.toFile().list()).containsExactly("decisions.jsonl");
    }

    @Test
    void oneOutputLinePerTraceLine() throws Exception {
        for (String name : new String[] {"fixed_window", "concurrency", "token_bucket"}) {
            long traceLines = Files.readAllLines(resource(name + ".jsonl"), StandardCharsets.UTF_8).size();
            assertThat(replay("--rules", resource(name + ".yaml"), "--trace", resource(name + ".jsonl")).out()
                    .lines().count()).isEqualTo(traceLines);
        }
    }

    @Test
    void comparedRulesDoNotChangeTheDecisionsOfTheMainOne(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("decisions.jsonl");

        ReplayRun run = replay("--rules", resource("sliding_log.yaml"), "--trace", resource("sliding_log.jsonl"),
                "--out", out, "--summary", "--compare", resource("sliding_log.yaml"));

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(Files.readString(out)).isEqualTo(Files.readString(resource("sliding_log.expected.jsonl")));
    }

    @Test
    void traceFromStandardInput() throws Exception {
        java.io.InputStream stdin = System.in;
        try {
            System.setIn(Files.newInputStream(resource("gcra.jsonl")));
            ReplayRun run = replay("--rules", resource("gcra.yaml"), "--trace", "-");
            assertThat(run.out()).isEqualTo(Files.readString(resource("gcra.expected.jsonl")));
        } finally {
            System.setIn(stdin);
        }
    }
}
