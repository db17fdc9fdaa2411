package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine.Model.OptionSpec;

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
        for (String command : new String[] {"demo", "replay", "serve", "bench", "help", "completion"}) {
            Result viaHelp = sluice("help", command);
            Result viaFlag = sluice(command, "--help");
            assertThat(viaHelp.code()).as(command).isZero();
            assertThat(viaHelp.out()).as(command).isNotBlank().isEqualTo(viaFlag.out());
        }
        assertThat(sluice("help", "demo").out()).startsWith("Usage: sluice demo");
        assertThat(sluice("demo", "-h").out()).startsWith("Usage: sluice demo");
        assertThat(sluice("help", "replay").out()).startsWith("Usage: sluice replay");
        assertThat(sluice("help", "bench").out()).startsWith("Usage: sluice bench");
        // serve parses its own command line (sluice-server); help shows what its --help prints.
        assertThat(sluice("help", "serve").out()).containsIgnoringCase("usage: sluice serve");
    }

    @Test
    void helpCompletesEveryCommandName() {
        Set<String> names = Main.commandLine(System.out, System.err, Optional::empty).getSubcommands().keySet();
        List<String> candidates = new ArrayList<>();
        new HelpCommand.CommandNames().forEach(candidates::add);
        assertThat(candidates).containsExactlyInAnyOrderElementsOf(names);
    }

    @Test
    void theCompletionScriptCompletesCommandsAndTheirOptions() {
        Result r = sluice("completion");
        assertThat(r.code()).isZero();
        assertThat(r.out()).startsWith("#!/usr/bin/env bash").contains("complete -F _complete_sluice")
                .contains("demo", "replay", "serve", "bench", "completion")
                .contains("--rules", "--trace", "--chart-size", "--compare", "--summary")
                .contains("--suites", "--report-only", "--no-docs", "--filter")
                .contains("--http-port", "--token-file", "--tls-cert");
    }

    @Test
    void theOptionsOfACommandWithItsOwnParserAreReadFromItsHelpText() {
        String handWritten = String.join("\n",
                "usage: sluice serve [--rules FILE]...",
                "",
                "  --rules FILE       a rule file; repeatable",
                "                     a continued description, --not-an-option",
                "  --http-port PORT   HTTP port",
                "  --clock server|client  whose time decides",
                "  --quiet            no output",
                "  -h, --help         this text");
        String picocli = String.join("\n",
                "Usage: sluice serve [-h] [--rules=FILE]...",
                "      --rules=FILE...    a rule file; repeatable",
                "      --http-port=PORT   HTTP port",
                "  -h, --help             print this text and exit");
        for (String text : List.of(handWritten, picocli)) {
            List<OptionSpec> options = UsageOptions.of(text);
            assertThat(options).extracting(OptionSpec::longestName).as(text).contains("--rules", "--http-port",
                    "--help").doesNotContain("--not-an-option");
            OptionSpec rules = options.stream().filter(o -> o.longestName().equals("--rules")).findFirst()
                    .orElseThrow();
            assertThat(rules.type()).as("a FILE completes as a path").isEqualTo(Path.class);
            OptionSpec port = options.stream().filter(o -> o.longestName().equals("--http-port")).findFirst()
                    .orElseThrow();
            assertThat(port.type()).isEqualTo(String.class);
            assertThat(port.arity().min()).isEqualTo(1);
        }
        assertThat(UsageOptions.of(handWritten).stream().filter(o -> o.longestName().equals("--quiet"))
                .findFirst().orElseThrow().arity().max()).as("a flag takes no value").isZero();
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
        assertThat(sluice("bench", "--nope").code()).isEqualTo(2);

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
