package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every picocli command of {@code sluice}, the same checks for each: {@code --help} exits 0 and lists each
 * option; an unknown option is a usage error naming it; a value that does not convert is a usage error naming
 * the option and what was expected; the completion script completes each option. The options come both from
 * the model ({@link Main#commandLine}) and from a list written here, so that an option lost from the model
 * fails too.
 */
class CommandOptionsTest {

    /** The options each command must have. */
    private static final Map<String, List<String>> OPTIONS = Map.of(
            "demo", List.of("--help"),
            "replay", List.of("--rules", "--trace", "--store", "--out", "--summary", "--key-class", "--chart",
                    "--slice", "--chart-size", "--compare", "--help"),
            "bench", List.of("--quick", "--suites", "--out", "--docs", "--no-docs", "--filter", "--report-only",
                    "--help"),
            "help", List.of("--help"),
            "completion", List.of("--help"));

    /** For each command with valued options: arguments with one bad value, and the start of the message. */
    private static final Map<String, List<String>> BAD_VALUES = Map.of(
            "replay --rules r.yaml --trace t.jsonl --chart c.svg --chart-size 10by10",
            List.of("sluice replay: --chart-size: expected WIDTHxHEIGHT in pixels, e.g. 1200x800; was \"10by10\""),
            "replay --rules r.yaml --trace t.jsonl --chart c.svg --slice soon",
            List.of("sluice replay: --slice: expected a duration"),
            "replay --rules r.yaml --trace t.jsonl --summary --key-class [",
            List.of("sluice replay: --key-class: expected a regular expression"),
            "bench --suites=local,everything",
            List.of("sluice bench: --suites: unknown suite 'everything'"),
            "bench --filter *",
            List.of("sluice bench: --filter: expected a regular expression"));

    private record Result(int code, String out, String err) {}

    private static Result sluice(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Optional::empty);
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static Map<String, CommandLine> commands() {
        return Main.commandLine(System.out, System.err, Optional::empty).getSubcommands();
    }

    @Test
    void everyCommandIsCheckedHere() {
        assertThat(commands().keySet()).containsExactlyInAnyOrder("demo", "replay", "serve", "bench", "help",
                "completion");
        assertThat(OPTIONS.keySet()).as("every picocli command (serve parses its own)")
                .containsExactlyInAnyOrderElementsOf(commands().keySet().stream().filter(c -> !c.equals("serve"))
                        .toList());
    }

    @Test
    void helpExitsZeroAndListsEveryOption() {
        OPTIONS.forEach((command, expected) -> {
            Result r = sluice(command, "--help");
            assertThat(r.code()).as(command).isZero();
            assertThat(r.err()).as(command).isEmpty();
            assertThat(r.out()).as(command).startsWith("Usage: sluice " + command).contains(expected);
            for (OptionSpec option : commands().get(command).getCommandSpec().options()) {
                assertThat(r.out()).as(command).contains(option.longestName());
                if (!option.description()[0].isEmpty()) {
                    assertThat(r.out()).as(command).contains(option.description()[0].substring(0, 10));
                }
            }
        });
    }

    @Test
    void defaultsAreShown() {
        // Help wraps lines at 80 columns; the words are what matters.
        assertThat(sluice("replay", "--help").out().replaceAll("\\s+", " ")).contains("Default: memory",
                "Default: [0-9]+");
        assertThat(sluice("bench", "--help").out().replaceAll("\\s+", " ")).contains("Default: bench-results.json",
                "Default: docs", "Default: local,redis,redis-attack,memory,server,replay");
    }

    @Test
    void anUnknownOptionIsAUsageErrorNamingIt() {
        for (String command : OPTIONS.keySet()) {
            Result r = sluice(command, "--no-such-option");
            assertThat(r.code()).as(command).isEqualTo(ExitStatus.USAGE);
            assertThat(r.err()).as(command).startsWith("sluice " + command + ": unknown option '--no-such-option'")
                    .contains("(sluice " + command + " --help shows the options)").doesNotContain("\tat ");
            assertThat(r.out()).as(command).isEmpty();
        }
    }

    @Test
    void aBadValueIsAUsageErrorNamingTheOptionAndWhatWasExpected() {
        BAD_VALUES.forEach((args, message) -> {
            Result r = sluice(args.split(" "));
            assertThat(r.code()).as(args).isEqualTo(ExitStatus.USAGE);
            assertThat(r.err()).as(args).startsWith(message.get(0)).doesNotContain("\tat ");
        });
    }

    @Test
    void theCompletionScriptCompletesEachCommandsOptions() {
        String script = sluice("completion").out();
        for (Map.Entry<String, CommandLine> command : commands().entrySet()) {
            // picocli writes one function per command, listing its options.
            Matcher function = Pattern.compile("(?s)function _picocli_sluice_" + command.getKey()
                    + "\\(\\) \\{(.*?)\\n\\}").matcher(script);
            assertThat(function.find()).as(command.getKey()).isTrue();
            String body = function.group(1);
            for (OptionSpec option : command.getValue().getCommandSpec().options()) {
                assertThat(body).as(command.getKey()).contains(option.longestName());
            }
            for (String option : OPTIONS.getOrDefault(command.getKey(), List.of("--http-port", "--store"))) {
                assertThat(body).as(command.getKey()).contains(option);
            }
        }
        // A file after an option that takes one; suites after --suites.
        assertThat(script).contains("compgen -f");
        assertThat(script).contains("redis-attack");
    }
}
