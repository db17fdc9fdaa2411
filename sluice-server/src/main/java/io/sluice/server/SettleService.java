package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.common.ResponseHeadersBuilder;
import com.linecorp.armeria.server.HttpService;
import io.sluice.Charge;
import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Settlement;
import io.sluice.Ticket;
import io.sluice.http.RateLimitFields;
import java.time.Duration;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@code POST /v1/charge} and {@code POST /v1/settle}: estimated charges settled later
 * (docs/reference/settle.md) over HTTP, as {@link RateLimiter#tryCharge} and {@link RateLimiter#settle} do them
 * in process. A charge is answered like a {@code try} of {@code /v1/check} (200 or 429, the same decision and
 * header fields) plus, when admitted, the {@link HttpTicket} to send back; a settlement answers
 * <code>{"settled", "estimate", "actual", "refunded", "extra"}</code>, 200 whether or not it found the ticket (a
 * second settlement finds none: that is the idempotency).
 *
 * <p>Invalid input is a 400 naming the field, before anything is charged; a rule with a limit that cannot settle
 * (or a mode that cannot) is a 422 with the store's reason, also before anything is charged; a store failure is
 * a 503. Both count in the server's metrics: a charge as a decision of the {@code http} API, a settlement in
 * {@code sluice_settlements_total}.
 */
final class SettleService {

    private static final String API = "http";
    private static final Set<String> CHARGE_FIELDS = Set.of("rule", "limit", "key", "domain", "estimate",
            "lifetime_ms");
    private static final Set<String> SETTLE_FIELDS = Set.of("ticket", "actual");
    private static final long MAX_LIFETIME_MS = Ticket.MAX_LIFETIME.toMillis();

    private final Supplier<RuleSet> rules;
    private final CheckRequest parser;
    private final ServerMetrics metrics;
    private final StoreErrors storeErrors;
    private final int maxBodyBytes;

    SettleService(Supplier<RuleSet> rules, CheckRequest parser, ServerMetrics metrics, StoreErrors storeErrors,
                  int maxBodyBytes) {
        this.rules = rules;
        this.parser = parser;
        this.metrics = metrics;
        this.storeErrors = storeErrors;
        this.maxBodyBytes = maxBodyBytes;
    }

    /** A validated charge: the limiter addressed, the ticket it will make (all but the id), the lifetime. */
    private record Charging(RuleSet.Bound bound, HttpTicket ticket, Duration lifetime) {}

    /** {@code POST /v1/charge}. */
    HttpService charge() {
        return serve(this::charge);
    }

    /** {@code POST /v1/settle}. */
    HttpService settle() {
        return serve(this::settle);
    }

    private HttpService serve(Function<byte[], CompletableFuture<HttpResponse>> respond) {
        return (ctx, req) -> {
            long start = System.nanoTime();
            return HttpResponse.of(req.aggregate().thenCompose(body -> respond.apply(body.content().array())
                    .whenComplete((r, e) -> metrics.latency(API, start))).exceptionally(e -> {
                        metrics.invalidRequest(API);
                        return HttpResponses.unreadable(e, maxBodyBytes);
                    }));
        };
    }

    private CompletableFuture<HttpResponse> charge(byte[] body) {
        Charging c;
        try {
            c = parseCharge(CheckRequest.parse(body), rules.get());
        } catch (InvalidRequestException e) {
            return invalid(e);
        }
        CompletableFuture<Charge> charged;
        try {
            charged = c.bound().limiter().tryChargeAsync(c.ticket().scopedKey(), c.ticket().estimate(), c.lifetime());
        } catch (RuntimeException e) {
            charged = CompletableFuture.failedFuture(e);
        }
        return charged.handle((charge, error) -> error != null ? failed(error) : charged(c, charge));
    }

    private Charging parseCharge(JsonNode root, RuleSet snapshot) throws InvalidRequestException {
        if (!root.isObject()) {
            throw InvalidRequestException.at("", "expected a JSON object {rule, key, estimate}; was "
                    + CheckRequest.describe(root));
        }
        for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!CHARGE_FIELDS.contains(name)) {
                throw InvalidRequestException.at(name, "unknown field; a charge has rule (or limit), key, estimate,"
                        + " lifetime_ms and domain");
            }
        }
        if (root.has("rule") == root.has("limit")) {
            throw InvalidRequestException.at("", "give exactly one of \"rule\" and \"limit\"");
        }
        boolean byLimit = root.has("limit");
        RuleSet.Bound bound = byLimit ? CheckRequest.limit(root.get("limit"), "limit", snapshot)
                : CheckRequest.rule(root.get("rule"), "rule", snapshot);
        String domain = root.has("domain") ? CheckRequest.domain(root.get("domain"), "domain") : null;
        String key = parser.key(root.get("key"), "key");
        String scoped = domain == null ? key : domain + CheckRequest.DOMAIN_SEPARATOR + key;
        JsonNode estimateNode = root.get("estimate");
        if (estimateNode == null) {
            throw InvalidRequestException.at("estimate", "required: the permits to charge now, e.g. a prompt's"
                    + " tokens plus its max_tokens");
        }
        long estimate = CheckRequest.permits(estimateNode, "estimate", CheckRequest.Op.TRY, bound, scoped);
        Duration lifetime = root.has("lifetime_ms")
                ? Duration.ofMillis(CheckRequest.integer(root.get("lifetime_ms"), "lifetime_ms", 1, MAX_LIFETIME_MS))
                : Ticket.DEFAULT_LIFETIME;
        String name = byLimit ? root.get("limit").textValue() : root.get("rule").textValue();
        // The id is the limiter's (drawn when the charge is made); the ticket here holds the rest.
        return new Charging(bound, new HttpTicket(byLimit, name, domain, key, estimate, null), lifetime);
    }

    private HttpResponse charged(Charging c, Charge charge) {
        Decision d = charge.decision();
        String rule = c.bound().rule().name();
        String outcome = !d.allowed() ? ServerMetrics.REJECTED
                : d.shadowRejected() ? ServerMetrics.SHADOW : ServerMetrics.ALLOWED;
        metrics.decision(API, rule, outcome);
        if (d.tier() != null) {
            metrics.tierDecision(API, rule, d.tier(), outcome);
        }
        io.sluice.Lockout lockout = c.bound().rule().lockout();
        if (lockout != null && lockout.began(d)) {
            metrics.lockout(API, rule);
        }
        StringBuilder json = Json.decision(new StringBuilder(256), d);
        if (charge.allowed()) {
            HttpTicket t = c.ticket();
            String ticket = new HttpTicket(t.byLimit(), t.name(), t.domain(), t.key(), t.estimate(),
                    charge.ticket().id()).encode();
            json.setLength(json.length() - 1);
            Json.string(json.append(",\"ticket\":"), ticket).append('}');
        }
        ResponseHeadersBuilder headers = ResponseHeaders.builder(d.allowed() ? HttpStatus.OK
                : HttpStatus.TOO_MANY_REQUESTS).contentType(MediaType.JSON_UTF_8);
        // The header fields of a /v1/check try: the tier's limits when a tier decided (none for an unlimited one).
        Rule decides = d.tier() == null ? c.bound().rule() : c.bound().rule().ruleFor(c.ticket().scopedKey());
        String policy = d.tier() == null ? c.bound().policyField()
                : decides == null ? null : RateLimitFields.policyField(decides);
        if (policy != null) {
            headers.add("ratelimit-policy", policy);
        }
        if (decides != null) {
            headers.add("ratelimit", RateLimitFields.rateLimitField(d, decides.limits().size()));
        }
        if (!d.allowed() && d.retryAfterMicros() != Long.MAX_VALUE) {
            headers.add("retry-after", String.valueOf(d.retryAfterSeconds()));
        }
        return HttpResponse.of(headers.build(), HttpData.ofUtf8(json.toString()));
    }

    private CompletableFuture<HttpResponse> settle(byte[] body) {
        RuleSet.Bound bound;
        Ticket ticket;
        long actual;
        try {
            JsonNode root = CheckRequest.parse(body);
            if (!root.isObject()) {
                throw InvalidRequestException.at("", "expected a JSON object {ticket, actual}; was "
                        + CheckRequest.describe(root));
            }
            for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                if (!SETTLE_FIELDS.contains(name)) {
                    throw InvalidRequestException.at(name, "unknown field; a settlement has ticket and actual");
                }
            }
            JsonNode text = root.get("ticket");
            if (text == null) {
                throw InvalidRequestException.at("ticket", "required: the ticket POST /v1/charge answered");
            }
            HttpTicket t = HttpTicket.decode(CheckRequest.string(text, "ticket"), "ticket", parser);
            if (!root.has("actual")) {
                throw InvalidRequestException.at("actual", "required: the permits actually used, 0 or more");
            }
            actual = CheckRequest.integer(root.get("actual"), "actual", 0, Limit.MAX_COUNT);
            RuleSet snapshot = rules.get();
            bound = t.byLimit() ? snapshot.limit(t.name()) : snapshot.rule(t.name());
            if (bound == null) {
                throw InvalidRequestException.at("ticket", "its " + (t.byLimit() ? "limit" : "rule") + " \""
                        + t.name() + "\" is not defined by the rules in force (removed by a reload?); the charge"
                        + " stays at its estimate until the ticket expires");
            }
            ticket = new Ticket(t.id(), t.scopedKey(), t.estimate());
        } catch (InvalidRequestException e) {
            return invalid(e);
        }
        CompletableFuture<Settlement> settled;
        try {
            settled = bound.limiter().settleAsync(ticket, actual);
        } catch (RuntimeException e) {
            settled = CompletableFuture.failedFuture(e);
        }
        String rule = bound.rule().name();
        return settled.handle((s, error) -> {
            if (error != null) {
                return failed(error);
            }
            metrics.settlement(API, rule, s.settled());
            return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, settlement(s));
        });
    }

    /** A settlement: <code>{"settled", "estimate", "actual", "refunded", "extra"}</code>, all 0 when not settled. */
    static String settlement(Settlement s) {
        return "{\"settled\":" + s.settled() + ",\"estimate\":" + s.estimate() + ",\"actual\":" + s.actual()
                + ",\"refunded\":" + s.refunded() + ",\"extra\":" + s.extra() + "}";
    }

    private CompletableFuture<HttpResponse> invalid(InvalidRequestException e) {
        metrics.invalidRequest(API);
        return CompletableFuture.completedFuture(HttpResponses.error(HttpStatus.BAD_REQUEST, e.getMessage()));
    }

    /**
     * A refusal of the store as the client's problem (a rule that cannot settle: 422), anything else as the
     * store's (503, as {@code /v1/check} answers a failed store).
     */
    private HttpResponse failed(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof UnsupportedOperationException) {
            metrics.invalidRequest(API);
            return HttpResponses.error(HttpStatus.UNPROCESSABLE_ENTITY, cause.getMessage());
        }
        if (cause instanceof IllegalArgumentException) {
            metrics.invalidRequest(API);
            return HttpResponses.error(HttpStatus.BAD_REQUEST, cause.getMessage());
        }
        storeErrors.record(API, cause);
        return HttpResponses.error(HttpStatus.SERVICE_UNAVAILABLE, "store unavailable: "
                + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage()));
    }
}
