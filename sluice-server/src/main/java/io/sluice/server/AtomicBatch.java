package io.sluice.server;

import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.common.ResponseHeadersBuilder;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Store;
import io.sluice.Tier;
import io.sluice.http.RateLimitFields;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@code POST /v1/check/batch} with {@code "atomic": true}: the batch's checks (validated by
 * {@link CheckRequest#atomic}) are one request over all their (rule, key) targets, decided by one
 * {@link Store#decideTogether} call; every result is that one decision.
 *
 * <p>The answer is 200 with the results, and carries the header fields of a single check's answer for that one
 * decision: {@code RateLimit-Policy} of the deciding target's rule, {@code RateLimit} with the decision's limit
 * and remaining permits, and {@code Retry-After} when it was rejected. The deciding target is the first check
 * whose rule holds the decision's limit: the limit with the longest retry-after when rejected, the tightest
 * (fewest remaining) when admitted, so with several keys of one rule the figures are those of the key that
 * decided. The {@code t} of {@code RateLimit} is left out when admitted, as for a rule of several limits: the
 * decision's reset time is that of all the targets together, not of one limit.
 */
final class AtomicBatch {

    private static final String API = "http";

    private final Store store;
    private final ServerMetrics metrics;
    private final StoreErrors storeErrors;

    /** @param store the store the rules are bound to; null refuses atomic batches */
    AtomicBatch(Store store, ServerMetrics metrics, StoreErrors storeErrors) {
        this.store = store;
        this.metrics = metrics;
        this.storeErrors = storeErrors;
    }

    /** Decides the checks together, off the event loop since a remote store blocks. */
    CompletableFuture<HttpResponse> decide(List<CheckRequest.Check> checks, long start, ServiceRequestContext ctx) {
        List<CheckRequest.RuleCheck> ruleChecks = new ArrayList<>(checks.size());
        for (CheckRequest.Check check : checks) {
            ruleChecks.add((CheckRequest.RuleCheck) check);
        }
        long permits = ruleChecks.get(0).permits();
        // Each key under its tier, as RateLimiter.tryAcquireAll decides: a blocked key rejects the batch, an
        // unlimited key needs no store.
        List<Store.Target> targets = new ArrayList<>(checks.size());
        Decision blocked = null;
        Tier unlimited = null;
        for (CheckRequest.RuleCheck c : ruleChecks) {
            Tier tier = c.bound().rule().tierFor(c.key());
            if (tier != null && tier.kind() == Tier.Kind.BLOCKED) {
                blocked = blocked == null ? tier.decide(Request.tryAcquire(permits)) : blocked;
            } else if (tier != null && tier.kind() == Tier.Kind.UNLIMITED) {
                unlimited = tier;
            } else {
                targets.add(new Store.Target(c.bound().rule().ruleFor(c.key()), c.key()));
            }
        }
        Decision storeless = blocked != null ? blocked
                : targets.isEmpty() ? unlimited.decide(Request.tryAcquire(permits)) : null;
        if (store == null) {
            metrics.invalidRequest(API);
            return CompletableFuture.completedFuture(HttpResponses.error(HttpStatus.BAD_REQUEST,
                    "atomic: this server does not decide batches atomically"));
        }
        return CompletableFuture.supplyAsync(() -> {
            try {
                Decision d = storeless != null ? storeless
                        : store.decideTogether(targets, Request.tryAcquire(permits));
                for (CheckRequest.RuleCheck c : ruleChecks) {
                    metrics.decision(API, c.bound().rule().name(), d.allowed() ? ServerMetrics.ALLOWED
                            : ServerMetrics.REJECTED);
                }
                metrics.latency(API, start);
                return response(ruleChecks, d);
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                metrics.invalidRequest(API);
                return HttpResponses.error(HttpStatus.BAD_REQUEST, "atomic: " + describe(e));
            } catch (RuntimeException e) {
                storeErrors.record(API, e);
                return HttpResponses.error(HttpStatus.SERVICE_UNAVAILABLE, "store unavailable: " + describe(e));
            }
        }, ctx.blockingTaskExecutor());
    }

    private static HttpResponse response(List<CheckRequest.RuleCheck> checks, Decision d) {
        String json = Json.decision(new StringBuilder(160), d).toString();
        StringBuilder s = new StringBuilder(16 + checks.size() * (json.length() + 1)).append("{\"results\":[");
        int limits = 0;
        for (int i = 0; i < checks.size(); i++) {
            s.append(i == 0 ? "" : ",").append(json);
            limits += checks.get(i).bound().rule().limits().size();
        }
        s.append("]}");
        ResponseHeadersBuilder headers = ResponseHeaders.builder(HttpStatus.OK).contentType(MediaType.JSON_UTF_8);
        String policy = decider(checks, d).bound().policyField();
        if (policy != null) {
            headers.add(HttpResponses.RATELIMIT_POLICY, policy);
        }
        headers.add(HttpResponses.RATELIMIT, RateLimitFields.rateLimitField(d, limits));
        if (!d.allowed() && d.retryAfterMicros() != Long.MAX_VALUE) {
            headers.add(HttpResponses.RETRY_AFTER, String.valueOf(d.retryAfterSeconds()));
        }
        return HttpResponse.of(headers.build(), HttpData.ofUtf8(s.toString()));
    }

    /** The first check whose rule holds the decision's limit: the target whose figures the decision carries. */
    static CheckRequest.RuleCheck decider(List<CheckRequest.RuleCheck> checks, Decision d) {
        for (CheckRequest.RuleCheck c : checks) {
            if (c.bound().rule().limit(d.limit()) != null) {
                return c;
            }
        }
        return checks.get(0);
    }

    private static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
