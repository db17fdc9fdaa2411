package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SubcommandDispatchTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void aSubcommandOnTheClassPathGetsTheRemainingArgumentsAndDecidesTheExitCode() {
        assertThat(run("echo-test", "--quick", "x")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("--quick x" + System.lineSeparator());

        assertThat(run("echo-test", "fail")).isEqualTo(1);
    }

    @Test
    void helpListsPluggedInSubcommands() {
        assertThat(run("help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("echo-test", "prints its arguments (test only)");
    }

    @Test
    void anUnknownCommandIsAUsageError() {
        assertThat(run("no-such-command")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown command 'no-such-command'");
    }
}
