package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line, environment and config file of {@code sluice serve}; nothing here listens. */
class ServeCommandTest {

    @TempDir
    Path dir;

    private static SluiceServer.Builder configure(Map<String, String> env, String... args) throws Exception {
        return ServeCommand.configure(args, env::get);
    }

    private static String field(SluiceServer.Builder b, String name) throws Exception {
        java.lang.reflect.Field f = SluiceServer.Builder.class.getDeclaredField(name);
        f.setAccessible(true);
        return String.valueOf(f.get(b));
    }

    @Test
    void defaultsAreTheMainJob() throws Exception {
        SluiceServer.Builder b = configure(Map.of());
        assertThat(field(b, "bind")).isEqualTo("127.0.0.1");
        assertThat(field(b, "httpPort")).isEqualTo("8080");
        assertThat(field(b, "grpcPort")).isEqualTo("8081");
        assertThat(field(b, "rules")).isEqualTo("[]");
        assertThat(field(b, "storeSpec")).isEqualTo("memory");
        assertThat(field(b, "token")).isEqualTo("null");
    }

    @Test
    void theCommandLineBeatsTheEnvironmentWhichBeatsTheConfigFile() throws Exception {
        Path config = dir.resolve("serve.yaml");
        Files.writeString(dir.resolve("token.txt"), "from-file\n");
        Files.writeString(config, String.join("\n",
                "bind: 0.0.0.0",
                "http_port: 9000",
                "grpc_port: 9001",
                "rules: [a.yaml, b.yaml]",
                "token_file: token.txt",
                "reload_interval: 250ms",
                "max_body_bytes: 4096",
                "envoy_response_headers: false",
                "shutdown_quiet_period: 2s",
                "shutdown_timeout: 20s",
                ""));
        SluiceServer.Builder fileOnly = configure(Map.of(), "--config", config.toString());
        assertThat(field(fileOnly, "bind")).isEqualTo("0.0.0.0");
        assertThat(field(fileOnly, "httpPort")).isEqualTo("9000");
        assertThat(field(fileOnly, "rules"))
                .isEqualTo("[" + dir.resolve("a.yaml") + ", " + dir.resolve("b.yaml") + "]");
        assertThat(field(fileOnly, "token")).isEqualTo("from-file");
        assertThat(field(fileOnly, "reloadInterval")).isEqualTo("PT0.25S");
        assertThat(field(fileOnly, "maxBodyBytes")).isEqualTo("4096");
        assertThat(field(fileOnly, "envoyHeaders")).isEqualTo("false");
        assertThat(field(fileOnly, "shutdownTimeout")).isEqualTo("PT20S");

        SluiceServer.Builder env = configure(Map.of("SLUICE_HTTP_PORT", "0", "SLUICE_TOKEN", "from-env"),
                "--config", config.toString());
        assertThat(field(env, "httpPort")).isEqualTo("0");
        assertThat(field(env, "grpcPort")).isEqualTo("9001");
        assertThat(field(env, "token")).isEqualTo("from-env");

        SluiceServer.Builder cli = configure(Map.of("SLUICE_HTTP_PORT", "0"), "--config", config.toString(),
                "--http-port=7000", "--rules", "x.yaml", "--rules", "y.yaml", "--token", "from-cli");
        assertThat(field(cli, "httpPort")).isEqualTo("7000");
        assertThat(field(cli, "rules")).isEqualTo("[x.yaml, y.yaml]");
        assertThat(field(cli, "token")).isEqualTo("from-cli");
    }

    @Test
    void usageErrorsSayWhatIsWrong() throws Exception {
        Path config = dir.resolve("bad.yaml");
        Files.writeString(config, "http_port: 8080\ncolour: blue\n");
        Path typed = dir.resolve("typed.yaml");
        Files.writeString(typed, "http_port: eighty\n");
        String[][] cases = {
                {"--nope", "unknown option '--nope'"},
                {"stray", "unexpected argument 'stray'"},
                {"--http-port", "--http-port needs a value"},
                {"--http-port=70000", "--http-port must be a port number in [0, 65535], was '70000'"},
                {"--store=memory", "--store=memory", "--store given twice"},
                {"--tls-cert", "c.pem", "--tls-cert and --tls-key go together"},
                {"--token", "a", "--token-file", "b", "give --token or --token-file, not both"},
                {"--token", " padded", "token must be non-empty without surrounding spaces"},
                {"--config", config.toString(), config + ": colour: unknown setting; the settings are bind,"},
                {"--config", typed.toString(), typed + ": http_port: expected an integer; was the string \"eighty\""},
                {"--config", dir.resolve("missing.yaml").toString(), "no such file"},
        };
        for (String[] c : cases) {
            String[] args = java.util.Arrays.copyOf(c, c.length - 1);
            assertThatThrownBy(() -> configure(Map.of(), args)).as(String.join(" ", args))
                    .isInstanceOf(ServeCommand.UsageException.class).hasMessageContaining(c[c.length - 1]);
        }
        assertThatThrownBy(() -> configure(Map.of("SLUICE_GRPC_PORT", "x")))
                .hasMessage("SLUICE_GRPC_PORT must be a port number in [0, 65535], was 'x'");
    }

    @Test
    void exitCodes() throws Exception {
        assertThat(run("--help").code).isZero();
        assertThat(run("--help").out).contains("usage: sluice serve");
        Result usage = run("--bogus");
        assertThat(usage.code).isEqualTo(2);
        assertThat(usage.err).contains("sluice serve: unknown option '--bogus'");
        assertThat(run("--store", "mongo://127.0.0.1:1").err)
                .contains("--store must be memory, memory?max_keys=N or a redis://, rediss:// or redis-sentinel:// URI");
        assertThat(run("--store", "memory?max_keys=lots").err)
                .contains("--store memory?max_keys= must be a whole number of keys, was 'lots'");
        assertThat(run("--store", "memory?max_keys=0").err).contains("max_keys must be");
        Path bad = dir.resolve("rules.yaml");
        Files.writeString(bad, "limits:\n  l: {algorithm: gcra, limit: 0, period: 1s}\n");
        Result rules = run("--rules", bad.toString());
        assertThat(rules.code).isEqualTo(1);
        assertThat(rules.err).contains(bad + ":2:").contains("limits.l.limit");
        assertThat(run("--rules", dir.resolve("none.yaml").toString()).code).isEqualTo(2);
    }

    private record Result(int code, String out, String err) {}

    private static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = ServeCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
