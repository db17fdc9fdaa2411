package io.sluice.client.internal;

import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.RequestOptions;
import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.common.SessionProtocol;
import io.sluice.Clock;
import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Settlement;
import io.sluice.SluiceListener;
import io.sluice.client.RemoteStore;
import io.sluice.client.RemoteStoreException;
import io.sluice.client.RemoteUnavailableException;
import io.sluice.client.RuleMismatchException;
import io.sluice.redis.RedisUnavailableException;
import io.sluice.redis.internal.CircuitBreaker;
import io.sluice.redis.internal.FailurePolicies;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import io.sluice.redis.BatchRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@link RemoteStore} behind {@link RemoteStore#builder}: each store call is one {@code POST /v1/store/call},
 * or one call of a {@code POST /v1/store/calls} when many are in flight ({@link CallBatcher}), on an Armeria
 * {@link WebClient} over one HTTP/2 connection, through the Redis store's {@link CircuitBreaker}
 * and {@link FailurePolicies}. A call the server answers with 412 (rule not registered: first use, or the
 * server restarted) registers the rule ({@code POST /v1/store/rules}) and is sent again; 412 guarantees the
 * first was not decided, so nothing is charged twice.
 */
public final class DefaultRemoteStore implements RemoteStore {

    private static final int MAX_CACHED_RULES = 10_000;

    /** A rule's wire name: its fingerprint and canonical text, computed once per rule. */
    private record Wire(Rule rule, String fingerprint, String text) {}

    private final String where;
    private final String authorization;
    private final Clock clock;
    private final ClientFactory factory;
    private final WebClient client;
    private final CircuitBreaker breaker;
    private final FailurePolicies policies;
    /** The requests' headers (a call, a rule, a batch), immutable and the same for every call. */
    private final RequestHeaders callHeaders;
    private final RequestHeaders registerHeaders;
    private final RequestHeaders batchHeaders;
    private final CallBatcher batcher;
    private final ConcurrentHashMap<Rule, Wire> wires = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The last rule used: a limiter holds one rule instance, so this usually spares the map's hashing. */
    private volatile Wire last;

    /**
     * @param maxInFlight requests out on the connection before further calls wait and go together
     * @param maxCalls    the most calls in one request; 1 for no batching
     */
    public DefaultRemoteStore(URI uri, String token, Duration timeout, Clock clock, int breakerFailures,
                              Duration breakerCoolDown, SluiceListener listener, int maxInFlight, int maxCalls) {
        boolean tls = uri.getScheme().equalsIgnoreCase("https");
        int port = uri.getPort() != -1 ? uri.getPort() : tls ? 443 : 80;
        this.where = "sluice serve at " + uri.getScheme() + "://" + uri.getHost() + ":" + port;
        this.authorization = token == null ? null : "Bearer " + token;
        this.clock = clock;
        // A factory of its own, so closing the store closes its connection; the event loops are Armeria's shared
        // ones, so a store opened and closed many times leaves no thread behind.
        this.factory = ClientFactory.builder().connectTimeout(timeout).idleTimeout(Duration.ofMinutes(1))
                .useHttp2Preface(true).build();
        String authority = uri.getHost().contains(":") ? "[" + uri.getHost() + "]" : uri.getHost();
        this.client = WebClient.builder((tls ? SessionProtocol.H2 : SessionProtocol.H2C).uriText() + "://"
                        + authority + ":" + port)
                .factory(factory).responseTimeout(timeout).writeTimeout(timeout).maxResponseLength(1 << 20)
                .build();
        // As the Redis store's breaker: a probe is answered within the timeout; one still out after twice that
        // is given up.
        this.breaker = CircuitBreaker.named(where, breakerFailures, breakerCoolDown, timeout,
                timeout.multipliedBy(2).plusMillis(200), listener, System::nanoTime);
        this.policies = new FailurePolicies(clock, breaker);
        this.callHeaders = headers("/v1/store/call");
        this.registerHeaders = headers("/v1/store/rules");
        this.batchHeaders = headers("/v1/store/calls");
        this.batcher = new CallBatcher((batch, body, nanos) -> post(batch ? batchHeaders : callHeaders, body, nanos),
                where, timeout, maxInFlight, maxCalls);
    }

    private RequestHeaders headers(String path) {
        var b = RequestHeaders.builder(HttpMethod.POST, path).contentType(MediaType.JSON_UTF_8);
        return (authorization == null ? b : b.add("authorization", authorization)).build();
    }

    @Override
    public Decision decide(Rule rule, String key, Request request) {
        return join(decideAsync(rule, key, request));
    }

    @Override
    public CompletableFuture<Decision> decideAsync(Rule rule, String key, Request request) {
        CompletableFuture<Decision> sent;
        try {
            Wire w = wire(rule);
            String body = Protocol.call(w.rule().name(), w.fingerprint(), key, request, now());
            sent = remote(breaker.call("decide", () -> send(w, body))).thenApply(Protocol::decision);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        return policies.guard(rule, key, request, sent);
    }

    @Override
    public Decision decideTogether(List<Target> targets, Request request) {
        return join(decideTogetherAsync(targets, request));
    }

    /**
     * One call over all the targets ({@code "targets"} in {@code POST /v1/store/call}): the server's store decides
     * them together. When the server cannot be reached, each target is decided by its rule's failure policy and
     * the decisions are combined, as the Redis store does for a batch (not atomic then: see
     * {@link FailurePolicies#decideBatch}). Targets the server's store cannot decide together (on Redis Cluster,
     * keys in different slots) fail with an {@link IllegalArgumentException} carrying the server's message.
     */
    @Override
    public CompletableFuture<Decision> decideTogetherAsync(List<Target> targets, Request request) {
        Target.check(targets, request);
        if (targets.size() == 1) {
            return decideAsync(targets.get(0).rule(), targets.get(0).key(), request);
        }
        CompletableFuture<Decision> sent;
        List<Wire> ws = new ArrayList<>(targets.size());
        try {
            List<String[]> named = new ArrayList<>(targets.size());
            for (Target t : targets) {
                Wire w = wire(t.rule());
                ws.add(w);
                named.add(new String[] {w.rule().name(), w.fingerprint(), t.key()});
            }
            String body = Protocol.together(named, request, now());
            sent = remote(breaker.call("decide", () -> send(ws, body))).thenApply(Protocol::decision);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        return sent.exceptionallyCompose(e -> {
            Throwable t = unwrap(e);
            if (t instanceof InvalidCall) {
                return CompletableFuture.failedFuture(new IllegalArgumentException(t.getMessage()));
            }
            List<BatchRequest.Target> parts = new ArrayList<>(targets.size());
            for (Target target : targets) {
                parts.add(new BatchRequest.Target(target.rule(), target.key()));
            }
            try {
                return CompletableFuture.completedFuture(policies.decideBatch(new BatchRequest(parts, request), null,
                        t));
            } catch (RuntimeException raised) {
                return CompletableFuture.failedFuture(raised);
            }
        });
    }

    @Override
    public boolean release(Rule rule, String key, long lease) {
        return join(releaseAsync(rule, key, lease));
    }

    /**
     * Returns a lease. A lease this store's local fallback granted goes back to it, never to the server. When
     * the server cannot be reached and the rule's policy is not {@code raise}, answers false: the lease holds
     * its permits on the server until its TTL ends.
     */
    @Override
    public CompletableFuture<Boolean> releaseAsync(Rule rule, String key, long lease) {
        if (FailurePolicies.fallbackLease(lease)) {
            return CompletableFuture.completedFuture(policies.releaseFallback(rule, key, lease));
        }
        CompletableFuture<Boolean> sent;
        try {
            Wire w = wire(rule);
            String body = Protocol.release(w.rule().name(), w.fingerprint(), key, lease, now());
            sent = remote(breaker.call("release", () -> send(w, body))).thenApply(Protocol::released);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        return sent.exceptionallyCompose(e -> FailurePolicies.applies(rule, e)
                ? CompletableFuture.completedFuture(false) : CompletableFuture.failedFuture(e));
    }

    @Override
    public Decision charge(Rule rule, String key, long estimate, String ticketId, long lifetimeMicros) {
        return join(chargeAsync(rule, key, estimate, ticketId, lifetimeMicros));
    }

    /**
     * An estimated charge on the server's store, which keeps the ticket (docs/reference/settle.md). A failure is
     * raised, never decided by the rule's failure policy: an estimate the local fallback charged could not be
     * settled on the server. A ticket id still open for the rule and key is an {@link IllegalArgumentException},
     * and a rule the server's store cannot settle an {@link UnsupportedOperationException}, with the server's
     * words.
     */
    @Override
    public CompletableFuture<Decision> chargeAsync(Rule rule, String key, long estimate, String ticketId,
                                                   long lifetimeMicros) {
        try {
            Wire w = wire(rule);
            String body = Protocol.charge(w.rule().name(), w.fingerprint(), key, estimate, ticketId, lifetimeMicros,
                    now());
            return refused(remote(breaker.call("charge", () -> send(w, body))).thenApply(Protocol::decision));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public Settlement settle(Rule rule, String key, String ticketId, long actual) {
        return join(settleAsync(rule, key, ticketId, actual));
    }

    /** The settlement of a ticket on the server's store; as {@link #chargeAsync}, a failure is raised. */
    @Override
    public CompletableFuture<Settlement> settleAsync(Rule rule, String key, String ticketId, long actual) {
        try {
            Wire w = wire(rule);
            String body = Protocol.settle(w.rule().name(), w.fingerprint(), key, ticketId, actual, now());
            return refused(remote(breaker.call("settle", () -> send(w, body))).thenApply(Protocol::settlement));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** A 400 as the {@link IllegalArgumentException} the in-process stores throw for it, with the server's words. */
    private static <T> CompletableFuture<T> refused(CompletableFuture<T> call) {
        return call.exceptionallyCompose(e -> {
            Throwable t = unwrap(e);
            return CompletableFuture.failedFuture(t instanceof InvalidCall ? new IllegalArgumentException(
                    ((InvalidCall) t).serverMessage) : t);
        });
    }

    /** Forgets the key on the server and in the local fallback; a server out of reach throws. */
    @Override
    public void reset(Rule rule, String key) {
        policies.reset(rule, key);
        Wire w = wire(rule);
        String body = Protocol.reset(w.rule().name(), w.fingerprint(), key, now());
        join(remote(breaker.call("reset", () -> send(w, body))));
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            batcher.close();
            factory.close();
            policies.close();
        }
    }

    @Override
    public String toString() {
        return "RemoteStore{" + where + "}";
    }

    private Long now() {
        return clock == null ? null : clock.nowMicros();
    }

    private Wire wire(Rule rule) {
        Wire w = last;
        if (w != null && w.rule() == rule) {
            return w;
        }
        w = wires.get(rule);
        if (w == null) {
            if (wires.size() >= MAX_CACHED_RULES) {
                wires.clear();
            }
            String text = io.sluice.rules.RuleText.of(rule);
            w = new Wire(rule, io.sluice.rules.RuleText.fingerprintOf(text), text);
            wires.put(rule, w);
        }
        last = w;
        return w;
    }

    /** Sends a call; on 412 registers the rule and sends it once more. Completes with the 200 answer's body. */
    private CompletableFuture<byte[]> send(Wire w, String body) {
        return send(List.of(w), body);
    }

    /**
     * Sends a call naming the rules of {@code ws}; on 412 registers every one of them (the server forgets rules
     * together, past its table's bound, or all at a restart) and sends it once more.
     */
    private CompletableFuture<byte[]> send(List<Wire> ws, String body) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(new IllegalStateException("the remote store is closed"));
        }
        return batcher.exchange(body).thenCompose(r -> {
            if (r.status() != 412) {
                return CompletableFuture.completedFuture(answer(r));
            }
            CompletableFuture<Void> registered = CompletableFuture.completedFuture(null);
            for (Wire w : new java.util.LinkedHashSet<>(ws)) {
                registered = registered.thenCompose(x -> post(registerHeaders, w.text(), 0).thenAccept(
                        r2 -> answer(new Reply(r2.status().code(), r2.content().array()))));
            }
            return registered.thenCompose(x -> batcher.exchange(body).thenApply(this::answer));
        });
    }

    /** One POST, within {@code timeoutNanos} (0: the store's timeout); fails only when no answer came. */
    private CompletableFuture<AggregatedHttpResponse> post(RequestHeaders headers, String body, long timeoutNanos) {
        CompletableFuture<AggregatedHttpResponse> f;
        try {
            HttpRequest request = HttpRequest.of(headers, com.linecorp.armeria.common.HttpData.ofUtf8(body));
            // Whole milliseconds, at least one: Armeria keeps milliseconds, and 0 would mean no timeout at all.
            f = (timeoutNanos <= 0 ? client.execute(request) : client.execute(request, RequestOptions.builder()
                    .responseTimeoutMillis(Math.max(1, (timeoutNanos + 999_999) / 1_000_000)).build())).aggregate();
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        // An outage is expected: the exception says what happened in its message and carries no stack trace
        // (the breaker logs it when it opens).
        return f.exceptionallyCompose(e -> CompletableFuture.failedFuture(new RemoteUnavailableException(
                where + " did not answer: " + describe(unwrap(e)), null)));
    }

    /** The body of a 200; any other status as the exception it means. */
    private byte[] answer(Reply r) {
        int status = r.status();
        if (status == 200) {
            return r.body();
        }
        String message = Protocol.errorMessage(new String(r.body(), StandardCharsets.UTF_8));
        switch (status) {
            case 409:
                throw new RuleMismatchException(message);
            case 503:
            case 502:
            case 504:
                throw new RemoteUnavailableException(where + ": " + message, null);
            case 400:
                throw new InvalidCall(where + " answered 400: " + message, message);
            case 422:
                // The server's store cannot do this for the rule (a charge of a rule that cannot settle).
                throw new UnsupportedOperationException(message);
            default:
                throw new RemoteStoreException(where + " answered " + status + ": " + message);
        }
    }

    /**
     * The breaker's own refusal is a {@link RedisUnavailableException}; callers of this store are promised a
     * {@link RemoteUnavailableException}, with the breaker's message.
     */
    private static <T> CompletableFuture<T> remote(CompletableFuture<T> call) {
        if (call.isDone() && !call.isCompletedExceptionally()) {
            return call;
        }
        return call.exceptionallyCompose(e -> {
            Throwable t = unwrap(e);
            return CompletableFuture.failedFuture(t instanceof RedisUnavailableException
                    && !(t instanceof RemoteUnavailableException) ? new RemoteUnavailableException(t.getMessage(), null)
                    : t);
        });
    }

    private static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static String describe(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getMessage() == null) {
            t = t.getCause();
        }
        String name = t.getClass().getSimpleName();
        return t.getMessage() == null ? name : name + ": " + t.getMessage();
    }

    /** A 400: the server refused the call as invalid and charged nothing. */
    private static final class InvalidCall extends RemoteStoreException {
        private static final long serialVersionUID = 1L;
        /** The server's own words, without where they came from. */
        final String serverMessage;

        InvalidCall(String message, String serverMessage) {
            super(message);
            this.serverMessage = serverMessage;
        }
    }

    private static <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }
}
