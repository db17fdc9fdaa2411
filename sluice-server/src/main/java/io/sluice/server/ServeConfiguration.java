package io.sluice.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.sluice.rules.Durations;
import io.sluice.server.ServeCommand.ConfigException;
import io.sluice.server.ServeCommand.UsageException;
import io.sluice.server.ServeOptions.Kind;
import io.sluice.server.ServeOptions.Setting;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * Turns {@code sluice serve}'s command line, environment and config file into a {@link SluiceServer.Builder}:
 * each setting of {@link ServeOptions} from the command line, else its {@code SLUICE_} variable, else the config
 * file, else its default.
 *
 * <p>Every error names where the value came from: the option ({@code --http-port}), the variable
 * ({@code SLUICE_HTTP_PORT}) or the file and key ({@code serve.yaml: http_port}). A value on the command line or in
 * the environment that cannot be used is a usage error (exit status 2); one in the config file makes the file
 * invalid (exit status 1), as does a token nobody could send, wherever it came from.
 */
final class ServeConfiguration {

    /** A setting's value and where it came from: {@code text} or {@code list} from the command line or environment, {@code node} from the config file. */
    private record Value(Setting setting, String source, Path configFile, String text, List<String> list,
                         JsonNode node) {

        /** How errors name the value: the option, the variable, or the file and its key. */
        String name() {
            return configFile != null ? configFile + ": " + setting.key() : source;
        }

        /** Where the value came from, before a message that names the setting itself. */
        String where() {
            return configFile != null ? configFile.toString() : source;
        }

        /** A relative path in a config file is relative to the file's directory. */
        Path path(String p) {
            return configFile == null ? Path.of(p) : configFile.toAbsolutePath().getParent().resolve(p);
        }
    }

    private final Map<Setting, Value> chosen = new HashMap<>();

    private ServeConfiguration() {}

    /**
     * The server the arguments, environment and config file describe; null when only help was asked for.
     *
     * @throws UsageException  for an unknown option, a missing or malformed value on the command line or in the
     *                         environment, or a missing config file
     * @throws ConfigException for an invalid config file, or a token nobody could send
     */
    static ServeCommand.Configured configure(String[] args, Function<String, String> env)
            throws UsageException, ConfigException {
        ParseResult parsed;
        try {
            parsed = new CommandLine(ServeCommand.commandSpec()).parseArgs(args);
        } catch (ParameterException e) {
            throw new UsageException(e.getMessage());
        }
        if (parsed.isUsageHelpRequested()) {
            return null;
        }
        Map<Setting, Value> cli = new HashMap<>();
        for (Setting s : ServeOptions.ALL) {
            if (!parsed.hasMatchedOption(s.option())) {
                continue;
            }
            if (s.kind() == Kind.FILES) {
                List<String> values = parsed.matchedOptionValue(s.option(), List.of());
                cli.put(s, new Value(s, s.option(), null, null, List.copyOf(values), null));
            } else {
                cli.put(s, new Value(s, s.option(), null, parsed.matchedOptionValue(s.option(), ""), null, null));
            }
        }
        Map<Setting, Value> environment = new HashMap<>();
        for (Setting s : ServeOptions.ALL) {
            String value = env.apply(s.env());
            if (value != null) {
                environment.put(s, new Value(s, s.env(), null, value,
                        s.kind() == Kind.FILES ? List.of(value.split(",", -1)) : null, null));
            }
        }
        Setting configOption = ServeOptions.byOption("--config");
        Value configValue = cli.getOrDefault(configOption, environment.get(configOption));
        Map<Setting, Value> file = configValue == null ? Map.of() : readConfig(Path.of(configValue.text()),
                configValue.name());

        ServeConfiguration c = new ServeConfiguration();
        Setting token = ServeOptions.byOption("--token");
        Setting tokenFile = ServeOptions.byOption("--token-file");
        for (Setting s : ServeOptions.ALL) {
            Value v = cli.containsKey(s) ? cli.get(s) : environment.containsKey(s) ? environment.get(s) : file.get(s);
            if (v != null) {
                c.chosen.put(s, v);
            }
        }
        // The token and its file are one setting given two ways: the first place that gives either wins.
        for (Map<Setting, Value> source : List.of(cli, environment, file)) {
            if (source.containsKey(token) || source.containsKey(tokenFile)) {
                if (source.containsKey(token) && source.containsKey(tokenFile)) {
                    Value t = source.get(token);
                    Value f = source.get(tokenFile);
                    c.fail(t, t.configFile() != null ? t.configFile() + ": give token or token_file, not both"
                            : "give " + t.source() + " or " + f.source() + ", not both");
                }
                c.chosen.remove(source.containsKey(token) ? tokenFile : token);
                c.chosen.put(source.containsKey(token) ? token : tokenFile,
                        source.getOrDefault(token, source.get(tokenFile)));
                break;
            }
        }
        return c.apply();
    }

    /** Reads the config file's settings by key. */
    private static Map<Setting, Value> readConfig(Path file, String given) throws UsageException, ConfigException {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(file, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            throw new UsageException(given + " " + file + ": no such file");
        } catch (JsonProcessingException e) {
            throw new ConfigException(file + ": not valid YAML: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UsageException(given + " " + file + ": " + e);
        }
        Map<Setting, Value> out = new HashMap<>();
        if (root == null || root.isMissingNode() || root.isNull()) {
            return out;
        }
        if (!root.isObject()) {
            throw new ConfigException(file + ": expected a map of settings");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            Setting s = ServeOptions.byKey(e.getKey()).orElse(null);
            if (s == null) {
                throw new ConfigException(file + ": " + e.getKey() + ": unknown setting; the settings are "
                        + String.join(", ", ServeOptions.ALL.stream().map(Setting::key)
                        .filter(k -> k != null).sorted().toList()));
            }
            out.put(s, new Value(s, file + ": " + s.key(), file, null, null, e.getValue()));
        }
        return out;
    }

    private Value get(String option) {
        return chosen.get(ServeOptions.byOption(option));
    }

    private ServeCommand.Configured apply() throws UsageException, ConfigException {
        SluiceServer.Builder b = SluiceServer.builder();
        Value v;
        if ((v = get("--rules")) != null) {
            List<Path> rules = new ArrayList<>();
            for (String r : list(v)) {
                rules.add(v.path(r));
            }
            b.rules(rules);
        }
        if ((v = get("--store")) != null) {
            b.store(nonEmpty(v));
        }
        if ((v = get("--bind")) != null) {
            b.bind(nonEmpty(v));
        }
        if ((v = get("--http-port")) != null) {
            b.httpPort(port(v));
        }
        if ((v = get("--grpc-port")) != null) {
            b.grpcPort(port(v));
        }
        if ((v = get("--token")) != null) {
            token(b, text(v), v.name());
        }
        if ((v = get("--token-file")) != null) {
            Path f = v.path(text(v));
            token(b, tokenFile(v, f), v.name() + " " + f);
        }
        Value cert = get("--tls-cert");
        Value key = get("--tls-key");
        if ((cert == null) != (key == null)) {
            Value given = cert != null ? cert : key;
            fail(given, "--tls-cert and --tls-key go together (SLUICE_TLS_CERT and SLUICE_TLS_KEY, tls_cert and"
                    + " tls_key), but only " + given.name() + " was given");
        }
        if (cert != null) {
            b.tls(existing(cert), existing(key));
        }
        if ((v = get("--tls-client-ca")) != null) {
            if (cert == null) {
                fail(v, v.name() + " needs the server's own certificate and key (--tls-cert and --tls-key)");
            }
            b.tlsClientCa(existing(v));
        }
        if ((v = get("--clock")) != null) {
            b.clientClock(choice(v, List.of("server", "client")).equals("client"));
        }
        String logFormat = (v = get("--log-format")) == null ? null : choice(v, ServerLogging.FORMATS);
        String logLevel = (v = get("--log-level")) == null ? null : choice(v, ServerLogging.LEVELS);
        try {
            if ((v = get("--reload-interval")) != null) {
                b.reloadInterval(duration(v));
            }
            if ((v = get("--max-body-bytes")) != null) {
                b.maxBodyBytes(integer(v));
            }
            if ((v = get("--max-batch")) != null) {
                b.maxBatch(integer(v));
            }
            if ((v = get("--max-key-length")) != null) {
                b.maxKeyLength(integer(v));
            }
            if ((v = get("--max-descriptor-entries")) != null) {
                b.maxEntries(integer(v));
            }
            if ((v = get("--envoy-response-headers")) != null) {
                b.envoyResponseHeaders(bool(v));
            }
        } catch (IllegalArgumentException e) {
            fail(v, v.where() + ": " + e.getMessage());
        }
        shutdown(b);
        redis(b);
        redisMode(b);
        return new ServeCommand.Configured(b, logFormat, logLevel);
    }

    private void shutdown(SluiceServer.Builder b) throws UsageException, ConfigException {
        Value quiet = get("--shutdown-quiet-period");
        Value timeout = get("--shutdown-timeout");
        if (quiet == null && timeout == null) {
            return;
        }
        Duration q = quiet == null ? Duration.ofSeconds(1) : duration(quiet);
        Duration t = timeout == null ? Duration.ofSeconds(10) : duration(timeout);
        try {
            b.shutdown(q, t);
        } catch (IllegalArgumentException e) {
            Value v = quiet != null ? quiet : timeout;
            fail(v, v.where() + ": " + e.getMessage());
        }
    }

    /** The Redis settings, each checked on its own so that an error names the one at fault. */
    private void redis(SluiceServer.Builder b) throws UsageException, ConfigException {
        StoreFactory.RedisTuning t = StoreFactory.RedisTuning.SERVER_DEFAULT;
        Value v = null;
        try {
            if ((v = get("--redis-timeout")) != null) {
                t = t.withTimeout(duration(v));
            }
            if ((v = get("--redis-breaker-failures")) != null) {
                t = t.withBreakerFailures(integer(v));
            }
            if ((v = get("--redis-breaker-pause")) != null) {
                t = t.withBreakerPause(duration(v));
            }
            if ((v = get("--redis-prefix")) != null) {
                t = t.withPrefix(text(v));
            }
            if ((v = get("--redis-cache-denials")) != null) {
                t = t.withCacheDenials(bool(v));
            }
            if ((v = get("--redis-scripting")) != null) {
                t = t.withScripting(io.sluice.redis.Scripting.parse(v.name(), choice(v, List.of("auto", "functions", "eval"))));
            }
        } catch (IllegalArgumentException e) {
            fail(v, v.where() + ": " + e.getMessage());
        }
        b.redis(t);
    }

    /** The default mode and its options; an option of another mode than the one chosen is an error. */
    private void redisMode(SluiceServer.Builder b) throws UsageException, ConfigException {
        Value modeValue = get("--redis-mode");
        String kind = modeValue == null ? "exact" : choice(modeValue, List.of("exact", "coalesced", "leased", "synced"));
        Value ttl = get("--redis-lease-ttl");
        Value batch = get("--redis-max-batch");
        Value interval = get("--redis-sync-interval");
        for (Value option : new Value[] {ttl, batch}) {
            if (option != null && !kind.equals("leased")) {
                fail(option, option.name() + " applies to --redis-mode leased (SLUICE_REDIS_MODE, redis_mode) only;"
                        + " the mode is " + kind);
            }
        }
        if (interval != null && !kind.equals("synced")) {
            fail(interval, interval.name() + " applies to --redis-mode synced (SLUICE_REDIS_MODE, redis_mode) only;"
                    + " the mode is " + kind);
        }
        Value v = modeValue;
        try {
            io.sluice.Mode mode = switch (kind) {
                case "coalesced" -> io.sluice.Mode.coalesced();
                case "leased" -> {
                    io.sluice.Mode leased = io.sluice.Mode.leased();
                    if (ttl != null) {
                        v = ttl;
                        leased = leased.withLeaseTtl(duration(ttl));
                    }
                    if (batch != null) {
                        v = batch;
                        leased = leased.withMaxBatch(longInteger(batch));
                    }
                    yield leased;
                }
                case "synced" -> {
                    v = interval;
                    yield io.sluice.Mode.synced(interval == null ? io.sluice.Mode.DEFAULT_SYNC_INTERVAL
                            : duration(interval));
                }
                default -> io.sluice.Mode.exact();
            };
            b.redisMode(mode);
        } catch (IllegalArgumentException e) {
            fail(v, v.name() + ": " + e.getMessage());
        }
    }

    private long longInteger(Value v) throws UsageException, ConfigException {
        if (v.node() != null) {
            if (!v.node().isIntegralNumber() || !v.node().canConvertToLong()) {
                fail(v, v.name() + ": expected an integer; was " + CheckRequest.describe(v.node()));
            }
            return v.node().longValue();
        }
        try {
            return Long.parseLong(v.text().strip().replace("_", ""));
        } catch (NumberFormatException e) {
            fail(v, v.name() + " must be a whole number, was '" + v.text() + "'");
            throw new AssertionError(e);
        }
    }

    /** Throws the error a bad value makes: usage for the command line and environment, config for the file. */
    private void fail(Value v, String message) throws UsageException, ConfigException {
        if (v.configFile() != null) {
            throw new ConfigException(message);
        }
        throw new UsageException(message);
    }

    private String text(Value v) throws UsageException, ConfigException {
        if (v.node() == null) {
            return v.text();
        }
        if (!v.node().isTextual()) {
            fail(v, v.name() + ": expected a string; was " + CheckRequest.describe(v.node()));
        }
        return v.node().textValue();
    }

    private String nonEmpty(Value v) throws UsageException, ConfigException {
        String t = text(v);
        if (t.isBlank()) {
            fail(v, v.name() + " must not be empty");
        }
        return t;
    }

    private List<String> list(Value v) throws UsageException, ConfigException {
        if (v.node() == null) {
            return v.list();
        }
        if (!v.node().isArray()) {
            return List.of(text(v));
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < v.node().size(); i++) {
            if (!v.node().get(i).isTextual()) {
                fail(v, v.name() + "[" + i + "]: expected a file or directory name");
            }
            out.add(v.node().get(i).textValue());
        }
        return out;
    }

    private int integer(Value v) throws UsageException, ConfigException {
        if (v.node() != null) {
            if (!v.node().isIntegralNumber() || !v.node().canConvertToInt()) {
                fail(v, v.name() + ": expected an integer; was " + CheckRequest.describe(v.node()));
            }
            return v.node().intValue();
        }
        try {
            return Integer.parseInt(v.text().strip().replace("_", ""));
        } catch (NumberFormatException e) {
            fail(v, v.name() + " must be a whole number, was '" + v.text() + "'");
            throw new AssertionError(e);
        }
    }

    private int port(Value v) throws UsageException, ConfigException {
        boolean number = v.node() == null || v.node().isIntegralNumber();
        long port = -1;
        if (number) {
            try {
                port = v.node() != null ? v.node().asLong() : Long.parseLong(v.text().strip());
            } catch (NumberFormatException e) {
                port = -1;
            }
        } else {
            fail(v, v.name() + ": expected an integer; was " + CheckRequest.describe(v.node()));
        }
        if (port < 0 || port > 65_535) {
            fail(v, v.name() + " must be a port number in [0, 65535], was '"
                    + (v.node() != null ? v.node().asText() : v.text()) + "'");
        }
        return (int) port;
    }

    private Duration duration(Value v) throws UsageException, ConfigException {
        String t = text(v);
        try {
            return Durations.parse(t);
        } catch (IllegalArgumentException e) {
            fail(v, v.name() + ": " + e.getMessage());
            throw new AssertionError(e);
        }
    }

    private boolean bool(Value v) throws UsageException, ConfigException {
        if (v.node() != null) {
            if (!v.node().isBoolean()) {
                fail(v, v.name() + ": expected true or false; was " + CheckRequest.describe(v.node()));
            }
            return v.node().booleanValue();
        }
        String t = v.text().strip().toLowerCase(Locale.ROOT);
        if (!t.equals("true") && !t.equals("false")) {
            fail(v, v.name() + " must be true or false, was '" + v.text() + "'");
        }
        return t.equals("true");
    }

    private String choice(Value v, List<String> choices) throws UsageException, ConfigException {
        String t = text(v).strip().toLowerCase(Locale.ROOT);
        if (!choices.contains(t)) {
            fail(v, v.name() + " must be " + String.join(", ", choices.subList(0, choices.size() - 1)) + " or "
                    + choices.get(choices.size() - 1) + ", was '" + text(v) + "'");
        }
        return t;
    }

    private Path existing(Value v) throws UsageException, ConfigException {
        Path file = v.path(text(v));
        if (!Files.isReadable(file) || Files.isDirectory(file)) {
            fail(v, v.name() + " " + file + ": no such (readable) file");
        }
        return file;
    }

    private String tokenFile(Value v, Path file) throws UsageException, ConfigException {
        try {
            String token = Files.readString(file, StandardCharsets.UTF_8).strip();
            if (token.isEmpty()) {
                fail(v, v.name() + " " + file + " is empty");
            }
            return token;
        } catch (NoSuchFileException e) {
            fail(v, v.name() + " " + file + ": no such file");
        } catch (IOException e) {
            fail(v, v.name() + " " + file + ": " + e);
        }
        throw new AssertionError("unreachable");
    }

    /**
     * Sets the token, refusing one that nobody could send (a newline from a file written with two lines, a
     * space, a control or non-ASCII character) with a message naming where it came from: an invalid setting,
     * exit status 1, as an invalid config file is.
     */
    private static void token(SluiceServer.Builder b, String token, String what) throws ConfigException {
        String problem = BearerAuth.tokenProblem(token);
        if (problem != null) {
            throw new ConfigException(what + ": the token " + problem);
        }
        b.token(token);
    }
}
