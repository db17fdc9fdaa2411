package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Store;
import io.sluice.redis.RedisUnavailableException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The remote store protocol ({@code sluice-client}'s {@code RemoteStore}): the server's {@link Store} offered
 * call for call, so that a {@link RateLimiter} in another process decides exactly as it would on this store.
 *
 * <ul>
 * <li>{@code POST /v1/store/rules}, body: one rule as {@link io.sluice.rules.RuleText} writes it; answers
 * <code>{"fingerprint": fp}</code> ({@link RemoteRules}).</li>
 * <li>{@code POST /v1/store/call}, body <code>{"rule", "fingerprint", "key", "op", "permits", "max_wait_us",
 * "lease", "now_us"}</code> with {@code op} one of {@code try, try_at_most, reserve, peek, release, reset};
 * answers a decision <code>{"allowed", "granted", "remaining", "retry_after_us", "reset_after_us", "wait_us",
 * "limit", "lease", "source"}</code>, and {@code "shadow_limit", "shadow_retry_after_us"} when a shadow limit
 * would have rejected, {@code "locked_out": true} when the rule's lockout rejected (times in whole
 * microseconds, -1 for "never" and for no lease),
 * <code>{"released": bool}</code> or <code>{"reset": true}</code>.</li>
 * <li>{@code POST /v1/store/call} with {@code op} {@code charge} ({@code "estimate", "ticket", "lifetime_us"}:
 * {@link Store#charge}, answered with the decision) or {@code settle} ({@code "ticket", "actual"}:
 * {@link Store#settle}, answered <code>{"settled": bool, "estimate": n, "actual": n}</code>); the ticket stays in
 * this server's store. A ticket id still open for the rule and key is a 400 {@code invalid}; a rule the store
 * cannot settle a 422 {@code cannot_settle}.</li>
 * <li>{@code POST /v1/store/call} with <code>"targets": [{"rule", "fingerprint", "key"}, ...]</code> in place of
 * {@code rule}, {@code fingerprint} and {@code key}: one request (op {@code try, try_at_most, reserve, peek})
 * decided over every target all or nothing ({@link Store#decideTogether}), answered with the one decision.
 * A 412 names the first target whose rule is unknown; the client registers its targets' rules and calls again.
 * Targets the store cannot decide together (on Redis Cluster, keys in different slots) are a 400
 * {@code invalid}, as a repeated target is.</li>
 * </ul>
 *
 * <p>Errors are <code>{"error": message, "code": code}</code>: 400 {@code invalid} (the field is named; nothing
 * was charged), 409 {@code rule_mismatch} (the server's rule files define the rule differently), 412
 * {@code unknown_rule} (register it, then call again), 503 {@code store_unavailable} (the server's store could
 * not decide and the rule's policy is {@code raise}), 500 {@code store_error}. {@code now_us} is accepted only
 * by a server started with {@code --clock client} ({@link RequestClock}).
 */
final class StoreService {

    static final String API = "store";

    private final Store store;
    private final RemoteRules rules;
    private final ServerMetrics metrics;
    private final StoreErrors storeErrors;
    private final boolean clientClock;
    private final int maxBodyBytes;
    private final SluiceListener listener;

    StoreService(Store store, RemoteRules rules, ServerMetrics metrics, StoreErrors storeErrors, boolean clientClock,
                 int maxBodyBytes) {
        this(store, rules, metrics, storeErrors, clientClock, maxBodyBytes, SluiceListener.NONE);
    }

    /** @param listener told of every decision a call made, with its key (the server's {@link HotKeys}) */
    StoreService(Store store, RemoteRules rules, ServerMetrics metrics, StoreErrors storeErrors, boolean clientClock,
                 int maxBodyBytes, SluiceListener listener) {
        this.listener = listener;
        this.store = store;
        this.rules = rules;
        this.metrics = metrics;
        this.storeErrors = storeErrors;
        this.clientClock = clientClock;
        this.maxBodyBytes = maxBodyBytes;
    }

    /** {@code POST /v1/store/rules}. */
    HttpService register() {
        return (ctx, req) -> HttpResponse.of(req.aggregate().thenApply(body -> {
            try {
                // Refused, not repaired: a rule text with bytes that are not UTF-8 would otherwise register
                // with U+FFFD in their place.
                Utf8.require(body.content().array());
                String fingerprint = rules.register(body.content().toString(StandardCharsets.UTF_8));
                StringBuilder s = new StringBuilder(64).append("{\"fingerprint\":");
                return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8,
                        Json.string(s, fingerprint).append('}').toString());
            } catch (InvalidRequestException e) {
                return refused(HttpStatus.BAD_REQUEST, "invalid", e.getMessage()).response();
            } catch (RemoteRules.Mismatch e) {
                return refused(HttpStatus.CONFLICT, "rule_mismatch", e.getMessage()).response();
            }
        }).exceptionally(e -> HttpResponses.unreadable(e, maxBodyBytes)));
    }

    /** {@code POST /v1/store/call}. */
    HttpService call() {
        return (ServiceRequestContext ctx, HttpRequest req) -> {
            long start = System.nanoTime();
            return HttpResponse.of(req.aggregate().thenCompose(body -> {
                CompletableFuture<HttpResponse> response = respond(ctx, body).thenApply(StoreAnswer::response);
                return response.whenComplete((r, e) -> metrics.latency(API, start));
            }).exceptionally(e -> HttpResponses.unreadable(e, maxBodyBytes)));
        };
    }

    private CompletableFuture<StoreAnswer> respond(ServiceRequestContext ctx, AggregatedHttpRequest body) {
        JsonNode root;
        try {
            root = CheckRequest.parse(body.content().array());
        } catch (InvalidRequestException e) {
            return done(refused(HttpStatus.BAD_REQUEST, "invalid", e.getMessage()));
        }
        return respond(ctx, root);
    }

    /**
     * Decides one call, parsed, as {@code /v1/store/call} does; the future always completes normally, failures
     * as their answer.
     */
    CompletableFuture<StoreAnswer> respond(ServiceRequestContext ctx, JsonNode root) {
        StoreCall c;
        Rule rule;
        List<Store.Target> targets = null;
        try {
            c = StoreCall.parse(root, clientClock);
            if (c.targets != null) {
                targets = new ArrayList<>(c.targets.size());
                for (String[] t : c.targets) {
                    Rule r = rules.rule(t[0], t[1]);
                    c.check(r);
                    targets.add(new Store.Target(r, t[2]));
                }
                rule = targets.get(0).rule();
            } else {
                rule = rules.rule(c.rule, c.fingerprint);
                c.check(rule);
            }
        } catch (InvalidRequestException e) {
            return done(refused(HttpStatus.BAD_REQUEST, "invalid", e.getMessage()));
        } catch (RemoteRules.Unknown e) {
            return done(StoreAnswer.error(HttpStatus.PRECONDITION_FAILED, "unknown_rule", e.getMessage()));
        } catch (RemoteRules.Mismatch e) {
            return done(refused(HttpStatus.CONFLICT, "rule_mismatch", e.getMessage()));
        }
        CompletableFuture<StoreAnswer> answer;
        try {
            if (targets != null) {
                List<Store.Target> all = targets;
                answer = c.nowMicros == null ? together(all, c.request)
                        : RequestClock.at(c.nowMicros, () -> together(all, c.request));
            } else {
                answer = c.nowMicros == null ? run(ctx, c, rule)
                        : RequestClock.at(c.nowMicros, () -> run(ctx, c, rule));
            }
        } catch (IllegalArgumentException e) {
            // A repeated target, or targets the store cannot decide together; or a charge whose ticket id is
            // still open: nothing was charged.
            return done(refused(HttpStatus.BAD_REQUEST, "invalid",
                    targets != null ? "targets: " + e.getMessage() : e.getMessage()));
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.exceptionally(this::failed);
    }

    /** One request over several targets, all or nothing; every target's key is told of the one decision. */
    private CompletableFuture<StoreAnswer> together(List<Store.Target> targets, Request request) {
        return store.decideTogetherAsync(targets, request).thenApply(d -> {
            for (Store.Target t : targets) {
                listener.onDecision(t.rule(), t.key(), d);
            }
            return StoreAnswer.of(d);
        });
    }

    private CompletableFuture<StoreAnswer> run(ServiceRequestContext ctx, StoreCall c, Rule rule) {
        switch (c.op) {
            case "release":
                return store.releaseAsync(rule, c.key, c.lease).thenApply(released -> StoreAnswer.ok(
                        Json.released(new StringBuilder(24), released).toString()));
            case "reset": {
                // A Redis store's reset blocks until Redis answers: not on an event loop.
                Long now = c.nowMicros;
                return CompletableFuture.supplyAsync(() -> {
                    if (now == null) {
                        store.reset(rule, c.key);
                    } else {
                        RequestClock.at(now, () -> {
                            store.reset(rule, c.key);
                            return null;
                        });
                    }
                    return StoreAnswer.ok("{\"reset\":true}");
                }, ctx.blockingTaskExecutor());
            }
            case "charge":
                return store.chargeAsync(rule, c.key, c.permits, c.ticket, c.lifetimeMicros).thenApply(d -> {
                    listener.onDecision(rule, c.key, d);
                    return StoreAnswer.of(d);
                });
            case "settle":
                return store.settleAsync(rule, c.key, c.ticket, c.actual).thenApply(StoreAnswer::of);
            default:
                return store.decideAsync(rule, c.key, c.request).thenApply(d -> {
                    listener.onDecision(rule, c.key, d);
                    return StoreAnswer.of(d);
                });
        }
    }

    private StoreAnswer failed(Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof IllegalArgumentException) {
            // A charge whose ticket id is still open (the Redis store finds it inside its script): nothing charged.
            return refused(HttpStatus.BAD_REQUEST, "invalid", cause.getMessage());
        }
        if (cause instanceof UnsupportedOperationException) {
            // A charge of a rule whose limit (or mode) cannot settle: refused before anything was charged.
            return refused(HttpStatus.UNPROCESSABLE_ENTITY, "cannot_settle", cause.getMessage());
        }
        storeErrors.record(API, cause);
        String message = cause.getMessage() == null ? cause.toString() : cause.getMessage();
        return cause instanceof RedisUnavailableException
                ? StoreAnswer.error(HttpStatus.SERVICE_UNAVAILABLE, "store_unavailable",
                        "store unavailable: " + message)
                : StoreAnswer.error(HttpStatus.INTERNAL_SERVER_ERROR, "store_error", "store failed: " + message);
    }

    /** A call refused for what it asks (its status and code say why): counted as invalid, nothing charged. */
    private StoreAnswer refused(HttpStatus status, String code, String message) {
        metrics.invalidRequest(API);
        return StoreAnswer.error(status, code, message);
    }

    private static CompletableFuture<StoreAnswer> done(StoreAnswer r) {
        return CompletableFuture.completedFuture(r);
    }
}
