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
                .contains("--store must be memory or a redis://, rediss:// or redis-sentinel:// URI");
        Path bad = dir.resolve("rules.yaml");
        Files.writeString(bad, "limits:\n  l: {algorithm: gcra, limit: 0, period: 1s}\n");
        Result rules = run("--rules", bad.toString());
        assertThat(rules.code).isEqualTo(1);
        assertThat(rules.err).contains(bad + ":2:").contains("limits.l.limit");
        assertThat(run("--rules", dir.resolve("none.yaml").toString()).code).isEqualTo(2);
    }

    @Test
    void aTokenNobodyCouldSendIsRefusedNamingWhereItCameFrom() throws Exception {
        Files.writeString(dir.resolve("two-lines.txt"), "first\nsecond\n");
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "token: \"tab\\there\"\n");
        Path configFile = dir.resolve("serve-file.yaml");
        Files.writeString(configFile, "token_file: two-lines.txt\n");
        Object[][] cases = {
                {new String[] {"--token", "abc\ndef"}, Map.of(), "--token: the token must be visible ASCII"
                        + " characters without spaces (found a newline U+000A at index 3)"},
                {new String[] {"--token", " padded"}, Map.of(), "--token: the token must be visible ASCII"
                        + " characters without spaces (found a space U+0020 at index 0)"},
                {new String[] {"--token", "caf\u00e9"}, Map.of(), "(found a non-ASCII character U+00E9 at index 3)"},
                {new String[] {}, Map.of("SLUICE_TOKEN", "a\rb"), "SLUICE_TOKEN: the token must be visible ASCII"},
                {new String[] {"--token-file", dir.resolve("two-lines.txt").toString()}, Map.of(),
                        "--token-file " + dir.resolve("two-lines.txt") + ": the token must be visible ASCII"},
                {new String[] {"--config", config.toString()}, Map.of(),
                        config + ": token: the token must be visible ASCII characters without spaces (found a"
                                + " control character U+0009 at index 3)"},
                {new String[] {"--config", configFile.toString()}, Map.of(), configFile + ": token_file "},
        };
        for (Object[] c : cases) {
            String[] args = (String[]) c[0];
            @SuppressWarnings("unchecked")
            Map<String, String> env = (Map<String, String>) c[1];
            assertThatThrownBy(() -> configure(env, args)).as(String.join(" ", args) + " " + env)
                    .isInstanceOf(ServeCommand.ConfigException.class).hasMessageContaining((String) c[2]);
        }
        Result run = run("--token", "abc\ndef");
        assertThat(run.code).isEqualTo(1);
        assertThat(run.err).isEqualTo("sluice serve: --token: the token must be visible ASCII characters without"
                + " spaces (found a newline U+000A at index 3)" + System.lineSeparator());
        // A file's final newline is not part of the token.
        Files.writeString(dir.resolve("token.txt"), "s3cr3t-T0ken_~+/=\n");
        assertThat(field(configure(Map.of(), "--token-file", dir.resolve("token.txt").toString()), "token"))
                .isEqualTo("s3cr3t-T0ken_~+/=");
    }

    @Test
    void redisTimeoutAndBreakerAreSettableAndDefaultToRecoveringWithinASecond() throws Exception {
        assertThat(field(configure(Map.of()), "redis"))
                .isEqualTo("RedisTuning[timeout=PT0.5S, breakerFailures=3, breakerPause=PT0.25S]");
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "redis_timeout: 2s\nredis_breaker_failures: 5\nredis_breaker_pause: 3s\n");
        assertThat(field(configure(Map.of(), "--config", config.toString()), "redis"))
                .isEqualTo("RedisTuning[timeout=PT2S, breakerFailures=5, breakerPause=PT3S]");
        Files.writeString(config, "redis_timeout: 100ms\n");
        assertThat(field(configure(Map.of(), "--config", config.toString()), "redis"))
                .isEqualTo("RedisTuning[timeout=PT0.1S, breakerFailures=3, breakerPause=PT0.25S]");
        Files.writeString(config, "redis_breaker_pause: 0s\n");
        assertThatThrownBy(() -> configure(Map.of(), "--config", config.toString()))
                .isInstanceOf(ServeCommand.UsageException.class)
                .hasMessage(config + ": redis_breaker_pause must be between 1ms and 1h, was PT0S");
        Files.writeString(config, "redis_breaker_failures: 0\n");
        assertThatThrownBy(() -> configure(Map.of(), "--config", config.toString()))
                .hasMessage(config + ": redis_breaker_failures must be in [1, 1000], was 0");
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
