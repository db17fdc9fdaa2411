package io.sluice.server;

import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The operations endpoints: liveness ({@code /health}, and {@code /healthcheck} as envoyproxy/ratelimit names
 * it), readiness ({@code /ready}: the store answers), Prometheus metrics ({@code /metrics}) and the rules in
 * force ({@code /v1/rules}).
 */
final class OpsService {

    /** A rule no one uses, to ask the store something that charges nothing. */
    private static final Rule PROBE = Rule.of("sluice:ready", FixedWindow.of(1, Duration.ofSeconds(1)));
    private static final long PROBE_TIMEOUT_MILLIS = 2_000;

    private OpsService() {}

    /** {@code GET /health}: 200 while the process serves requests. */
    static HttpService health() {
        return (ctx, req) -> HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, "{\"status\":\"ok\"}");
    }

    /** {@code GET /healthcheck}: envoyproxy/ratelimit's liveness endpoint, for health checks written for it. */
    static HttpService healthcheck() {
        return (ctx, req) -> HttpResponse.of(HttpStatus.OK, MediaType.PLAIN_TEXT_UTF_8, "OK");
    }

    /**
     * {@code GET /ready}: 200 when the store answers a peek (which charges nothing) within two seconds, else
     * 503 with the reason: a load balancer then stops sending checks this instance could not decide.
     */
    static HttpService ready(Store store) {
        return (ctx, req) -> {
            CompletableFuture<HttpResponse> response;
            try {
                response = store.decideAsync(PROBE, "probe", Request.peek(0))
                        .orTimeout(PROBE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
                        .handle((d, e) -> e == null
                                ? HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, "{\"status\":\"ready\"}")
                                : notReady(e));
            } catch (RuntimeException e) {
                response = CompletableFuture.completedFuture(notReady(e));
            }
            return HttpResponse.of(response);
        };
    }

    private static HttpResponse notReady(Throwable e) {
        Throwable cause = e.getCause() != null && e instanceof java.util.concurrent.CompletionException
                ? e.getCause() : e;
        String reason = cause instanceof java.util.concurrent.TimeoutException
                ? "the store did not answer within " + PROBE_TIMEOUT_MILLIS + " ms" : String.valueOf(cause);
        return HttpResponse.of(HttpStatus.SERVICE_UNAVAILABLE, MediaType.JSON_UTF_8,
                "{\"status\":\"unavailable\",\"error\":" + Json.string(new StringBuilder(), reason) + "}");
    }

    /** {@code GET /metrics}: Prometheus text (or OpenMetrics when the scraper asks for it). */
    static HttpService metrics(ServerMetrics metrics) {
        return (ServiceRequestContext ctx, HttpRequest req) -> {
            String accept = req.headers().get(HttpHeaderNames.ACCEPT);
            String contentType = accept != null && accept.contains("application/openmetrics-text")
                    ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                    : "text/plain; version=0.0.4; charset=utf-8";
            return HttpResponse.of(HttpStatus.OK, MediaType.parse(contentType), metrics.scrape(contentType));
        };
    }

    /**
     * {@code GET /v1/rules}: the rules in force, where they came from, when they were loaded, and the last
     * rejected change if the files are currently invalid.
     */
    static HttpService rules(Supplier<RuleSet> rules, Supplier<String> lastReloadError) {
        return (ctx, req) -> {
            RuleSet r = rules.get();
            StringBuilder s = new StringBuilder(512).append("{\"sources\":[");
            List<String> sources = r.sourceNames();
            for (int i = 0; i < sources.size(); i++) {
                Json.string(s.append(i == 0 ? "" : ","), sources.get(i));
            }
            s.append("],\"loaded_at\":");
            Json.string(s, r.loadedAt().toString());
            s.append(",\"last_reload_error\":");
            Json.string(s, lastReloadError.get());
            s.append(",\"rules\":{");
            boolean first = true;
            for (Map.Entry<String, RuleSet.Bound> e : r.rules().entrySet()) {
                Json.string(s.append(first ? "" : ","), e.getKey()).append(":{\"limits\":[");
                List<Limit> limits = e.getValue().rule().limits();
                for (int i = 0; i < limits.size(); i++) {
                    Limit l = limits.get(i);
                    Json.string(s.append(i == 0 ? "{\"name\":" : ",{\"name\":"), l.name()).append(",\"algorithm\":");
                    Json.string(s, l.algorithm()).append('}');
                }
                s.append("],\"policy\":");
                Json.string(s, e.getValue().policyField()).append('}');
                first = false;
            }
            s.append("},\"envoy_domains\":[");
            first = true;
            for (String domain : r.envoy().domains()) {
                Json.string(s.append(first ? "" : ","), domain);
                first = false;
            }
            s.append("]}");
            return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, s.toString());
        };
    }
}
