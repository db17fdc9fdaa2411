package io.sluice.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Everything {@link SluiceServer} is configured with; built by {@link SluiceServer.Builder}.
 *
 * @param bind                 the address to listen on
 * @param httpPort             the HTTP port (0: ephemeral)
 * @param grpcPort             the gRPC port (0: ephemeral; equal to a non-zero {@code httpPort}: served on the
 *                             HTTP port)
 * @param rules                rule files and directories of them; empty for the bundled example
 * @param storeSpec            how the store was named ({@code memory}, a Redis URI), for messages
 * @param token                the bearer token every API call must carry, or null for none
 * @param tlsCert              PEM certificate chain, or null for plain text
 * @param tlsKey               PEM PKCS#8 private key, or null
 * @param tlsClientCa          PEM certificates of the CA whose client certificates are required (mutual TLS), or
 *                             null to serve clients without one
 * @param reloadInterval       how often rule files are checked for changes; zero for never
 * @param maxBodyBytes         the largest request body (and gRPC message) accepted
 * @param maxBatch             the most checks in one batch, and descriptors in one Envoy request
 * @param maxKeyLength         the longest key a check may name
 * @param maxEntries           the most entries in one descriptor
 * @param envoyHeaders         whether Envoy responses carry rate-limit response headers
 * @param shutdownQuietPeriod  how long stopping waits for requests to stop arriving
 * @param shutdownTimeout      the longest stopping waits for requests in flight
 * @param redis                the Redis store's timeout and circuit breaker (unused by other stores)
 * @param redisMode            the mode rules without their own are enforced in (only a Redis store tells modes
 *                             apart)
 */
record Settings(String bind, int httpPort, int grpcPort, List<Path> rules, String storeSpec, String token,
                Path tlsCert, Path tlsKey, Path tlsClientCa, Duration reloadInterval, int maxBodyBytes, int maxBatch, int maxKeyLength,
                int maxEntries, boolean envoyHeaders, Duration shutdownQuietPeriod, Duration shutdownTimeout,
                StoreFactory.RedisTuning redis, DefaultMode redisMode) {

    static final String DEFAULT_BIND = "127.0.0.1";
    static final int DEFAULT_HTTP_PORT = 8080;
    static final int DEFAULT_GRPC_PORT = 8081;
    static final int DEFAULT_MAX_BODY_BYTES = 64 * 1024;
    static final int DEFAULT_MAX_BATCH = 100;
    static final int DEFAULT_MAX_KEY_LENGTH = 256;
    static final int DEFAULT_MAX_ENTRIES = 16;
    /**
     * A scoped key is the domain, a separator and the key, and must fit the stores' 512 characters; domains are
     * at most {@link #MAX_DOMAIN_LENGTH}.
     */
    static final int MAX_KEY_LENGTH = 512 - 1 - 128;
    static final int MAX_DOMAIN_LENGTH = 128;

    /** Settings with the library's default mode, exact. */
    Settings(String bind, int httpPort, int grpcPort, List<Path> rules, String storeSpec, String token, Path tlsCert,
             Path tlsKey, Path tlsClientCa, Duration reloadInterval, int maxBodyBytes, int maxBatch, int maxKeyLength,
             int maxEntries, boolean envoyHeaders, Duration shutdownQuietPeriod, Duration shutdownTimeout,
             StoreFactory.RedisTuning redis) {
        this(bind, httpPort, grpcPort, rules, storeSpec, token, tlsCert, tlsKey, tlsClientCa, reloadInterval,
                maxBodyBytes, maxBatch, maxKeyLength, maxEntries, envoyHeaders, shutdownQuietPeriod, shutdownTimeout,
                redis, DefaultMode.EXACT);
    }

    /** Whether gRPC is served on the HTTP port rather than on a port of its own. */
    boolean grpcOnHttpPort() {
        return grpcPort == httpPort && httpPort != 0;
    }

    boolean tls() {
        return tlsCert != null;
    }
}
