package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./sluice} script's dispatch, in a copy of the checkout's layout: the script, the built
 * {@code sluice.jar}, and stand-ins for {@code mvn} and {@code scripts/install-packages} that record being
 * called. Help for {@code bench} must come from sluice.jar without building or installing anything; a real
 * {@code bench} goes to the sluice-bench jar (here absent, so the script tries to build it).
 */
class LauncherScriptIT {

    @TempDir
    Path checkout;

    private Path calls;

    private record Result(int code, String output) {}

    @BeforeEach
    void layOutTheCheckout() throws IOException {
        Files.copy(Path.of("..", "sluice"), checkout.resolve("sluice"));
        executable(checkout.resolve("sluice"));
        Path target = Files.createDirectories(checkout.resolve("sluice-cli").resolve("target"));
        Files.copy(Path.of("target", "sluice.jar"), target.resolve("sluice.jar"));
        calls = checkout.resolve("calls.txt");
        Files.createFile(calls);
        Path scripts = Files.createDirectories(checkout.resolve("scripts"));
        stub(scripts.resolve("install-packages"), "install-packages");
        Path bin = Files.createDirectories(checkout.resolve("bin"));
        stub(bin.resolve("mvn"), "mvn");
    }

    /** A script that appends its name to calls.txt and fails. */
    private void stub(Path file, String name) throws IOException {
        Files.writeString(file, "#!/bin/sh\necho " + name + " >> '" + calls + "'\nexit 1\n");
        executable(file);
    }

    private static void executable(Path file) throws IOException {
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private Result sluice(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(checkout.resolve("sluice").toString()));
        command.addAll(List.of(args));
        Path output = checkout.resolve("output.txt");
        ProcessBuilder pb = new ProcessBuilder(command).directory(checkout.toFile()).redirectErrorStream(true)
                .redirectOutput(output.toFile());
        String javaBin = Path.of(System.getProperty("java.home"), "bin").toString();
        pb.environment().put("PATH", checkout.resolve("bin") + ":" + javaBin + ":/usr/bin:/bin");
        pb.environment().keySet().removeIf(k -> k.startsWith("SLUICE_"));
        Process p = pb.start();
        // A guard against a hung process, not a measurement.
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("./sluice " + String.join(" ", args) + " did not finish");
        }
        return new Result(p.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    }

    @Test
    void benchHelpComesFromTheLauncherJarAndBuildsAndInstallsNothing() throws Exception {
        for (String[] args : new String[][] {{"bench", "--help"}, {"bench", "--quick", "-h"}, {"help", "bench"}}) {
            Result r = sluice(args);
            assertThat(r.code()).as(r.output()).isZero();
            assertThat(r.output()).startsWith("Usage: sluice bench").contains("--suites", "--report-only");
        }
        assertThat(Files.readString(calls)).isEmpty();
        assertThat(checkout.resolve("sluice-bench")).doesNotExist();
    }

    @Test
    void aBenchRunGoesToTheBenchmarksJarInstallingItsToolsFirst() throws Exception {
        Result r = sluice("bench", "--quick");
        // The stand-in mvn fails the build of sluice-bench.jar, which the script reports.
        assertThat(r.code()).as(r.output()).isEqualTo(1);
        assertThat(r.output()).contains("sluice: building sluice-bench.jar", "sluice: the build failed");
        assertThat(Files.readAllLines(calls)).containsExactly("install-packages", "mvn");
    }

    @Test
    void otherCommandsRunFromTheLauncherJar() throws Exception {
        assertThat(sluice("help", "replay").output()).startsWith("Usage: sluice replay");
        assertThat(sluice("demo").output()).contains("fixed_window");
        assertThat(Files.readString(calls)).isEmpty();
    }
}
