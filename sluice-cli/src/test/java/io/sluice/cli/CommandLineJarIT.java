package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runnable jar as a user runs it: the version, help, and the exit statuses of real processes. */
class CommandLineJarIT {

    @TempDir
    Path dir;

    private record Result(int code, String output) {}

    private Result sluice(String... args) throws Exception {
        Path jar = Path.of("target", "sluice.jar");
        assertThat(jar).exists();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new java.util.ArrayList<>(List.of(java, "-jar", jar.toString()));
        command.addAll(List.of(args));
        Path output = dir.resolve("output.txt");
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("SLUICE_"));
        Process p = pb.start();
        // A guard against a hung process, not a measurement.
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("sluice " + String.join(" ", args) + " did not finish");
        }
        return new Result(p.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    }

    @Test
    void versionHelpAndUsage() throws Exception {
        Result version = sluice("--version");
        assertThat(version.code()).isZero();
        assertThat(version.output().strip()).matches("sluice \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
        assertThat(sluice("help", "replay").output()).startsWith("Usage: sluice replay");
        // The launcher jar knows bench's options (help, completion) but has no benchmarks to run.
        Result benchHelp = sluice("bench", "--help");
        assertThat(benchHelp.code()).isZero();
        assertThat(benchHelp.output()).startsWith("Usage: sluice bench").contains("--suites", "--report-only");
        Result bench = sluice("bench", "--quick");
        assertThat(bench.code()).isEqualTo(ExitStatus.USAGE);
        assertThat(bench.output()).startsWith("sluice bench: the benchmarks are not in this jar");
        Result usage = sluice("no-such-command");
        assertThat(usage.code()).isEqualTo(2);
        assertThat(usage.output()).startsWith("sluice: unknown command 'no-such-command'");
    }

    @Test
    void anUnreachableStoreIsStatusThreeInOneLineWithoutAStackTrace() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort();
        }
        Result serve = sluice("serve", "--store", "redis://127.0.0.1:" + closed, "--http-port", "0",
                "--grpc-port", "0");
        assertThat(serve.code()).as(serve.output()).isEqualTo(3);
        assertThat(serve.output()).contains("sluice serve: the store is unavailable: cannot connect to Redis at")
                .doesNotContain("\tat ").doesNotContain("Exception");
    }
}
