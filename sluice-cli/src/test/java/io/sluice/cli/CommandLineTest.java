package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice} as a whole: --version, help, --help on every command, the completion script, and one exit
 * status per meaning ({@link ExitStatus}), each produced through {@link Main#run}.
 */
class CommandLineTest {

    @TempDir
    Path dir;

    private record Result(int code, String out, String err) {}

    private static Result sluice(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void versionIsTheProjectVersion() {
        for (String flag : new String[] {"--version", "-V"}) {
            Result r = sluice(flag);
            assertThat(r.code()).isZero();
            assertThat(r.out().strip()).matches("sluice \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
        }
    }

    @Test
    void helpListsEveryCommand() {
        for (String[] args : new String[][] {{"help"}, {"--help"}, {"-h"}}) {
            Result r = sluice(args);
            assertThat(r.code()).isZero();
            assertThat(r.out()).contains("Usage: sluice", "demo", "replay", "serve", "help", "completion",
                    "--version");
        }
    }

    @Test
    void everyCommandHasHelpAndHelpCommandShowsTheSameText() {
        for (String command : new String[] {"demo", "replay", "serve", "echo-test"}) {
            Result viaHelp = sluice("help", command);
            Result viaFlag = sluice(command, "--help");
            assertThat(viaHelp.code()).as(command).isZero();
            assertThat(viaHelp.out()).as(command).isEqualTo(viaFlag.out());
        }
        assertThat(sluice("help", "demo").out()).startsWith("usage: sluice demo");
        assertThat(sluice("demo", "-h").out()).startsWith("usage: sluice demo");
        assertThat(sluice("help", "replay").out()).startsWith("usage: sluice replay");
        assertThat(sluice("help", "serve").out()).startsWith("usage: sluice serve");
    }

    @Test
    void theCompletionScriptCompletesCommandsAndTheirOptions() {
        Result r = sluice("completion");
        assertThat(r.code()).isZero();
        assertThat(r.out()).startsWith("#!/usr/bin/env bash").contains("complete -F _complete_sluice")
                .contains("demo", "replay", "serve", "completion")
                .contains("--rules", "--trace", "--chart-size", "--compare", "--summary")
                .contains("--http-port", "--token-file", "--tls-cert");
    }

    @Test
    void optionsAreReadFromEachCommandsHelpText() {
        var options = UsageOptions.of(ReplayOptions.USAGE);
        assertThat(options).extracting(o -> o.longestName()).contains("--rules", "--trace", "--store", "--out",
                "--summary", "--key-class", "--chart", "--slice", "--chart-size", "--compare", "--help");
        assertThat(options.stream().filter(o -> o.longestName().equals("--summary")).findFirst().orElseThrow()
                .arity().max()).isZero();
        assertThat(options.stream().filter(o -> o.longestName().equals("--rules")).findFirst().orElseThrow()
                .type()).isEqualTo(Path.class);
    }

    @Test
    void exitStatusOkBadInputUsageAndStoreUnavailable() throws IOException {
        assertThat(sluice("demo").code()).isEqualTo(ExitStatus.OK).isZero();

        Path rules = Files.writeString(dir.resolve("rules.yaml"),
                "limits:\n  per_second: {algorithm: gcra, limit: 10, period: 1s}\n");
        Path trace = Files.writeString(dir.resolve("t.jsonl"),
                "{\"t_ms\": 1767225600000, \"key\": \"u1\", \"limit\": \"per_second\"}\n");
        Path badTrace = Files.writeString(dir.resolve("bad.jsonl"),
                "{\"t_ms\": 1767225600000, \"key\": \"u1\", \"limit\": \"per_second\", \"permits\": 1.5}\n");
        Result good = sluice("replay", "--rules", rules.toString(), "--trace", trace.toString(), "--out",
                dir.resolve("d.jsonl").toString());
        assertThat(good.code()).as(good.err()).isZero();
        Result bad = sluice("replay", "--rules", rules.toString(), "--trace", badTrace.toString());
        assertThat(bad.code()).as(bad.err()).isEqualTo(ExitStatus.BAD_INPUT).isEqualTo(1);

        assertThat(sluice("no-such-command").code()).isEqualTo(ExitStatus.USAGE).isEqualTo(2);
        assertThat(sluice("--no-such-option").code()).isEqualTo(2);
        assertThat(sluice("help", "no-such-command").code()).isEqualTo(2);
        assertThat(sluice("demo", "extra").code()).isEqualTo(2);
        assertThat(sluice("replay", "--nope").code()).isEqualTo(2);
        assertThat(sluice("serve", "--nope").code()).isEqualTo(2);

        int closed = closedPort();
        Result replay = sluice("replay", "--rules", rules.toString(), "--trace", trace.toString(), "--store",
                "redis://127.0.0.1:" + closed);
        assertThat(replay.code()).as(replay.err()).isEqualTo(ExitStatus.STORE_UNAVAILABLE).isEqualTo(3);
        Result serve = sluice("serve", "--store", "redis://127.0.0.1:" + closed, "--http-port", "0",
                "--grpc-port", "0");
        assertThat(serve.code()).as(serve.err()).isEqualTo(3);
        assertThat(serve.err()).startsWith("sluice serve: the store is unavailable: cannot connect to Redis at")
                .doesNotContain("\tat ");
    }

    /** A loopback port nothing listens on: bound, then released. */
    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
