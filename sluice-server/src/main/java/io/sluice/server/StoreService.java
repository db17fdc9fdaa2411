package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Settlement;
import io.sluice.SluiceListener;
import io.sluice.Store;
import io.sluice.Ticket;
import io.sluice.redis.RedisUnavailableException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
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
    private static final Set<String> CALL_FIELDS = Set.of("rule", "fingerprint", "key", "op", "permits",
            "max_wait_us", "lease", "now_us", "targets", "estimate", "ticket", "lifetime_us", "actual");

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
                metrics.invalidRequest(API);
                return error(HttpStatus.BAD_REQUEST, "invalid", e.getMessage()).response();
            } catch (RemoteRules.Mismatch e) {
                metrics.invalidRequest(API);
                return error(HttpStatus.CONFLICT, "rule_mismatch", e.getMessage()).response();
            }
        }).exceptionally(e -> HttpResponses.unreadable(e, maxBodyBytes)));
    }

    /** {@code POST /v1/store/call}. */
    HttpService call() {
        return (ServiceRequestContext ctx, HttpRequest req) -> {
            long start = System.nanoTime();
            return HttpResponse.of(req.aggregate().thenCompose(body -> {
                CompletableFuture<HttpResponse> response = respond(ctx, body).thenApply(Answer::response);
                return response.whenComplete((r, e) -> metrics.latency(API, start));
            }).exceptionally(e -> HttpResponses.unreadable(e, maxBodyBytes)));
        };
    }

    /**
     * One call's answer: its status and JSON body, a response of its own ({@code /v1/store/call}) or one element
     * of a batch's ({@link StoreBatchService}).
     */
    record Answer(HttpStatus status, String json) {
        HttpResponse response() {
            return HttpResponse.of(status, MediaType.JSON_UTF_8, json);
        }
    }

    private CompletableFuture<Answer> respond(ServiceRequestContext ctx, AggregatedHttpRequest body) {
        JsonNode root;
        try {
            root = CheckRequest.parse(body.content().array());
        } catch (InvalidRequestException e) {
            metrics.invalidRequest(API);
            return done(error(HttpStatus.BAD_REQUEST, "invalid", e.getMessage()));
        }
        return respond(ctx, root);
    }

    /**
     * Decides one call, parsed, as {@code /v1/store/call} does; the future always completes normally, failures
     * as their answer.
     */
    CompletableFuture<Answer> respond(ServiceRequestContext ctx, JsonNode root) {
        Call c;
        Rule rule;
        List<Store.Target> targets = null;
        try {
            c = parse(root);
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
            metrics.invalidRequest(API);
            return done(error(HttpStatus.BAD_REQUEST, "invalid", e.getMessage()));
        } catch (RemoteRules.Unknown e) {
            return done(error(HttpStatus.PRECONDITION_FAILED, "unknown_rule", e.getMessage()));
        } catch (RemoteRules.Mismatch e) {
            metrics.invalidRequest(API);
            return done(error(HttpStatus.CONFLICT, "rule_mismatch", e.getMessage()));
        }
        CompletableFuture<Answer> answer;
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
            metrics.invalidRequest(API);
            return done(error(HttpStatus.BAD_REQUEST, "invalid", targets != null ? "targets: " + e.getMessage()
                    : e.getMessage()));
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.exceptionally(this::failed);
    }

    /** One request over several targets, all or nothing; every target's key is told of the one decision. */
    private CompletableFuture<Answer> together(List<Store.Target> targets, Request request) {
        return store.decideTogetherAsync(targets, request).thenApply(d -> {
            for (Store.Target t : targets) {
                listener.onDecision(t.rule(), t.key(), d);
            }
            return ok(decision(d));
        });
    }

    private CompletableFuture<Answer> run(ServiceRequestContext ctx, Call c, Rule rule) {
        switch (c.op) {
            case "release":
                return store.releaseAsync(rule, c.key, c.lease).thenApply(released -> ok(
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
                    return ok("{\"reset\":true}");
                }, ctx.blockingTaskExecutor());
            }
            case "charge":
                return store.chargeAsync(rule, c.key, c.permits, c.ticket, c.lifetimeMicros).thenApply(d -> {
                    listener.onDecision(rule, c.key, d);
                    return ok(decision(d));
                });
            case "settle":
                return store.settleAsync(rule, c.key, c.ticket, c.actual).thenApply(s -> ok(settlement(s)));
            default:
                return store.decideAsync(rule, c.key, c.request).thenApply(d -> {
                    listener.onDecision(rule, c.key, d);
                    return ok(decision(d));
                });
        }
    }

    private Answer failed(Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof IllegalArgumentException) {
            // A charge whose ticket id is still open (the Redis store finds it inside its script): nothing charged.
            metrics.invalidRequest(API);
            return error(HttpStatus.BAD_REQUEST, "invalid", cause.getMessage());
        }
        if (cause instanceof UnsupportedOperationException) {
            // A charge of a rule whose limit (or mode) cannot settle: refused before anything was charged.
            metrics.invalidRequest(API);
            return error(HttpStatus.UNPROCESSABLE_ENTITY, "cannot_settle", cause.getMessage());
        }
        storeErrors.record(API, cause);
        String message = cause.getMessage() == null ? cause.toString() : cause.getMessage();
        return cause instanceof RedisUnavailableException
                ? error(HttpStatus.SERVICE_UNAVAILABLE, "store_unavailable", "store unavailable: " + message)
                : error(HttpStatus.INTERNAL_SERVER_ERROR, "store_error", "store failed: " + message);
    }

    /** A decision with every field, times in microseconds: what the remote store rebuilds exactly. */
    static String decision(Decision d) {
        StringBuilder s = new StringBuilder(200);
        s.append("{\"allowed\":").append(d.allowed());
        s.append(",\"granted\":").append(d.granted());
        s.append(",\"remaining\":").append(d.remaining());
        s.append(",\"retry_after_us\":").append(micros(d.retryAfterMicros()));
        s.append(",\"reset_after_us\":").append(micros(d.resetAfterMicros()));
        s.append(",\"wait_us\":").append(micros(d.waitMicros()));
        s.append(",\"limit\":");
        Json.string(s, d.limit());
        s.append(",\"lease\":").append(d.lease());
        s.append(",\"source\":\"").append(d.source().name().toLowerCase(Locale.ROOT)).append('"');
        if (d.shadowRejected()) {
            s.append(",\"shadow_limit\":");
            Json.string(s, d.shadowLimit());
            s.append(",\"shadow_retry_after_us\":").append(micros(d.shadowRetryAfterMicros()));
        }
        if (d.lockedOut()) {
            s.append(",\"locked_out\":true");
        }
        return s.append('}').toString();
    }

    /** A settlement as the remote store reads it back. */
    static String settlement(Settlement s) {
        return "{\"settled\":" + s.settled() + ",\"estimate\":" + s.estimate() + ",\"actual\":" + s.actual() + "}";
    }

    private static long micros(long v) {
        return v == Long.MAX_VALUE ? -1 : v;
    }

    private static Answer ok(String json) {
        return new Answer(HttpStatus.OK, json);
    }

    static Answer error(HttpStatus status, String code, String message) {
        StringBuilder s = new StringBuilder(message.length() + 48).append("{\"error\":");
        Json.string(s, message).append(",\"code\":");
        return new Answer(status, Json.string(s, code).append('}').toString());
    }

    private static CompletableFuture<Answer> done(Answer r) {
        return CompletableFuture.completedFuture(r);
    }

    /** One parsed call; {@link #check} validates it against its rule as the limiter would. */
    private static final class Call {
        String rule;
        String fingerprint;
        String key;
        String op;
        long permits;
        long maxWaitMicros;
        long lease = Decision.NO_LEASE;
        Long nowMicros;
        Request request;
        /** For a call over several targets: each target's rule, fingerprint and key; else null. */
        List<String[]> targets;
        /** For {@code charge} and {@code settle}: the ticket's id. */
        String ticket;
        long lifetimeMicros;
        long actual;

        void check(Rule r) throws InvalidRequestException {
            if (op.equals("release") || op.equals("reset") || op.equals("settle")) {
                return;
            }
            if (op.equals("charge")) {
                long max = Math.min(r.maxPermits(), Limit.MAX_COUNT);
                if (permits < 1 || permits > max) {
                    throw InvalidRequestException.at("estimate", "expected an integer in [1, " + max
                            + "] for rule '" + r.name() + "'; was " + permits);
                }
                return;
            }
            long max = op.equals("try_at_most") ? Limit.MAX_COUNT : Math.min(r.maxPermits(), Limit.MAX_COUNT);
            long min = op.equals("peek") ? 0 : 1;
            if (permits < min || permits > max) {
                throw InvalidRequestException.at("permits", "expected an integer in [" + min + ", " + max
                        + "] for rule '" + r.name() + "'; was " + permits);
            }
            request = switch (op) {
                case "try" -> Request.tryAcquire(permits);
                case "try_at_most" -> Request.tryAcquireAtMost(permits);
                case "reserve" -> Request.reserve(permits, maxWaitMicros);
                default -> Request.peek(permits);
            };
        }
    }

    private Call parse(JsonNode root) throws InvalidRequestException {
        if (!root.isObject()) {
            throw InvalidRequestException.at("", "expected a JSON object");
        }
        for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!CALL_FIELDS.contains(name)) {
                throw InvalidRequestException.at(name, "unknown field; expected " + String.join(", ",
                        new java.util.TreeSet<>(CALL_FIELDS)));
            }
        }
        Call c = new Call();
        if (root.has("targets")) {
            c.targets = targets(root);
        } else {
            c.rule = text(root, "rule");
            c.fingerprint = text(root, "fingerprint");
            c.key = key(text(root, "key"), "key");
        }
        c.op = text(root, "op");
        if (c.targets != null && !Set.of("try", "try_at_most", "reserve", "peek").contains(c.op)) {
            throw InvalidRequestException.at("op", "a call over targets decides one of try, try_at_most, reserve,"
                    + " peek; was \"" + c.op + "\"");
        }
        switch (c.op) {
            case "try", "try_at_most", "reserve", "peek" -> c.permits = number(root, "permits");
            case "release" -> c.lease = number(root, "lease");
            case "reset" -> { }
            case "charge" -> {
                c.permits = number(root, "estimate");
                c.ticket = ticketId(root);
                c.lifetimeMicros = number(root, "lifetime_us");
                if (c.lifetimeMicros < MIN_LIFETIME_US || c.lifetimeMicros > MAX_LIFETIME_US) {
                    throw InvalidRequestException.at("lifetime_us", "expected microseconds in [" + MIN_LIFETIME_US
                            + ", " + MAX_LIFETIME_US + "]; was " + c.lifetimeMicros);
                }
            }
            case "settle" -> {
                c.ticket = ticketId(root);
                c.actual = number(root, "actual");
                try {
                    Ticket.checkActual(c.actual);
                } catch (IllegalArgumentException e) {
                    throw InvalidRequestException.at("actual", e.getMessage());
                }
            }
            default -> throw InvalidRequestException.at("op", "expected one of try, try_at_most, reserve, peek,"
                    + " release, reset, charge, settle; was \"" + c.op + "\"");
        }
        for (String field : List.of("estimate", "ticket", "lifetime_us", "actual")) {
            boolean takes = c.op.equals("charge") ? !field.equals("actual")
                    : c.op.equals("settle") && (field.equals("ticket") || field.equals("actual"));
            if (root.has(field) && !takes) {
                throw InvalidRequestException.at(field, "not used by op " + c.op);
            }
        }
        if (root.has("max_wait_us")) {
            if (!c.op.equals("reserve")) {
                throw InvalidRequestException.at("max_wait_us", "applies to op reserve only");
            }
            long w = number(root, "max_wait_us");
            if (w < -1) {
                throw InvalidRequestException.at("max_wait_us", "expected microseconds >= 0, or -1 for no bound");
            }
            c.maxWaitMicros = w == -1 ? Long.MAX_VALUE : w;
        }
        if (root.has("now_us")) {
            if (!clientClock) {
                throw InvalidRequestException.at("now_us", "this server decides at its own time; a client clock is"
                        + " accepted only by a server started with --clock client");
            }
            long now = number(root, "now_us");
            if (now < 0 || now > 1L << 53) {
                throw InvalidRequestException.at("now_us", "expected microseconds since the epoch in [0, 2^53]; was "
                        + now);
            }
            c.nowMicros = now;
        }
        return c;
    }

    private static final long MIN_LIFETIME_US = Ticket.MIN_LIFETIME.toNanos() / 1_000;
    private static final long MAX_LIFETIME_US = Ticket.MAX_LIFETIME.toNanos() / 1_000;

    private static String ticketId(JsonNode root) throws InvalidRequestException {
        try {
            return Ticket.checkId(text(root, "ticket"));
        } catch (IllegalArgumentException e) {
            throw InvalidRequestException.at("ticket", e.getMessage());
        }
    }

    /** The {@code targets} of a call over several: each <code>{"rule", "fingerprint", "key"}</code>. */
    private static List<String[]> targets(JsonNode root) throws InvalidRequestException {
        for (String single : List.of("rule", "fingerprint", "key")) {
            if (root.has(single)) {
                throw InvalidRequestException.at(single, "a call over targets names its rules and keys in targets");
            }
        }
        JsonNode list = root.get("targets");
        if (!list.isArray() || list.isEmpty()) {
            throw InvalidRequestException.at("targets", "expected a non-empty list of {rule, fingerprint, key}");
        }
        List<String[]> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            JsonNode t = list.get(i);
            String at = "targets[" + i + "]";
            if (!t.isObject()) {
                throw InvalidRequestException.at(at, "expected an object {rule, fingerprint, key}");
            }
            for (Iterator<String> names = t.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                if (!name.equals("rule") && !name.equals("fingerprint") && !name.equals("key")) {
                    throw InvalidRequestException.at(at + "." + name, "unknown field; expected fingerprint, key, rule");
                }
            }
            out.add(new String[] {text(t, "rule", at + ".rule"), text(t, "fingerprint", at + ".fingerprint"),
                    key(text(t, "key", at + ".key"), at + ".key")});
        }
        return out;
    }

    private static String key(String key, String field) throws InvalidRequestException {
        try {
            return RateLimiter.checkKey(key);
        } catch (IllegalArgumentException e) {
            throw InvalidRequestException.at(field, e.getMessage());
        }
    }

    private static String text(JsonNode root, String field) throws InvalidRequestException {
        return text(root, field, field);
    }

    private static String text(JsonNode root, String field, String at) throws InvalidRequestException {
        JsonNode n = root.get(field);
        if (n == null || !n.isTextual()) {
            throw InvalidRequestException.at(at, n == null ? "missing; expected a string" : "expected a string");
        }
        return n.textValue();
    }

    private static long number(JsonNode root, String field) throws InvalidRequestException {
        JsonNode n = root.get(field);
        if (n == null || !n.canConvertToLong() || !n.isIntegralNumber()) {
            throw InvalidRequestException.at(field, n == null ? "missing; expected an integer" : "expected an integer");
        }
        return n.longValue();
    }
}
