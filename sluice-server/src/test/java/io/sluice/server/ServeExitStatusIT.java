package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every exit status docs/reference/cli.md documents, from a real {@code sluice serve} process, each with one line
 * saying why and no stack trace: 0 for help, 143 after SIGTERM (the JVM's status for a stop on request), 1 for
 * invalid rules, an invalid config file or a port in use, 2 for a command line that cannot be used, 3 for a Redis
 * that cannot be reached (also as one JSON line with {@code --log-format json}).
 */
class ServeExitStatusIT {

    @TempDir
    Path dir;

    @Test
    void helpIsZeroAndAStopOnRequestIsTheSignalsStatus() throws Exception {
        ServeProcess help = ServeProcess.launch(Map.of(), "--help");
        assertThat(help.exitStatus()).isZero();
        assertThat(help.stdout).first().asString().startsWith("usage: sluice serve");

        ServeProcess served = ServeProcess.start(Map.of());
        served.terminate();
        assertThat(served.process.exitValue()).isEqualTo(143);
        assertThat(served.stdout).contains("sluice serve: stopped");
    }

    @Test
    void invalidRulesConfigOrABusyPortAreOne() throws Exception {
        Path rules = Files.writeString(dir.resolve("rules.yaml"), "limits:\n  l: {algorithm: gcra, limit: 0,"
                + " period: 1s}\n");
        assertOneLine(ServeProcess.launch(Map.of(), "--rules", rules.toString()), 1, rules + ":2:");
        Path config = Files.writeString(dir.resolve("serve.yaml"), "max_batch: lots\n");
        assertOneLine(ServeProcess.launch(Map.of(), "--config", config.toString()), 1,
                config + ": max_batch: expected an integer");
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            assertOneLine(ServeProcess.launch(Map.of("SLUICE_HTTP_PORT", String.valueOf(busy.getLocalPort()),
                    "SLUICE_GRPC_PORT", "0")), 1, "cannot listen for HTTP on 127.0.0.1:" + busy.getLocalPort());
        }
    }

    @Test
    void anUnusableCommandLineIsTwo() throws Exception {
        ServeProcess unknown = ServeProcess.launch(Map.of(), "--colour=blue");
        assertThat(unknown.exitStatus()).isEqualTo(2);
        assertThat(unknown.stderrLines()).containsExactly("sluice serve: Unknown option: '--colour=blue'",
                "(sluice serve --help shows the options)");
        assertOneLine(ServeProcess.launch(Map.of("SLUICE_LOG_LEVEL", "loud")), 2,
                "SLUICE_LOG_LEVEL must be trace, debug, info, warn, error or off, was 'loud'");
        assertOneLine(ServeProcess.launch(Map.of(), "--rules", dir.resolve("missing.yaml").toString()), 2,
                "no such file");
    }

    @Test
    void anUnreachableRedisIsThreeInOneLineOfTextOrJson() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort();
        }
        String store = "redis://127.0.0.1:" + closed;
        assertOneLine(ServeProcess.launch(Map.of("SLUICE_STORE", store)), 3,
                "sluice serve: the store is unavailable: cannot connect to Redis at");

        ServeProcess json = ServeProcess.launch(Map.of("SLUICE_STORE", store, "SLUICE_LOG_FORMAT", "json"));
        assertThat(json.exitStatus()).isEqualTo(3);
        List<String> lines = json.stderrLines();
        assertThat(lines).as(json.output()).hasSize(1);
        JsonNode line = new ObjectMapper().readTree(lines.get(0));
        assertThat(line.path("level").asText()).isEqualTo("ERROR");
        assertThat(line.path("event").asText()).isEqualTo("start_failed");
        assertThat(line.path("exit_status").asInt()).isEqualTo(3);
        assertThat(line.path("message").asText()).startsWith("the store is unavailable: cannot connect to Redis at");
        assertThat(line.has("stack_trace")).isFalse();
    }

    /** The process exits with {@code status} having written one line on standard error, containing {@code text}. */
    private static void assertOneLine(ServeProcess p, int status, String text) throws InterruptedException {
        assertThat(p.exitStatus()).as(p.output()).isEqualTo(status);
        List<String> lines = p.stderrLines().stream()
                .filter(l -> !l.equals("(sluice serve --help shows the options)")).toList();
        assertThat(lines).as(p.output()).hasSize(1);
        assertThat(lines.get(0)).contains(text);
    }
}
