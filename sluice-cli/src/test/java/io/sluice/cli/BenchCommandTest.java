package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice bench}: its options as the benchmarks receive them, through the {@link BenchRunner} found on the
 * class path (here {@link RecordingBenchRunner}); help that runs nothing; and the launcher jar's answer when no
 * runner is there.
 */
class BenchCommandTest {

    private record Result(int code, String out, String err) {}

    private static Result sluice(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @BeforeEach
    void forgetRuns() {
        RecordingBenchRunner.RUNS.clear();
    }

    private static BenchOptions onlyRun() {
        assertThat(RecordingBenchRunner.RUNS).hasSize(1);
        return RecordingBenchRunner.RUNS.get(0);
    }

    @Test
    void defaultsAreTheFullRunOfEveryDefaultSuiteIntoTheWorkingDirectory() {
        Result r = sluice("bench");
        assertThat(r.code()).as(r.err()).isZero();
        BenchOptions o = onlyRun();
        assertThat(o.quick()).isFalse();
        assertThat(o.suites()).containsExactly("local", "redis", "redis-attack", "memory", "server", "replay")
                .isEqualTo(BenchOptions.ALL_SUITES);
        assertThat(o.out()).isEqualTo(Path.of("bench-results.json"));
        assertThat(o.docs()).isEqualTo(Path.of("docs"));
        assertThat(o.reportOnly()).isFalse();
        assertThat(o.filter()).isNull();
    }

    @Test
    void optionsTakeTheirValueAfterASpaceOrAnEqualsSign() {
        Result r = sluice("bench", "--quick", "--suites=memory,local", "--out", "r.json", "--no-docs", "--filter",
                "sluice/gcra|bucket4j", "--report-only");
        assertThat(r.code()).as(r.err()).isZero();
        BenchOptions o = onlyRun();
        assertThat(o.quick()).isTrue();
        assertThat(o.suites()).as("always in running order").containsExactly("local", "memory");
        assertThat(o.out()).isEqualTo(Path.of("r.json"));
        assertThat(o.docs()).isNull();
        assertThat(o.reportOnly()).isTrue();
        assertThat(o.filter().matcher("bucket4j/token_bucket").find()).isTrue();
        assertThat(o.filter().matcher("guava/token_bucket").find()).isFalse();
    }

    @Test
    void theAttackSuiteRunsOnlyWhenNamedAndLastAndTheRunnerDecidesTheExitStatus() {
        assertThat(sluice("bench", "--suites", "attack,server,server").code()).isEqualTo(ExitStatus.BAD_INPUT);
        assertThat(onlyRun().suites()).containsExactly("server", "attack");
        RecordingBenchRunner.RUNS.clear();
        assertThat(sluice("bench", "--suites", "replay", "--suites", "local").code()).isZero();
        assertThat(onlyRun().suites()).as("repeated --suites add up").containsExactly("local", "replay");
    }

    @Test
    void helpRunsNothing() {
        for (String[] args : new String[][] {{"bench", "--help"}, {"bench", "--quick", "-h"}, {"help", "bench"}}) {
            Result r = sluice(args);
            assertThat(r.code()).isZero();
            assertThat(r.out()).startsWith("Usage: sluice bench");
        }
        assertThat(RecordingBenchRunner.RUNS).isEmpty();
    }

    @Test
    void mistakesAreUsageErrorsNamingTheOptionAndRunNothing() {
        assertUsage(sluice("bench", "--suites", "local,disk"), "sluice bench: --suites: unknown suite 'disk'; the"
                + " suites are local, redis, redis-attack, memory, server, replay, attack");
        assertUsage(sluice("bench", "--out"), "sluice bench: --out needs a value");
        assertUsage(sluice("bench", "--fast"), "sluice bench: unknown option '--fast'");
        assertUsage(sluice("bench", "--filter", "("), "sluice bench: --filter: expected a regular expression;"
                + " Unclosed group");
        assertUsage(sluice("bench", "--docs", "d", "--no-docs"), "sluice bench: give --docs or --no-docs, not both");
        assertUsage(sluice("bench", "local"), "sluice bench: unexpected argument 'local'");
        assertThat(RecordingBenchRunner.RUNS).isEmpty();
    }

    @Test
    void withoutTheBenchmarksOnTheClassPathItSaysWhereTheyAre() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"bench", "--quick"}, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err, true, StandardCharsets.UTF_8), Optional::empty);
        assertThat(code).isEqualTo(ExitStatus.USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("sluice bench: the benchmarks are not in this"
                + " jar; in a checkout, ./sluice bench builds and runs sluice-bench/target/sluice-bench.jar");
    }

    private static void assertUsage(Result r, String message) {
        assertThat(r.code()).as(r.err()).isEqualTo(ExitStatus.USAGE);
        assertThat(r.err()).startsWith(message).contains("(sluice bench --help shows the options)")
                .doesNotContain("\tat ");
        assertThat(r.out()).isEmpty();
    }
}
