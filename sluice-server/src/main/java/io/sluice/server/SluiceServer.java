package io.sluice.server;

import com.linecorp.armeria.server.Server;
import io.sluice.Store;
import io.sluice.rules.RuleFileException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The central rate-limit service, startable from code (the {@code sluice serve} command, tests and benchmarks
 * all start it this way):
 *
 * <pre>{@code
 * try (SluiceServer server = SluiceServer.builder().httpPort(0).grpcPort(0).build().start()) {
 *     int port = server.httpPort();   // POST /v1/check, /v1/check/batch, /v1/charge, /v1/settle, /json,
 *                                     // /v1/store/*, /v1/admin/*;
 *                                     // GET /health, /ready, /metrics, /v1/admin/top
 *     ...
 * }
 * }</pre>
 *
 * <p>One Armeria server per port, both on Armeria's shared event loops: the HTTP port serves the JSON APIs and
 * the operations endpoints (HTTP/1.1 and HTTP/2, TLS optional), the gRPC port Envoy's
 * {@code RateLimitService} and the standard gRPC health service; with equal ports, one server serves all.
 * Every check is decided in the one {@link Store} the server was given: in memory, or in Redis when several
 * servers must share limits. Stopping is graceful: new requests are refused while requests in flight finish,
 * for at most the shutdown timeout.
 */
public final class SluiceServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SluiceServer.class);

    private final Settings settings;
    private final ServerResources resources;
    private final AtomicReference<RuleSet> rules;
    private final Server http;
    private final Server grpc;
    private final OpenConnections connections;

    private volatile boolean started;

    private SluiceServer(Settings settings, ServerResources resources, boolean clientClock) {
        this.settings = settings;
        this.resources = resources;
        this.rules = resources.rules();
        Routes.Servers servers = Routes.build(settings, resources.store(), resources.metrics(), rules,
                resources.reloader(), clientClock, resources.hotKeys());
        this.http = servers.http();
        this.grpc = servers.grpc();
        this.connections = servers.connections();
    }

    /** A builder; every setting has a default (the no-argument {@code sluice serve}). */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Binds the ports and starts serving; returns once both listen.
     *
     * @throws IllegalStateException when a port cannot be bound (the message says which)
     */
    public SluiceServer start() {
        try {
            http.start().join();
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot listen for HTTP on " + settings.bind() + ":" + settings.httpPort()
                    + ": " + rootMessage(e), e);
        }
        if (grpc != null) {
            try {
                grpc.start().join();
            } catch (RuntimeException e) {
                http.stop().join();
                throw new IllegalStateException("cannot listen for gRPC on " + settings.bind() + ":"
                        + settings.grpcPort() + ": " + rootMessage(e), e);
            }
        }
        started = true;
        LOG.atInfo().setMessage("listening")
                .addKeyValue("event", "server_started")
                .addKeyValue("http", settings.bind() + ":" + httpPort())
                .addKeyValue("grpc", settings.bind() + ":" + grpcPort())
                .addKeyValue("tls", settings.tls())
                .addKeyValue("store", StoreFactory.describe(settings.storeSpec()))
                .addKeyValue("rules", rules.get().summary())
                .addKeyValue("redis_mode", settings.redisMode().mode().toString())
                .log();
        List<String> exact = rules.get().notInDefaultMode();
        if (!exact.isEmpty()) {
            LOG.atWarn().setMessage("the default mode " + settings.redisMode().mode().name() + " cannot run these"
                            + " rules; they are enforced exactly (give them a mode of their own to say so)")
                    .addKeyValue("event", "rules_not_in_default_mode")
                    .addKeyValue("rules", String.join(", ", exact))
                    .log();
        }
        return this;
    }

    /** The bound HTTP port (the actual one when 0 was asked for). */
    public int httpPort() {
        return http.activeLocalPort();
    }

    /** The bound gRPC port; the HTTP port when gRPC is served there. */
    public int grpcPort() {
        return grpc == null ? httpPort() : grpc.activeLocalPort();
    }

    /** Whether gRPC is served on the HTTP port. */
    public boolean grpcOnHttpPort() {
        return grpc == null;
    }

    /** Whether API calls must carry the bearer token. */
    public boolean tokenRequired() {
        return settings.token() != null;
    }

    /** Whether the ports speak TLS. */
    public boolean tls() {
        return settings.tls();
    }

    /** The address the ports are bound to. */
    public String bindAddress() {
        return settings.bind();
    }

    /** The rule files in force (the bundled example's name when none were given). */
    public List<String> ruleSources() {
        return rules.get().sourceNames();
    }

    /** The rules in force, one line: names and limits, envoy domains. */
    public String rulesSummary() {
        return rules.get().summary();
    }

    /** The mode rules without their own are enforced in ({@link Builder#redisMode}). */
    public io.sluice.Mode defaultMode() {
        return settings.redisMode().mode();
    }

    /**
     * The rules without a mode of their own that the default mode cannot run, enforced exactly, each as
     * {@code name (algorithms)}.
     */
    public List<String> rulesNotInDefaultMode() {
        return rules.get().notInDefaultMode();
    }

    /** The store as it was named. */
    public String storeDescription() {
        return StoreFactory.describe(settings.storeSpec());
    }

    /** Re-reads the rule files now (they are also polled); package-private for tests. */
    RuleReloader.Result reloadRules() throws IOException {
        if (resources.reloader() == null) {
            return RuleReloader.Result.UNCHANGED;
        }
        return resources.reloader().reload();
    }

    /**
     * Stops serving: new requests are refused, requests in flight finish (up to the shutdown timeout), then
     * the ports are released and a store this server opened is closed.
     */
    public CompletableFuture<Void> stopAsync() {
        resources.stopReloading();
        // A quiet period shorter than Armeria's connection drain asks to stop sooner: the open connections are
        // closed within it once their port closes (OpenConnections).
        Duration drain = HttpStack.stopDrain(settings.shutdownQuietPeriod());
        if (drain.compareTo(HttpStack.armeriaDrain()) < 0) {
            connections.closeWithDrainOnceThePortCloses(drain);
        }
        List<CompletableFuture<?>> stops = new ArrayList<>();
        stops.add(ServerStop.released(http));
        if (grpc != null) {
            stops.add(ServerStop.released(grpc));
        }
        // Closing the store waits for its Redis connection to close, and that connection runs on Armeria's event
        // loops (RedisEventLoops): never wait for it on whichever thread completed the stop, which may be one.
        return CompletableFuture.allOf(stops.toArray(new CompletableFuture<?>[0])).whenCompleteAsync((x, e) -> {
            resources.release();
            if (started) {
                LOG.atInfo().setMessage("stopped").addKeyValue("event", "server_stopped").log();
            }
        });
    }

    /** {@link #stopAsync()}, waiting for it. */
    public void stop() {
        stopAsync().join();
    }

    /** {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.toString() : t.getMessage();
    }

    /** Configures a {@link SluiceServer}; the defaults are those of {@code sluice serve} without arguments. */
    public static final class Builder {
        private String bind = Settings.DEFAULT_BIND;
        private int httpPort = Settings.DEFAULT_HTTP_PORT;
        private int grpcPort = Settings.DEFAULT_GRPC_PORT;
        private final List<Path> rules = new ArrayList<>();
        private Store store;
        private String storeSpec = "memory";
        private String token;
        private Path tlsCert;
        private Path tlsKey;
        private Path tlsClientCa;
        private Duration reloadInterval = Duration.ofSeconds(1);
        private int maxBodyBytes = Settings.DEFAULT_MAX_BODY_BYTES;
        private int maxBatch = Settings.DEFAULT_MAX_BATCH;
        private int maxKeyLength = Settings.DEFAULT_MAX_KEY_LENGTH;
        private int maxEntries = Settings.DEFAULT_MAX_ENTRIES;
        private boolean envoyHeaders = true;
        private Duration shutdownQuietPeriod = Duration.ofSeconds(1);
        private Duration shutdownTimeout = Duration.ofSeconds(10);
        private StoreFactory.RedisTuning redis = StoreFactory.RedisTuning.SERVER_DEFAULT;
        private boolean clientClock;
        private DefaultMode redisMode = DefaultMode.EXACT;

        private Builder() {}

        /**
         * Whether remote stores may send their own clock's reading with each call ({@code --clock client}), for
         * tests and replays; default false: every decision is made at the store's own time. Applies to the store
         * this server opens from {@link #store(String)} (a Redis store then runs in client-time mode).
         */
        public Builder clientClock(boolean accept) {
            this.clientClock = accept;
            return this;
        }

        /** The address to listen on; default {@code 127.0.0.1} (loopback only). */
        public Builder bind(String address) {
            this.bind = require(address, "bind");
            return this;
        }

        /** The HTTP port; default 8080; 0 picks a free one ({@link #httpPort()} tells which). */
        public Builder httpPort(int port) {
            this.httpPort = port(port, "http port");
            return this;
        }

        /** The gRPC port; default 8081; 0 picks a free one; the HTTP port's number serves gRPC there. */
        public Builder grpcPort(int port) {
            this.grpcPort = port(port, "grpc port");
            return this;
        }

        /**
         * Rule files: Sluice rule files and envoyproxy/ratelimit configurations, told apart by their content;
         * default the bundled example. Replaces earlier calls.
         */
        public Builder rules(List<Path> files) {
            this.rules.clear();
            this.rules.addAll(files);
            return this;
        }

        /** A store to decide in; the server does not close it. Default: opened from {@link #store(String)}. */
        public Builder store(Store store) {
            this.store = store;
            return this;
        }

        /** The store to open ({@link StoreFactory}): {@code memory} (default) or a Redis URI; closed on stop. */
        public Builder store(String spec) {
            this.storeSpec = require(spec, "store");
            return this;
        }

        /**
         * Require {@code Authorization: Bearer TOKEN} on every API call (HTTP and gRPC); default none.
         *
         * @throws IllegalArgumentException unless the token is one or more visible ASCII characters (U+0021 to
         *                                  U+007E), the only ones a client can send as the server compares them
         */
        public Builder token(String token) {
            String problem = token == null ? null : BearerAuth.tokenProblem(token);
            if (problem != null) {
                throw new IllegalArgumentException("token " + problem);
            }
            this.token = token;
            return this;
        }

        /** Serve TLS with a PEM certificate chain and PEM (PKCS#8) private key; default plain text. */
        public Builder tls(Path certificateChain, Path privateKey) {
            if ((certificateChain == null) != (privateKey == null)) {
                throw new IllegalArgumentException("TLS needs both a certificate and a private key");
            }
            this.tlsCert = certificateChain;
            this.tlsKey = privateKey;
            return this;
        }

        /**
         * Serve only clients that present a certificate issued by one of the CAs in this PEM file (mutual TLS),
         * on both ports, beside the bearer token if one is set; needs {@link #tls}. Default none: any client
         * may connect. Null removes it.
         */
        public Builder tlsClientCa(Path caCertificates) {
            this.tlsClientCa = caCertificates;
            return this;
        }

        /** How often rule files are checked for changes; default 1 s; zero never checks. */
        public Builder reloadInterval(Duration interval) {
            if (interval == null || interval.isNegative()) {
                throw new IllegalArgumentException("reload interval must be zero or positive, was " + interval);
            }
            this.reloadInterval = interval;
            return this;
        }

        /** The largest request body (and gRPC message) accepted; default 64 KiB. */
        public Builder maxBodyBytes(int bytes) {
            this.maxBodyBytes = bounded(bytes, 256, 64 * 1024 * 1024, "max body bytes");
            return this;
        }

        /** The most checks per batch and descriptors per Envoy request; default 100. */
        public Builder maxBatch(int checks) {
            this.maxBatch = bounded(checks, 1, 10_000, "max batch");
            return this;
        }

        /** The longest key a check may name; default 256, at most 383 (so domain and key fit a store key). */
        public Builder maxKeyLength(int characters) {
            this.maxKeyLength = bounded(characters, 1, Settings.MAX_KEY_LENGTH, "max key length");
            return this;
        }

        /** The most entries in one descriptor; default 16. */
        public Builder maxEntries(int entries) {
            this.maxEntries = bounded(entries, 1, 1_000, "max descriptor entries");
            return this;
        }

        /** Whether Envoy responses carry rate-limit response headers; default true. */
        public Builder envoyResponseHeaders(boolean enabled) {
            this.envoyHeaders = enabled;
            return this;
        }

        /** How long stopping waits for requests to stop arriving, and at most in all; default 1 s and 10 s. */
        public Builder shutdown(Duration quietPeriod, Duration timeout) {
            if (quietPeriod == null || timeout == null || quietPeriod.isNegative()
                    || timeout.compareTo(quietPeriod) < 0) {
                throw new IllegalArgumentException("shutdown needs 0 <= quiet period <= timeout, was " + quietPeriod
                        + " and " + timeout);
            }
            this.shutdownQuietPeriod = quietPeriod;
            this.shutdownTimeout = timeout;
            return this;
        }

        /**
         * How a Redis store fails and recovers: command timeout, consecutive failures that open the circuit
         * breaker, and how long it stays open; default {@link StoreFactory.RedisTuning#SERVER_DEFAULT} (500 ms,
         * 3, 250 ms). Used when the store is opened from a Redis URI.
         */
        public Builder redis(StoreFactory.RedisTuning tuning) {
            if (tuning == null) {
                throw new IllegalArgumentException("redis settings must not be null");
            }
            this.redis = tuning;
            return this;
        }

        /**
         * The mode the rules of the rule files are enforced in when they choose none ({@code mode} in a rule
         * file), limits addressed alone and envoy limits too; default {@link io.sluice.Mode#exact()}. Where the
         * mode cannot run a rule (synced runs only fixed and sliding windows, leased no reserving algorithm),
         * that rule stays exact and the start-up log names it. Only a Redis store tells modes apart.
         */
        public Builder redisMode(io.sluice.Mode mode) {
            this.redisMode = new DefaultMode(mode);
            return this;
        }

        /**
         * Reads the rules and opens the store; nothing listens until {@link SluiceServer#start()}.
         *
         * @throws RuleFileException        when a rule file is invalid (file, line and field in the message)
         * @throws IOException              when a rule file cannot be read
         * @throws IllegalArgumentException when the store spec is not usable
         */
        public SluiceServer build() throws IOException, RuleFileException {
            if (tlsClientCa != null && tlsCert == null) {
                throw new IllegalArgumentException("a client CA (mutual TLS) needs the server's own TLS certificate"
                        + " and key");
            }
            Settings settings = settings();
            ServerResources resources = ServerResources.open(settings, store, clientClock);
            try {
                return new SluiceServer(settings, resources, clientClock);
            } catch (RuntimeException e) {
                // The servers could not be configured (a TLS certificate that does not load, say).
                resources.stopReloading();
                resources.release();
                throw e;
            }
        }

        /** The settings as given so far; the empty endpoint ({@link EmptyEndpoint}) is built from them too. */
        Settings settings() {
            return new Settings(bind, httpPort, grpcPort, List.copyOf(rules), store != null ? "(given)" : storeSpec,
                    token, tlsCert, tlsKey, tlsClientCa, reloadInterval, maxBodyBytes, maxBatch, maxKeyLength,
                    maxEntries, envoyHeaders, shutdownQuietPeriod, shutdownTimeout, redis, redisMode);
        }

        private static String require(String value, String what) {
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException(what + " must not be empty");
            }
            return value;
        }

        private static int port(int port, String what) {
            return bounded(port, 0, 65_535, what);
        }

        private static int bounded(int value, int min, int max, String what) {
            if (value < min || value > max) {
                throw new IllegalArgumentException(what + " must be in [" + min + ", " + max + "], was " + value);
            }
            return value;
        }
    }
}
