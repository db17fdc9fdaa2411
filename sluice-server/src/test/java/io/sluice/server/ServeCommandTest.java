package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line, environment and config file of {@code sluice serve}; nothing here listens. */
class ServeCommandTest {

    @TempDir
    Path dir;

    private static SluiceServer.Builder configure(Map<String, String> env, String... args) throws Exception {
        return ServeCommand.configure(args, env::get).builder();
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
    void everyOptionHasAnEnvironmentVariableBetweenTheCommandLineAndTheConfigFile() throws Exception {
        Path cert = Files.writeString(dir.resolve("cert.pem"), "c");
        Path key = Files.writeString(dir.resolve("key.pem"), "k");
        Path otherCert = Files.writeString(dir.resolve("other-cert.pem"), "c");
        Path otherKey = Files.writeString(dir.resolve("other-key.pem"), "k");
        Path tokenFile = Files.writeString(dir.resolve("token.txt"), "from-env-file\n");
        Path cliTokenFile = Files.writeString(dir.resolve("cli-token.txt"), "from-cli-file\n");
        Path config = Files.writeString(dir.resolve("serve.yaml"), String.join("\n",
                "bind: 10.0.0.1", "http_port: 9000", "grpc_port: 9001", "rules: c.yaml", "store: redis://file:1",
                "token: from-config", "max_batch: 7", ""));
        Path otherConfig = Files.writeString(dir.resolve("other.yaml"), "max_batch: 9\n");
        // option, its variable, the variable's value, the builder field, what the variable sets, a command line
        // that overrides it and what that sets, and what the config file alone sets.
        Object[][] cases = {
                {"SLUICE_BIND", "0.0.0.0", "bind", "0.0.0.0", new String[] {"--bind", "::1"}, "::1", "10.0.0.1"},
                {"SLUICE_HTTP_PORT", "7100", "httpPort", "7100", new String[] {"--http-port", "7200"}, "7200", "9000"},
                {"SLUICE_GRPC_PORT", "7101", "grpcPort", "7101", new String[] {"--grpc-port=7201"}, "7201", "9001"},
                {"SLUICE_RULES", "a.yaml,b.yaml", "rules", "[a.yaml, b.yaml]", new String[] {"--rules", "x.yaml"},
                        "[x.yaml]", "[" + dir.resolve("c.yaml") + "]"},
                {"SLUICE_STORE", "redis://env:1", "storeSpec", "redis://env:1",
                        new String[] {"--store", "memory"}, "memory", "redis://file:1"},
                {"SLUICE_TOKEN", "from-env", "token", "from-env", new String[] {"--token", "from-cli"}, "from-cli",
                        "from-config"},
                {"SLUICE_TOKEN_FILE", tokenFile.toString(), "token", "from-env-file",
                        new String[] {"--token-file", cliTokenFile.toString()}, "from-cli-file", "from-config"},
                {"SLUICE_CONFIG", otherConfig.toString(), "maxBatch", "9",
                        new String[] {"--config", config.toString()}, "7", null},
        };
        for (Object[] c : cases) {
            String variable = (String) c[0];
            String field = (String) c[2];
            String[] cli = (String[]) c[4];
            assertThat(ServeCommand.envName("--" + variable.substring(7).toLowerCase().replace('_', '-')))
                    .isEqualTo(variable);
            assertThat(field(configure(Map.of(variable, (String) c[1])), field)).as(variable).isEqualTo(c[3]);
            assertThat(field(configure(Map.of(variable, (String) c[1]), cli), field)).as(variable + " vs the command line")
                    .isEqualTo(c[5]);
            if (c[6] != null) {
                assertThat(field(configure(Map.of(), "--config", config.toString()), field)).isEqualTo(c[6]);
                assertThat(field(configure(Map.of(variable, (String) c[1]), "--config", config.toString()), field))
                        .as(variable + " vs the config file").isEqualTo(c[3]);
            }
        }
        SluiceServer.Builder tls = configure(Map.of("SLUICE_TLS_CERT", cert.toString(), "SLUICE_TLS_KEY",
                key.toString()));
        assertThat(field(tls, "tlsCert")).isEqualTo(cert.toString());
        assertThat(field(tls, "tlsKey")).isEqualTo(key.toString());
        SluiceServer.Builder tlsCli = configure(Map.of("SLUICE_TLS_CERT", cert.toString(), "SLUICE_TLS_KEY",
                key.toString()), "--tls-cert", otherCert.toString(), "--tls-key", otherKey.toString());
        assertThat(field(tlsCli, "tlsCert")).isEqualTo(otherCert.toString());
        assertThat(field(tlsCli, "tlsKey")).isEqualTo(otherKey.toString());
        assertThatThrownBy(() -> configure(Map.of("SLUICE_TLS_CERT", cert.toString())))
                .hasMessageContaining("--tls-cert and --tls-key go together");
        assertThatThrownBy(() -> configure(Map.of("SLUICE_TOKEN", "a", "SLUICE_TOKEN_FILE", tokenFile.toString())))
                .hasMessage("give SLUICE_TOKEN or SLUICE_TOKEN_FILE, not both");
        // A token on the command line, in either form, leaves both variables unread.
        assertThat(field(configure(Map.of("SLUICE_TOKEN", "a"), "--token-file", cliTokenFile.toString()), "token"))
                .isEqualTo("from-cli-file");
        assertThatThrownBy(() -> configure(Map.of("SLUICE_TLS_KEY", key.toString(), "SLUICE_TLS_CERT",
                dir.resolve("missing.pem").toString())))
                .hasMessageContaining("SLUICE_TLS_CERT " + dir.resolve("missing.pem"));
    }

    @Test
    void usageErrorsSayWhatIsWrong() throws Exception {
        String[][] cases = {
                {"--nope", "Unknown option: '--nope'"},
                {"stray", "Unmatched argument at index 0: 'stray'"},
                {"--http-port", "Missing required parameter for option '--http-port' (PORT)"},
                {"--http-port=70000", "--http-port must be a port number in [0, 65535], was '70000'"},
                {"--store=memory", "--store=memory", "option '--store' (SPEC) should be specified only once"},
                {"--tls-cert", "c.pem", "--tls-cert and --tls-key go together"},
                {"--token", "a", "--token-file", "b", "give --token or --token-file, not both"},
                {"--log-format", "xml", "--log-format must be text or json, was 'xml'"},
                {"--log-level", "loud", "--log-level must be trace, debug, info, warn, error or off, was 'loud'"},
                {"--max-batch", "many", "--max-batch must be a whole number, was 'many'"},
                {"--max-batch", "0", "--max-batch: max batch must be in [1, 10000], was 0"},
                {"--envoy-response-headers", "yes", "--envoy-response-headers must be true or false, was 'yes'"},
                {"--redis-timeout", "soon", "--redis-timeout: "},
                {"--redis-prefix", "a{b}", "--redis-prefix: redis_prefix must be 1 to 64 characters"},
                {"--config", dir.resolve("missing.yaml").toString(), "no such file"},
        };
        for (String[] c : cases) {
            String[] args = java.util.Arrays.copyOf(c, c.length - 1);
            assertThatThrownBy(() -> configure(Map.of(), args)).as(String.join(" ", args))
                    .isInstanceOf(ServeCommand.UsageException.class).hasMessageContaining(c[c.length - 1]);
        }
        assertThatThrownBy(() -> configure(Map.of("SLUICE_GRPC_PORT", "x")))
                .hasMessage("SLUICE_GRPC_PORT must be a port number in [0, 65535], was 'x'");
        assertThatThrownBy(() -> configure(Map.of("SLUICE_LOG_FORMAT", "xml")))
                .hasMessage("SLUICE_LOG_FORMAT must be text or json, was 'xml'");
    }

    @Test
    void anInvalidConfigFileIsExitStatusOneNamingTheFileAndKey() throws Exception {
        Path config = dir.resolve("bad.yaml");
        Files.writeString(config, "http_port: 8080\ncolour: blue\n");
        Path typed = dir.resolve("typed.yaml");
        Files.writeString(typed, "http_port: eighty\n");
        Path level = dir.resolve("level.yaml");
        Files.writeString(level, "log_level: chatty\n");
        Path ca = dir.resolve("ca.yaml");
        Files.writeString(ca, "tls_client_ca: ca.pem\n");
        String[][] cases = {
                {config.toString(), config + ": colour: unknown setting; the settings are bind,"},
                {typed.toString(), typed + ": http_port: expected an integer; was the string \"eighty\""},
                {level.toString(), level + ": log_level must be trace, debug, info, warn, error or off, was 'chatty'"},
                {ca.toString(), ca + ": tls_client_ca needs the server's own certificate and key"},
        };
        for (String[] c : cases) {
            assertThatThrownBy(() -> configure(Map.of(), "--config", c[0])).as(c[0])
                    .isInstanceOf(ServeCommand.ConfigException.class).hasMessageContaining(c[1]);
            assertThat(run("--config", c[0]).code).isEqualTo(1);
        }
    }

    /**
     * Every setting of {@link ServeOptions} has an option, an environment variable and (but {@code --config}) a
     * config key, and each is read: the command line over the environment over the file.
     */
    @Test
    void everySettingIsReadFromEachPlaceInOrder() throws Exception {
        Files.writeString(dir.resolve("cert.pem"), "c");
        Files.writeString(dir.resolve("key.pem"), "k");
        Files.writeString(dir.resolve("ca.pem"), "c");
        Path caEnv = Files.writeString(dir.resolve("ca-env.pem"), "c");
        Path caCli = Files.writeString(dir.resolve("ca-cli.pem"), "c");
        Files.writeString(dir.resolve("t.txt"), "file-token\n");
        Map<String, String[]> values = new java.util.LinkedHashMap<>();
        // option: a value for the file, one for the environment, one for the command line, and the builder field
        values.put("--rules", new String[] {"f.yaml", dir.resolve("e.yaml").toString(), "c.yaml", "rules"});
        values.put("--store", new String[] {"memory?max_keys=1", "memory?max_keys=2", "memory?max_keys=3", "storeSpec"});
        values.put("--bind", new String[] {"10.0.0.1", "10.0.0.2", "10.0.0.3", "bind"});
        values.put("--http-port", new String[] {"1", "2", "3", "httpPort"});
        values.put("--grpc-port", new String[] {"1", "2", "3", "grpcPort"});
        values.put("--token", new String[] {"f", "e", "c", "token"});
        values.put("--clock", new String[] {"client", "server", "client", "clientClock"});
        values.put("--reload-interval", new String[] {"1s", "2s", "3s", "reloadInterval"});
        values.put("--max-body-bytes", new String[] {"1000", "2000", "3000", "maxBodyBytes"});
        values.put("--max-batch", new String[] {"1", "2", "3", "maxBatch"});
        values.put("--max-key-length", new String[] {"1", "2", "3", "maxKeyLength"});
        values.put("--max-descriptor-entries", new String[] {"1", "2", "3", "maxEntries"});
        values.put("--envoy-response-headers", new String[] {"false", "true", "false", "envoyHeaders"});
        values.put("--shutdown-timeout", new String[] {"11s", "12s", "13s", "shutdownTimeout"});
        values.put("--shutdown-quiet-period", new String[] {"1s", "2s", "3s", "shutdownQuietPeriod"});
        values.put("--redis-timeout", new String[] {"1s", "2s", "3s", "redis"});
        values.put("--redis-breaker-failures", new String[] {"1", "2", "3", "redis"});
        values.put("--redis-breaker-pause", new String[] {"1s", "2s", "3s", "redis"});
        values.put("--redis-prefix", new String[] {"f", "e", "c", "redis"});
        values.put("--redis-cache-denials", new String[] {"false", "true", "false", "redis"});
        values.put("--redis-scripting", new String[] {"eval", "functions", "eval", "redis"});
        values.put("--tls-client-ca", new String[] {"ca.pem", caEnv.toString(), caCli.toString(), "tlsClientCa"});
        values.put("--redis-mode", new String[] {"leased", "synced", "coalesced", "redisMode"});
        for (ServeOptions.Setting s : ServeOptions.ALL) {
            if (List.of("--config", "--token-file", "--tls-cert", "--tls-key", "--log-format", "--log-level",
                    "--redis-lease-ttl", "--redis-max-batch", "--redis-sync-interval").contains(s.option())) {
                continue; // below, in ServeProcessIT (logging acts on the process, not the builder), and in
                          // theModesOptionsComeWithTheirMode (they need their mode)
            }
            String[] v = values.get(s.option());
            assertThat(v).as("a case for " + s.option()).isNotNull();
            String yamlValue = s.kind() == ServeOptions.Kind.PORT || s.kind() == ServeOptions.Kind.COUNT
                    || s.kind() == ServeOptions.Kind.BOOLEAN ? v[0] : "\"" + v[0] + "\"";
            Path config = Files.writeString(dir.resolve("c.yaml"), s.key() + ": " + yamlValue
                    + "\ntls_cert: cert.pem\ntls_key: key.pem\n");
            Map<String, String> env = Map.of(s.env(), v[1]);
            String fromFile = field(configure(Map.of(), "--config", config.toString()), v[3]);
            String fromEnv = field(configure(env, "--config", config.toString()), v[3]);
            String fromCli = field(configure(env, "--config", config.toString(), s.option(), v[2]), v[3]);
            assertThat(fromEnv).as(s.env() + " over " + s.key()).isNotEqualTo(fromFile);
            assertThat(fromCli).as(s.option() + " over " + s.env()).isNotEqualTo(fromEnv);
            if (!v[0].equals(v[2])) {
                assertThat(fromCli).as(s.option() + " over " + s.key()).isNotEqualTo(fromFile);
            }
        }
        assertThat(field(configure(Map.of("SLUICE_TOKEN_FILE", dir.resolve("t.txt").toString())), "token"))
                .isEqualTo("file-token");
        assertThat(ServeOptions.ALL).allSatisfy(s -> assertThat(s.env())
                .isEqualTo("SLUICE_" + s.option().substring(2).toUpperCase(java.util.Locale.ROOT).replace('-', '_')));
    }

    @Test
    void theModesOptionsComeWithTheirMode() throws Exception {
        assertThat(field(configure(Map.of()), "redisMode")).isEqualTo("DefaultMode[mode=exact]");
        assertThat(field(configure(Map.of("SLUICE_REDIS_MODE", "leased", "SLUICE_REDIS_LEASE_TTL", "2s"),
                "--redis-max-batch", "1_000"), "redisMode"))
                .isEqualTo("DefaultMode[mode=leased(ttl=PT2S, maxBatch=1000)]");
        Path config = Files.writeString(dir.resolve("mode.yaml"), "redis_mode: synced\nredis_sync_interval: 250ms\n");
        assertThat(field(configure(Map.of(), "--config", config.toString()), "redisMode"))
                .isEqualTo("DefaultMode[mode=synced(PT0.25S)]");
        // The command line's mode wins over the file's, and then the file's interval belongs to another mode.
        assertThat(run("--config", config.toString(), "--redis-mode", "exact").err).contains(config
                + ": redis_sync_interval applies to --redis-mode synced (SLUICE_REDIS_MODE, redis_mode) only; the"
                + " mode is exact");
        assertThat(run("--redis-lease-ttl", "1s").err).contains("--redis-lease-ttl applies to --redis-mode leased"
                + " (SLUICE_REDIS_MODE, redis_mode) only; the mode is exact");
        assertThat(run("--redis-mode", "lease").err).contains("--redis-mode must be exact, coalesced, leased or"
                + " synced, was 'lease'");
        assertThat(run("--redis-mode", "leased", "--redis-max-batch", "0").err).contains("--redis-max-batch:"
                + " max_batch must be");
        assertThat(run("--redis-mode", "leased", "--redis-lease-ttl", "2h").err).contains("--redis-lease-ttl:"
                + " lease_ttl must be between 1ms and 1h");
    }

    @Test
    void exitCodes() throws Exception {
        assertThat(run("--help").code).isZero();
        assertThat(run("--help").out).contains("usage: sluice serve");
        Result usage = run("--bogus");
        assertThat(usage.code).isEqualTo(2);
        assertThat(usage.err).contains("sluice serve: Unknown option: '--bogus'");
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
        assertThat(field(configure(Map.of()), "redis")).isEqualTo("RedisTuning[timeout=PT0.5S, breakerFailures=3,"
                + " breakerPause=PT0.25S, prefix=sluice, cacheDenials=true, scripting=auto]");
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "redis_timeout: 2s\nredis_breaker_failures: 5\nredis_breaker_pause: 3s\n");
        assertThat(field(configure(Map.of(), "--config", config.toString()), "redis"))
                .isEqualTo("RedisTuning[timeout=PT2S, breakerFailures=5, breakerPause=PT3S, prefix=sluice,"
                        + " cacheDenials=true, scripting=auto]");
        Files.writeString(config, "redis_timeout: 100ms\n");
        assertThat(field(configure(Map.of(), "--config", config.toString()), "redis"))
                .isEqualTo("RedisTuning[timeout=PT0.1S, breakerFailures=3, breakerPause=PT0.25S, prefix=sluice,"
                        + " cacheDenials=true, scripting=auto]");
        assertThat(field(configure(Map.of("SLUICE_REDIS_PREFIX", "tenant-a", "SLUICE_REDIS_CACHE_DENIALS", "false")),
                "redis")).endsWith("prefix=tenant-a, cacheDenials=false, scripting=auto]");
        assertThat(field(configure(Map.of("SLUICE_REDIS_SCRIPTING", "EVAL")), "redis")).endsWith("scripting=eval]");
        Files.writeString(config, "redis_scripting: lua\n");
        assertThatThrownBy(() -> configure(Map.of(), "--config", config.toString()))
                .isInstanceOf(ServeCommand.ConfigException.class)
                .hasMessageContaining("redis_scripting must be auto, functions or eval, was 'lua'");
        Files.writeString(config, "redis_breaker_pause: 0s\n");
        assertThatThrownBy(() -> configure(Map.of(), "--config", config.toString()))
                .isInstanceOf(ServeCommand.ConfigException.class)
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
