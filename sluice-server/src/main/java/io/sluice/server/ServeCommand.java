package io.sluice.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.sluice.rules.Durations;
import io.sluice.rules.RuleFileException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;

/**
 * {@code sluice serve}: runs {@link SluiceServer} until the process is told to stop (SIGINT, SIGTERM), then
 * stops gracefully. Settings come from, in order of precedence, the command line, the environment (each option
 * {@code --x-y} as {@code SLUICE_X_Y}), a {@code --config} file, and the defaults: the bundled example rules on
 * the in-memory store, on 127.0.0.1 ports 8080 (HTTP) and 8081 (gRPC).
 */
public final class ServeCommand {

    static final String USAGE = String.join("\n",
            "usage: sluice serve [--rules FILE]... [--store memory|redis://...] [--bind ADDRESS]",
            "                    [--http-port PORT] [--grpc-port PORT] [--config FILE]",
            "                    [--token TOKEN | --token-file FILE] [--tls-cert FILE --tls-key FILE]",
            "                    [--clock server|client]",
            "",
            "Serves rate-limit checks over HTTP/JSON (POST /v1/check, /v1/check/batch), Envoy's gRPC rate-limit",
            "service and envoyproxy/ratelimit's POST /json, with /health, /ready and Prometheus /metrics.",
            "Without options: the bundled example rules, in memory, on 127.0.0.1:8080 (HTTP) and :8081 (gRPC).",
            "",
            "  --rules FILE       a Sluice rule file or an envoyproxy/ratelimit config; repeatable; reloaded",
            "  --store SPEC       memory (default; memory?max_keys=N to bound it otherwise than at 1,000,000 keys),",
            "                     or a redis:// URI shared by several servers",
            "  --bind ADDRESS     the address to listen on (default 127.0.0.1: this machine only)",
            "  --http-port PORT   HTTP port (default 8080; 0 picks a free one)",
            "  --grpc-port PORT   gRPC port (default 8081; 0 picks a free one; the HTTP port's number shares it)",
            "  --config FILE      a YAML file with these settings and more (docs/reference/settings.md)",
            "  --token TOKEN      require 'Authorization: Bearer TOKEN' on every API call",
            "  --token-file FILE  ... with the token read from FILE (it stays out of ps)",
            "  --tls-cert FILE    serve TLS with this PEM certificate chain ...",
            "  --tls-key FILE     ... and this PEM (PKCS#8) private key",
            "  --clock server|client  whose time decides: the store's (default), or the remote store client's",
            "                     reading sent with each call (tests and replays only)",
            "",
            "  -h, --help         this text",
            "",
            "Every option can also be set by an environment variable, SLUICE_ and its name: SLUICE_STORE,",
            "SLUICE_HTTP_PORT, SLUICE_TOKEN ... (SLUICE_RULES: comma-separated files). The command line wins over",
            "the environment, which wins over the --config file.",
            "",
            "Exit status: 0 stopped, 1 invalid rules or config or a port that cannot be bound, 2 usage,",
            "3 the store is unavailable (Redis cannot be reached).");

    private static final Set<String> VALUED = Set.of("--rules", "--store", "--bind", "--http-port", "--grpc-port",
            "--config", "--token", "--token-file", "--tls-cert", "--tls-key", "--clock");
    private static final Set<String> CONFIG_KEYS = Set.of("bind", "http_port", "grpc_port", "rules", "store", "token",
            "token_file", "tls_cert", "tls_key", "reload_interval", "max_body_bytes", "max_batch", "max_key_length",
            "max_descriptor_entries", "envoy_response_headers", "shutdown_quiet_period", "shutdown_timeout",
            "redis_timeout", "redis_breaker_failures", "redis_breaker_pause");

    /** The exit status for a store that cannot be reached; the same number as sluice-cli's ExitStatus. */
    static final int STORE_UNAVAILABLE = 3;

    private ServeCommand() {}

    /** {@code sluice serve} as a program of its own (how tests start server processes). */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the command; returns when the server has stopped (or could not start) with the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        SluiceServer server;
        try {
            SluiceServer.Builder builder = configure(args, System.getenv()::get);
            if (builder == null) {
                out.println(USAGE);
                return 0;
            }
            server = builder.build();
        } catch (UsageException e) {
            err.println("sluice serve: " + e.getMessage());
            err.println("(sluice serve --help shows the options)");
            return 2;
        } catch (ConfigException e) {
            err.println("sluice serve: " + e.getMessage());
            return 1;
        } catch (IllegalArgumentException e) {
            err.println("sluice serve: " + e.getMessage());
            return 2;
        } catch (RuleFileException e) {
            err.println("sluice serve: " + e.getMessage());
            return 1;
        } catch (NoSuchFileException e) {
            err.println("sluice serve: cannot read " + e.getFile() + ": no such file");
            return 2;
        } catch (IOException e) {
            err.println("sluice serve: " + e);
            return 1;
        } catch (io.sluice.redis.RedisStoreException e) {
            // Expected when Redis is down or the address is wrong: the message says which, no stack trace.
            err.println("sluice serve: the store is unavailable: " + e.getMessage());
            return STORE_UNAVAILABLE;
        }
        try {
            server.start();
        } catch (IllegalStateException e) {
            err.println("sluice serve: " + e.getMessage());
            server.close();
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        // SIGTERM and Ctrl-C run the hooks: stop gracefully there (requests in flight finish), then report.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (RuntimeException e) {
                err.println("sluice serve: stopping failed: " + e);
            }
            out.println("sluice serve: stopped");
            out.flush();
            stopped.countDown();
        }, "sluice-serve-shutdown"));
        banner(server, out);
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    private static void banner(SluiceServer server, PrintStream out) {
        String host = server.bindAddress().contains(":") ? "[" + server.bindAddress() + "]" : server.bindAddress();
        String scheme = server.tls() ? "https" : "http";
        out.println("sluice serve: store " + server.storeDescription());
        out.println("sluice serve: rules " + String.join(", ", server.ruleSources()) + ": " + server.rulesSummary());
        out.println("sluice serve: HTTP on " + scheme + "://" + host + ":" + server.httpPort()
                + " (POST /v1/check, /v1/check/batch, /json; GET /health, /ready, /metrics, /v1/rules)");
        out.println("sluice serve: gRPC on " + host + ":" + server.grpcPort()
                + (server.grpcOnHttpPort() ? " (the HTTP port)" : "")
                + (server.tls() ? " with TLS" : " (plain text)") + " (envoy.service.ratelimit.v3.RateLimitService)");
        if (!loopback(server.bindAddress()) && !tokenConfigured(server)) {
            out.println("sluice serve: warning: listening beyond this machine without --token: anyone who reaches"
                    + " the port can spend and inspect limits");
        }
        out.println("sluice serve: ready; Ctrl-C stops");
        out.flush();
    }

    private static boolean tokenConfigured(SluiceServer server) {
        return server.tokenRequired();
    }

    private static boolean loopback(String address) {
        try {
            return InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The server the arguments, environment and config file describe; null when only help was asked for.
     *
     * @throws UsageException for an unknown option, a missing or malformed value, or an invalid config file
     */
    static SluiceServer.Builder configure(String[] args, Function<String, String> env)
            throws UsageException, ConfigException {
        Map<String, List<String>> cli = new java.util.LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String inline = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                inline = arg.substring(eq + 1);
                arg = arg.substring(0, eq);
            }
            if (arg.equals("-h") || arg.equals("--help")) {
                return null;
            }
            if (!VALUED.contains(arg)) {
                throw new UsageException(arg.startsWith("-") ? "unknown option '" + arg + "'"
                        : "unexpected argument '" + arg + "'");
            }
            String value = inline;
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new UsageException(arg + " needs a value");
                }
                value = args[++i];
            }
            if (!arg.equals("--rules") && cli.containsKey(arg)) {
                throw new UsageException(arg + " given twice");
            }
            cli.computeIfAbsent(arg, k -> new ArrayList<>()).add(value);
        }
        Map<String, List<String>> given = withEnvironment(cli, env);
        SluiceServer.Builder b = SluiceServer.builder();
        if (given.containsKey("--config")) {
            applyConfig(b, Path.of(given.get("--config").get(0)));
        }
        try {
            // Each option from the command line or else its environment variable (withEnvironment), over the
            // config file, over the defaults.
            if (given.containsKey("--rules")) {
                List<Path> rules = new ArrayList<>();
                given.get("--rules").forEach(r -> rules.add(Path.of(r)));
                b.rules(rules);
            }
            if (given.containsKey("--store")) {
                b.store(given.get("--store").get(0));
            }
            if (given.containsKey("--bind")) {
                b.bind(given.get("--bind").get(0));
            }
            if (given.containsKey("--http-port")) {
                b.httpPort(port(given.get("--http-port").get(0), source("--http-port", cli)));
            }
            if (given.containsKey("--grpc-port")) {
                b.grpcPort(port(given.get("--grpc-port").get(0), source("--grpc-port", cli)));
            }
            if (given.containsKey("--token") && given.containsKey("--token-file")) {
                throw new UsageException(cli.containsKey("--token") ? "give --token or --token-file, not both"
                        : "give SLUICE_TOKEN or SLUICE_TOKEN_FILE, not both");
            }
            if (given.containsKey("--token")) {
                token(b, given.get("--token").get(0), source("--token", cli));
            }
            if (given.containsKey("--token-file")) {
                String file = given.get("--token-file").get(0);
                String from = source("--token-file", cli);
                token(b, tokenFile(Path.of(file), from), from + " " + file);
            }
            if (given.containsKey("--clock")) {
                String clock = given.get("--clock").get(0);
                if (!clock.equals("server") && !clock.equals("client")) {
                    throw new UsageException(source("--clock", cli) + " must be server or client, was '" + clock + "'");
                }
                b.clientClock(clock.equals("client"));
            }
            if (given.containsKey("--tls-cert") != given.containsKey("--tls-key")) {
                throw new UsageException("--tls-cert and --tls-key go together (or SLUICE_TLS_CERT and SLUICE_TLS_KEY)");
            }
            if (given.containsKey("--tls-cert")) {
                b.tls(existing(Path.of(given.get("--tls-cert").get(0)), source("--tls-cert", cli)),
                        existing(Path.of(given.get("--tls-key").get(0)), source("--tls-key", cli)));
            }
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        return b;
    }

    /** The environment variable that stands for an option: {@code --http-port} is {@code SLUICE_HTTP_PORT}. */
    static String envName(String option) {
        return "SLUICE_" + option.substring(2).replace('-', '_').toUpperCase(java.util.Locale.ROOT);
    }

    /** How an error names where a value came from: the option, or its environment variable. */
    private static String source(String option, Map<String, List<String>> cli) {
        return cli.containsKey(option) ? option : envName(option);
    }

    /**
     * The command line's options, and for each option it does not give, its environment variable's value
     * ({@code SLUICE_RULES} is a comma-separated list). A token given on the command line, in either form,
     * leaves both token variables unread; so does neither form for the other.
     */
    private static Map<String, List<String>> withEnvironment(Map<String, List<String>> cli,
                                                             Function<String, String> env) {
        Map<String, List<String>> given = new java.util.LinkedHashMap<>(cli);
        boolean tokenOnCommandLine = cli.containsKey("--token") || cli.containsKey("--token-file");
        for (String option : VALUED) {
            String value = env.apply(envName(option));
            if (value == null || cli.containsKey(option)
                    || (tokenOnCommandLine && (option.equals("--token") || option.equals("--token-file")))) {
                continue;
            }
            given.put(option, option.equals("--rules") ? List.of(value.split(",", -1)) : List.of(value));
        }
        return given;
    }

    /** Applies a YAML config file; relative paths in it are relative to the file's directory. */
    private static void applyConfig(SluiceServer.Builder b, Path file) throws UsageException, ConfigException {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(file, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            throw new UsageException("--config " + file + ": no such file");
        } catch (JsonProcessingException e) {
            throw new UsageException(file + ": not valid YAML: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UsageException("--config " + file + ": " + e);
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            return;
        }
        if (!root.isObject()) {
            throw new UsageException(file + ": expected a map of settings");
        }
        Path dir = file.toAbsolutePath().getParent();
        Config c = new Config(file, root);
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!CONFIG_KEYS.contains(key)) {
                throw new UsageException(file + ": " + key + ": unknown setting; the settings are "
                        + String.join(", ", CONFIG_KEYS.stream().sorted().toList()));
            }
        }
        try {
            if (root.has("bind")) {
                b.bind(c.string("bind"));
            }
            if (root.has("http_port")) {
                b.httpPort(c.integer("http_port"));
            }
            if (root.has("grpc_port")) {
                b.grpcPort(c.integer("grpc_port"));
            }
            if (root.has("rules")) {
                List<Path> rules = new ArrayList<>();
                JsonNode node = root.get("rules");
                if (node.isArray()) {
                    for (int i = 0; i < node.size(); i++) {
                        if (!node.get(i).isTextual()) {
                            throw new UsageException(file + ": rules[" + i + "]: expected a file name");
                        }
                        rules.add(dir.resolve(node.get(i).textValue()));
                    }
                } else {
                    rules.add(dir.resolve(c.string("rules")));
                }
                b.rules(rules);
            }
            if (root.has("store")) {
                b.store(c.string("store"));
            }
            if (root.has("token") && root.has("token_file")) {
                throw new UsageException(file + ": give token or token_file, not both");
            }
            if (root.has("token")) {
                token(b, c.string("token"), file + ": token");
            }
            if (root.has("token_file")) {
                Path tokenFile = dir.resolve(c.string("token_file"));
                token(b, tokenFile(tokenFile, file + ": token_file"), file + ": token_file " + tokenFile);
            }
            if (root.has("tls_cert") != root.has("tls_key")) {
                throw new UsageException(file + ": tls_cert and tls_key go together");
            }
            if (root.has("tls_cert")) {
                b.tls(existing(dir.resolve(c.string("tls_cert")), file + ": tls_cert"),
                        existing(dir.resolve(c.string("tls_key")), file + ": tls_key"));
            }
            if (root.has("reload_interval")) {
                b.reloadInterval(c.duration("reload_interval"));
            }
            if (root.has("max_body_bytes")) {
                b.maxBodyBytes(c.integer("max_body_bytes"));
            }
            if (root.has("max_batch")) {
                b.maxBatch(c.integer("max_batch"));
            }
            if (root.has("max_key_length")) {
                b.maxKeyLength(c.integer("max_key_length"));
            }
            if (root.has("max_descriptor_entries")) {
                b.maxEntries(c.integer("max_descriptor_entries"));
            }
            if (root.has("envoy_response_headers")) {
                b.envoyResponseHeaders(c.bool("envoy_response_headers"));
            }
            if (root.has("redis_timeout") || root.has("redis_breaker_failures") || root.has("redis_breaker_pause")) {
                StoreFactory.RedisTuning d = StoreFactory.RedisTuning.SERVER_DEFAULT;
                b.redis(new StoreFactory.RedisTuning(
                        root.has("redis_timeout") ? c.duration("redis_timeout") : d.timeout(),
                        root.has("redis_breaker_failures") ? c.integer("redis_breaker_failures") : d.breakerFailures(),
                        root.has("redis_breaker_pause") ? c.duration("redis_breaker_pause") : d.breakerPause()));
            }
            if (root.has("shutdown_quiet_period") || root.has("shutdown_timeout")) {
                b.shutdown(root.has("shutdown_quiet_period") ? c.duration("shutdown_quiet_period")
                        : Duration.ofSeconds(1), root.has("shutdown_timeout") ? c.duration("shutdown_timeout")
                        : Duration.ofSeconds(10));
            }
        } catch (IllegalArgumentException e) {
            throw new UsageException(file + ": " + e.getMessage());
        }
    }

    /** Typed access to a config file's settings, each error naming the file and the setting. */
    private record Config(Path file, JsonNode root) {
        String string(String key) throws UsageException {
            JsonNode n = root.get(key);
            if (!n.isTextual()) {
                throw new UsageException(file + ": " + key + ": expected a string; was " + CheckRequest.describe(n));
            }
            return n.textValue();
        }

        int integer(String key) throws UsageException {
            JsonNode n = root.get(key);
            if (!n.isIntegralNumber() || !n.canConvertToInt()) {
                throw new UsageException(file + ": " + key + ": expected an integer; was " + CheckRequest.describe(n));
            }
            return n.intValue();
        }

        boolean bool(String key) throws UsageException {
            JsonNode n = root.get(key);
            if (!n.isBoolean()) {
                throw new UsageException(file + ": " + key + ": expected true or false; was "
                        + CheckRequest.describe(n));
            }
            return n.booleanValue();
        }

        Duration duration(String key) throws UsageException {
            try {
                return Durations.parse(string(key));
            } catch (IllegalArgumentException e) {
                throw new UsageException(file + ": " + key + ": " + e.getMessage());
            }
        }
    }

    private static int port(String text, String what) throws UsageException {
        try {
            int port = Integer.parseInt(text.strip());
            if (port < 0 || port > 65_535) {
                throw new NumberFormatException();
            }
            return port;
        } catch (NumberFormatException e) {
            throw new UsageException(what + " must be a port number in [0, 65535], was '" + text + "'");
        }
    }

    private static String tokenFile(Path file, String what) throws UsageException {
        try {
            String token = Files.readString(file, StandardCharsets.UTF_8).strip();
            if (token.isEmpty()) {
                throw new UsageException(what + " " + file + " is empty");
            }
            return token;
        } catch (NoSuchFileException e) {
            throw new UsageException(what + " " + file + ": no such file");
        } catch (IOException e) {
            throw new UsageException(what + " " + file + ": " + e);
        }
    }

    /**
     * Sets the token, refusing one that nobody could send (a newline from a file written with two lines, a
     * space, a control or non-ASCII character) with a message naming where it came from: an invalid setting,
     * exit status 1, as an invalid config file is.
     */
    private static void token(SluiceServer.Builder b, String token, String what) throws ConfigException {
        String problem = SluiceServer.Builder.tokenProblem(token);
        if (problem != null) {
            throw new ConfigException(what + ": the token " + problem);
        }
        b.token(token);
    }

    private static Path existing(Path file, String what) throws UsageException {
        if (!Files.isReadable(file)) {
            throw new UsageException(what + " " + file + ": no such (readable) file");
        }
        return file;
    }

    /** A setting whose value cannot work (a token nobody could send); exit status 1. */
    static final class ConfigException extends Exception {
        private static final long serialVersionUID = 1L;

        ConfigException(String message) {
            super(message);
        }
    }

    /** A command line (or config file) that cannot be used; exit status 2. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }
}
