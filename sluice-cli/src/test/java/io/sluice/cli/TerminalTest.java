package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When the replay's progress bar is drawn: stderr a terminal, whatever standard output is. */
class TerminalTest {

    @TempDir
    Path dir;

    private static boolean decide(Map<String, String> env, String fd2, boolean console) {
        return Terminal.stderrIsTerminal(env::get, fd2, console);
    }

    @Test
    void aTerminalDeviceOnDescriptorTwoIsATerminalWhateverTheConsoleSays() {
        assertThat(decide(Map.of(), "/dev/pts/3", false)).isTrue();
        assertThat(decide(Map.of(), "/dev/tty1", false)).isTrue();
        assertThat(decide(Map.of(), "/home/u/replay.log", true)).isFalse();
        assertThat(decide(Map.of(), "pipe:[60906]", true)).isFalse();
        assertThat(decide(Map.of(), "socket:[1234]", true)).isFalse();
    }

    @Test
    void theLauncherAndTheUserCanSay() {
        assertThat(decide(Map.of("SLUICE_STDERR_TTY", "1"), "pipe:[1]", false)).isTrue();
        assertThat(decide(Map.of("SLUICE_STDERR_TTY", "0"), "/dev/pts/0", true)).isFalse();
        assertThat(decide(Map.of("SLUICE_PROGRESS", "never", "SLUICE_STDERR_TTY", "1"), "/dev/pts/0", true))
                .isFalse();
        assertThat(decide(Map.of("SLUICE_PROGRESS", "always"), "/tmp/log", false)).isTrue();
        assertThat(decide(Map.of("TERM", "dumb"), "/dev/pts/0", true)).isFalse();
        assertThatThrownBy(() -> decide(Map.of("SLUICE_PROGRESS", "yes"), null, true))
                .hasMessage("SLUICE_PROGRESS must be always or never, was 'yes'");
    }

    @Test
    void withoutProcTheConsoleDecides() {
        assertThat(decide(Map.of(), null, true)).isTrue();
        assertThat(decide(Map.of(), null, false)).isFalse();
    }

    @Test
    void thisTestsStderrIsNotATerminal() {
        // Surefire pipes the forked JVM's streams: a redirected stderr must never get the bar.
        assertThat(Terminal.stderrIsTerminal()).isFalse();
    }

    @Test
    void aProcessOnAPseudoTerminalWithStdoutInAFileSeesATerminal() throws Exception {
        // script(1) gives the process a pseudo-terminal; its standard output goes to a file, as a replay's
        // decisions would, and System.console() is then null, yet stderr is the terminal.
        Path out = dir.resolve("out.txt");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String command = "'" + java + "' -cp '" + System.getProperty("java.class.path") + "' "
                + Terminal.class.getName() + " > '" + out + "'";
        ProcessBuilder pb = new ProcessBuilder("script", "-qec", command, "/dev/null")
                .redirectErrorStream(true).redirectOutput(dir.resolve("script.log").toFile());
        pb.environment().remove("SLUICE_PROGRESS");
        pb.environment().remove("SLUICE_STDERR_TTY");
        pb.environment().put("TERM", "xterm");
        Process p = pb.start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(dir.resolve("script.log"))).isZero();
        assertThat(Files.readString(out, StandardCharsets.UTF_8).strip()).isEqualTo("true");
    }
}
