package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.common.ResponseHeadersBuilder;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.sluice.Decision;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.http.RateLimitFields;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * {@code POST /v1/check} and {@code POST /v1/check/batch}: a check is decided as the library decides it
 * ({@link RateLimiter}'s operations, {@code acquire} as a reservation that reports its wait instead of
 * sleeping) and answered with the decision as JSON.
 *
 * <p>A single check answers 200 when admitted (and for {@code peek} and {@code release}, which refuse
 * nothing) and 429 when rejected, with the {@code RateLimit-Policy} and {@code RateLimit} header fields and,
 * on a 429, {@code Retry-After} in whole seconds rounded up (absent when no amount of waiting would do). A
 * batch answers 200 with <code>{"results": [...]}</code>, one result per check in order; each check is decided
 * on its own (a batch is not atomic), and a check whose store call failed has <code>{"error": ...}</code> and
 * makes the status 503. With {@code "atomic": true} the batch's checks (each a {@code try}, all for the same
 * permits) are decided as one request over all their (rule, key) targets, all or nothing
 * ({@link AtomicBatch}), and every result is that one decision, with the header fields of a single check's
 * answer; targets the store cannot decide together (on Redis Cluster, keys in different slots) are a 400. Invalid input is a 400 with <code>{"error": ...}</code> naming the field, before
 * anything is charged; a store failure of a single check is a 503.
 */
final class CheckService implements HttpService {

    private static final String API = "http";

    private final Supplier<RuleSet> rules;
    private final CheckRequest parser;
    private final EnvoyDecider envoy;
    private final ServerMetrics metrics;
    private final StoreErrors storeErrors;
    private final boolean batch;
    private final int maxBodyBytes;
    private final AtomicBatch atomicBatch;

    CheckService(Supplier<RuleSet> rules, CheckRequest parser, EnvoyDecider envoy, ServerMetrics metrics,
                 StoreErrors storeErrors, boolean batch, int maxBodyBytes) {
        this(rules, parser, envoy, metrics, storeErrors, batch, maxBodyBytes, null);
    }

    /** @param store the store the rules are bound to, for atomic batches; null refuses them */
    CheckService(Supplier<RuleSet> rules, CheckRequest parser, EnvoyDecider envoy, ServerMetrics metrics,
                 StoreErrors storeErrors, boolean batch, int maxBodyBytes, Store store) {
        this.atomicBatch = new AtomicBatch(store, metrics, storeErrors);
        this.rules = rules;
        this.parser = parser;
        this.envoy = envoy;
        this.metrics = metrics;
        this.storeErrors = storeErrors;
        this.batch = batch;
        this.maxBodyBytes = maxBodyBytes;
    }

    /** One decided check: its JSON, and what the single-check response's status and headers need. */
    private record Outcome(String json, boolean rejected, String policyField, String rateLimitField,
                           long retryAfterSeconds, Throwable error) {}

    @Override
    public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
        long start = System.nanoTime();
        return HttpResponse.of(req.aggregate().thenCompose(body -> respond(body, start, ctx)).exceptionally(e -> {
            metrics.invalidRequest(API);
            return HttpResponses.unreadable(e, maxBodyBytes);
        }));
    }

    private CompletableFuture<HttpResponse> respond(AggregatedHttpRequest body, long start,
                                                    ServiceRequestContext ctx) {
        RuleSet snapshot = rules.get();
        List<CheckRequest.Check> checks;
        boolean atomic;
        try {
            if (batch) {
                JsonNode root = CheckRequest.parse(body.content().array());
                checks = parser.batch(root, snapshot);
                atomic = CheckRequest.atomic(root, checks);
            } else {
                checks = List.of(parser.single(body.content().array(), snapshot));
                atomic = false;
            }
        } catch (InvalidRequestException e) {
            metrics.invalidRequest(API);
            return CompletableFuture.completedFuture(HttpResponses.error(HttpStatus.BAD_REQUEST, e.getMessage()));
        }
        if (atomic) {
            return atomicBatch.decide(checks, start, ctx);
        }
        if (!batch) {
            // One check: its outcome straight to the response, without a batch's list, array and joined future.
            return decide(snapshot, checks.get(0)).thenApply(outcome -> {
                metrics.latency(API, start);
                return singleResponse(outcome);
            });
        }
        List<CompletableFuture<Outcome>> outcomes = new ArrayList<>(checks.size());
        for (CheckRequest.Check check : checks) {
            outcomes.add(decide(snapshot, check));
        }
        return CompletableFuture.allOf(outcomes.toArray(new CompletableFuture<?>[0])).handle((x, ignored) -> {
            metrics.latency(API, start);
            return batchResponse(outcomes.stream().map(CompletableFuture::join).toList());
        });
    }

    private CompletableFuture<Outcome> decide(RuleSet snapshot, CheckRequest.Check check) {
        CompletableFuture<Outcome> outcome;
        try {
            outcome = check instanceof CheckRequest.RuleCheck r ? decideRule(r) : decideDescriptor(snapshot,
                    (CheckRequest.DescriptorCheck) check);
        } catch (RuntimeException e) {
            outcome = CompletableFuture.failedFuture(e);
        }
        return outcome.exceptionally(e -> {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            storeErrors.record(API, cause);
            return new Outcome(null, false, null, null, 0, cause);
        });
    }

    private CompletableFuture<Outcome> decideRule(CheckRequest.RuleCheck c) {
        RateLimiter limiter = c.bound().limiter();
        String rule = c.bound().rule().name();
        CompletableFuture<Decision> decision;
        switch (c.op()) {
            case RELEASE:
                return limiter.releaseAsync(c.key(), c.lease()).thenApply(released -> {
                    metrics.decision(API, rule, released ? ServerMetrics.RELEASED : ServerMetrics.NOT_RELEASED);
                    return new Outcome(Json.released(new StringBuilder(), released).toString(), false, null, null,
                            0, null);
                });
            case TRY:
                decision = limiter.tryAcquireAsync(c.key(), c.permits());
                break;
            case TRY_AT_MOST:
                decision = limiter.tryAcquireAtMostAsync(c.key(), c.permits());
                break;
            case ACQUIRE:
                decision = limiter.reserveAsync(c.key(), c.permits(), c.maxWait());
                break;
            default:
                decision = limiter.peekAsync(c.key(), c.permits());
                break;
        }
        boolean counts = c.op() != CheckRequest.Op.PEEK;
        return decision.thenApply(d -> {
            if (counts) {
                String outcome = !d.allowed() ? ServerMetrics.REJECTED
                        // Let through although a shadow limit would have rejected it: "shadow", as Envoy's shadow_mode.
                        : d.shadowRejected() ? ServerMetrics.SHADOW : ServerMetrics.ALLOWED;
                metrics.decision(API, rule, outcome);
                if (d.allowed()) {
                    metrics.admitted(API, rule, d.remaining(), c.bound().quotas().getOrDefault(d.limit(), 0L));
                }
                if (d.tier() != null) {
                    metrics.tierDecision(API, rule, d.tier(), outcome);
                }
                io.sluice.Lockout lockout = c.bound().rule().lockout();
                if (lockout != null && lockout.began(d)) {
                    metrics.lockout(API, rule);
                }
            }
            boolean rejected = counts && !d.allowed();
            String policyField = c.bound().policyField();
            String rateLimitField;
            if (d.tier() == null) {
                rateLimitField = RateLimitFields.rateLimitField(d, c.bound().rule().limits().size());
            } else {
                // The tier's limits are what the key gets; an unlimited or blocked tier advertises none.
                Rule tierRule = c.bound().rule().ruleFor(c.key());
                policyField = tierRule == null ? null : RateLimitFields.policyField(tierRule);
                rateLimitField = tierRule == null ? null : RateLimitFields.rateLimitField(d, tierRule.limits().size());
            }
            return new Outcome(Json.decision(new StringBuilder(160), d).toString(), rejected, policyField,
                    rateLimitField, d.retryAfterMicros() == Long.MAX_VALUE ? -1 : d.retryAfterSeconds(), null);
        });
    }

    private CompletableFuture<Outcome> decideDescriptor(RuleSet snapshot, CheckRequest.DescriptorCheck c) {
        boolean peek = c.op() == CheckRequest.Op.PEEK;
        return envoy.decide(snapshot, c.domain(), List.of(c.descriptor()), peek, API).thenApply(statuses -> {
            EnvoyDecider.Status s = statuses.get(0);
            if (!s.limited()) {
                return new Outcome(Json.unlimited(new StringBuilder(), c.descriptor().hits()).toString(), false, null,
                        null, 0, null);
            }
            String json;
            Decision d = s.decision();
            if (d != null && (d.allowed() || s.over())) {
                json = Json.decision(new StringBuilder(160), d).toString();
            } else if (d != null) {
                // Over the limit but let through by shadow_mode: reported as admitted, as envoy reports it.
                json = Json.decision(new StringBuilder(160), new Decision(true, c.descriptor().hits(), d.remaining(),
                        0, d.resetAfterMicros(), 0, d.limit(), Decision.NO_LEASE)).toString();
            } else {
                // requests_per_unit: 0: nothing is ever admitted, so there is no time to retry after.
                json = Json.decision(new StringBuilder(160), new Decision(!s.over(), s.over() ? 0 : c.descriptor()
                        .hits(), 0, s.over() ? Long.MAX_VALUE : 0, 0, 0, s.limitName(), Decision.NO_LEASE)).toString();
            }
            boolean rejected = s.over() && !peek;
            return new Outcome(json, rejected, EnvoyDecider.policyField(statuses),
                    RateLimitFields.rateLimitItem(s.limitName(), s.remaining(), s.resetSeconds()),
                    s.requestsPerUnit() == 0 ? -1 : s.resetSeconds(), null);
        });
    }

    private static HttpResponse singleResponse(Outcome o) {
        if (o.error() != null) {
            return HttpResponses.error(HttpStatus.SERVICE_UNAVAILABLE, "store unavailable: " + describe(o.error()));
        }
        ResponseHeadersBuilder headers = ResponseHeaders.builder(o.rejected() ? HttpStatus.TOO_MANY_REQUESTS
                : HttpStatus.OK).contentType(MediaType.JSON_UTF_8);
        if (o.policyField() != null) {
            headers.add(HttpResponses.RATELIMIT_POLICY, o.policyField());
        }
        if (o.rateLimitField() != null) {
            headers.add(HttpResponses.RATELIMIT, o.rateLimitField());
        }
        if (o.rejected() && o.retryAfterSeconds() >= 0) {
            headers.add(HttpResponses.RETRY_AFTER, String.valueOf(o.retryAfterSeconds()));
        }
        return HttpResponse.of(headers.build(), HttpData.ofUtf8(o.json()));
    }

    private static HttpResponse batchResponse(List<Outcome> outcomes) {
        StringBuilder s = new StringBuilder(64 + outcomes.size() * 170).append("{\"results\":[");
        boolean failed = false;
        for (int i = 0; i < outcomes.size(); i++) {
            Outcome o = outcomes.get(i);
            s.append(i == 0 ? "" : ",");
            if (o.error() != null) {
                failed = true;
                s.append(Json.error("store unavailable: " + describe(o.error())));
            } else {
                s.append(o.json());
            }
        }
        s.append("]}");
        return HttpResponse.of(failed ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.OK, MediaType.JSON_UTF_8,
                s.toString());
    }

    private static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
