package io.sluice.client;

import io.sluice.Clock;
import io.sluice.SluiceListener;
import io.sluice.Store;
import io.sluice.client.internal.DefaultRemoteStore;
import io.sluice.redis.internal.StoreSettings;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;

/**
 * A {@link Store} in a running {@code sluice serve}: the same {@link io.sluice.RateLimiter} code decides in the
 * central service instead of in process or in Redis, by changing only the store.
 *
 * <pre>{@code
 * Store store = RemoteStore.builder().uri("http://ratelimit.internal:8080").token(token).build();
 * RateLimiter limiter = RateLimiter.builder(rule).store(store).build();
 * }</pre>
 *
 * <p><b>Decisions</b> are made by the server's own store (memory or Redis) exactly as that store would make
 * them in process, with every field of the {@link io.sluice.Decision}. <b>Rules</b> travel by definition: the
 * store sends a rule once (as {@link io.sluice.rules.RuleText} writes it) and then names it in each call by
 * name and fingerprint. A rule the server's rule files also define must be identical there: otherwise every
 * call fails with {@link RuleMismatchException} naming the rule, and nothing is decided. See
 * docs/remote-client.md.
 *
 * <p><b>Thread safety:</b> one store is shared by any number of threads and limiters over one HTTP/2
 * connection, on which every call in flight is multiplexed; while {@linkplain Builder#batching a few requests}
 * are out, further calls wait for one to return and then go together in one request, each with its own
 * answer. <b>Time:</b> the server's store's clock, or with
 * {@link Builder#clock} this clock's reading sent with each call (the server must run with
 * {@code --clock client}; for tests and replays). <b>Failure:</b> when the server cannot be reached, does not
 * answer within the {@linkplain Builder#timeout timeout}, or answers that its own store is unavailable, the call
 * fails with {@link RemoteUnavailableException}, or, when the rule has a {@link io.sluice.FailurePolicy} other
 * than {@code raise}, is decided by it ({@link io.sluice.Decision#source()} says so). A circuit breaker (the
 * Redis store's) stops calling after a few consecutive such failures, so an outage costs one timeout and then
 * local speed. After a timeout the call may still be decided on the server, once at most: the store never
 * sends a call twice. <b>Estimated charges</b> ({@link io.sluice.RateLimiter#tryCharge},
 * {@link io.sluice.RateLimiter#settle}) are made on the server's store, which keeps the ticket, so a ticket may
 * be settled from any process; their failures are raised, never decided by a policy
 * (docs/reference/settle.md).
 */
public interface RemoteStore extends Store {

    /** A builder; {@link Builder#uri} is required. */
    static Builder builder() {
        return new Builder();
    }

    /** Configures a {@link RemoteStore}. */
    final class Builder {

        /** Default {@link #timeout}. */
        public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);
        /** Default requests out before calls are batched ({@link #batching}). */
        public static final int DEFAULT_REQUESTS_IN_FLIGHT = 4;
        /** Default most calls in one request ({@link #batching}). */
        public static final int DEFAULT_CALLS_PER_REQUEST = 64;

        private URI uri;
        private String token;
        private Duration timeout = DEFAULT_TIMEOUT;
        private Clock clock;
        private int breakerFailures = StoreSettings.DEFAULT_BREAKER_FAILURES;
        private Duration breakerCoolDown = StoreSettings.DEFAULT_BREAKER_COOL_DOWN;
        private SluiceListener listener = SluiceListener.NONE;
        private int requestsInFlight = DEFAULT_REQUESTS_IN_FLIGHT;
        private int callsPerRequest = DEFAULT_CALLS_PER_REQUEST;

        Builder() {}

        /**
         * The server's HTTP port: {@code http://host:port} (HTTP/2 over plain text, prior knowledge) or
         * {@code https://host:port} (HTTP/2 over TLS).
         *
         * @throws IllegalArgumentException unless an http or https URI with a host and no path, query or fragment
         */
        public Builder uri(String uri) {
            URI u;
            try {
                u = URI.create(uri == null ? "" : uri);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("uri must be http://host:port or https://host:port, was '" + uri
                        + "'");
            }
            String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
            if (!(scheme.equals("http") || scheme.equals("https")) || u.getHost() == null
                    || !(u.getRawPath() == null || u.getRawPath().isEmpty() || u.getRawPath().equals("/"))
                    || u.getRawQuery() != null || u.getRawFragment() != null || u.getRawUserInfo() != null) {
                throw new IllegalArgumentException("uri must be http://host:port or https://host:port, was '" + uri
                        + "'");
            }
            this.uri = u;
            return this;
        }

        /** The bearer token the server requires ({@code sluice serve --token}); default none. */
        public Builder token(String token) {
            if (token != null && (token.isBlank() || !token.strip().equals(token))) {
                throw new IllegalArgumentException("token must be non-empty without surrounding spaces");
            }
            this.token = token;
            return this;
        }

        /**
         * How long one call may take, connecting included; past it the call fails as unavailable (decided by
         * the rule's policy). Default 1 s.
         *
         * @throws IllegalArgumentException unless between 1 ms and 1 hour
         */
        public Builder timeout(Duration timeout) {
            this.timeout = StoreSettings.checkTimeout(timeout);
            return this;
        }

        /**
         * Decide at this clock's time: its reading goes with each call. Only a server started with
         * {@code --clock client} accepts it; for tests and replays. Default: the server's store's time.
         */
        public Builder clock(Clock clock) {
            if (clock == null) {
                throw new IllegalArgumentException("clock must not be null");
            }
            this.clock = clock;
            return this;
        }

        /**
         * The circuit breaker in front of the server, as the Redis store's: after {@code failures} consecutive
         * unavailable calls it stops calling for {@code coolDown}, deciding by each rule's policy at local
         * speed, then lets one probe through. Default 3 failures, 2 s.
         *
         * @throws IllegalArgumentException unless failures in [1, 1000] and the cool-down in [1 ms, 1 h]
         */
        public Builder circuitBreaker(int failures, Duration coolDown) {
            StoreSettings.checkBreaker(failures, coolDown);
            this.breakerFailures = failures;
            this.breakerCoolDown = coolDown;
            return this;
        }

        /**
         * Batching of concurrent calls. A call goes out at once, in a request of its own, while fewer than
         * {@code requestsInFlight} requests are out on the connection; otherwise it waits until one returns and goes
         * with every call that queued meanwhile in one request ({@code POST /v1/store/calls}), at most
         * {@code callsPerRequest} of them (a full queue goes at once). Each call keeps its own answer, timeout and
         * failure; a lone call never waits. {@code callsPerRequest} of 1 turns batching off: every call in its own
         * request, any number at once. Default 4 requests, 64 calls; a server takes at most its
         * {@code --max-batch} calls (default 100) in one request, and a store whose batch a server refuses sends
         * its calls alone and halves its batches.
         *
         * @throws IllegalArgumentException unless requestsInFlight in [1, 1000] and callsPerRequest in [1, 10000]
         */
        public Builder batching(int requestsInFlight, int callsPerRequest) {
            if (requestsInFlight < 1 || requestsInFlight > 1000) {
                throw new IllegalArgumentException("batching requestsInFlight must be in [1, 1000], was "
                        + requestsInFlight);
            }
            if (callsPerRequest < 1 || callsPerRequest > 10_000) {
                throw new IllegalArgumentException("batching callsPerRequest must be in [1, 10000], was "
                        + callsPerRequest);
            }
            this.requestsInFlight = requestsInFlight;
            this.callsPerRequest = callsPerRequest;
            return this;
        }

        /** Told of calls and breaker transitions; default {@link SluiceListener#NONE}. */
        public Builder listener(SluiceListener listener) {
            if (listener == null) {
                throw new IllegalArgumentException("listener must not be null");
            }
            this.listener = listener;
            return this;
        }

        /**
         * The store. It connects on its first call, so building never fails for an unreachable server.
         *
         * @throws IllegalArgumentException when no URI was given
         */
        public RemoteStore build() {
            if (uri == null) {
                throw new IllegalArgumentException("uri is required: http://host:port of a sluice serve");
            }
            return new DefaultRemoteStore(uri, token, timeout, clock, breakerFailures, breakerCoolDown, listener,
                    requestsInFlight, callsPerRequest);
        }
    }
}
