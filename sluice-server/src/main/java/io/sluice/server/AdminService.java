package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.QueryParams;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.Tier;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * The operator endpoints, behind the same bearer token as the API:
 *
 * <ul>
 * <li>{@code POST /v1/admin/state}, body <code>{"rule" (or "limit"), "key", "domain", "permits"}</code>: what
 * the key has now (remaining, reset) and what a request of {@code permits} (default 1) would get (allowed,
 * retry-after), from the store's peeks, which charge nothing and are not counted as decisions anywhere (not in
 * {@code sluice_decisions_total}, not among the hottest keys).</li>
 * <li>{@code POST /v1/admin/reset}, body <code>{"rule" (or "limit"), "key", "domain"}</code>: forgets the key's
 * state under every limit of the rule ({@link Store#reset}), so its next request is a new key's.</li>
 * <li>{@code GET /v1/admin/top?n=N}: the {@code N} (default 10) keys decided most often and rejected most often
 * in the last minute ({@link HotKeys}).</li>
 * </ul>
 *
 * <p>Keys are addressed as checks address them, and validated alike (400 naming the field); rules are those of
 * the server's rule files. A store that fails is a 503 <code>{"error": "store unavailable: ..."}</code>.
 */
final class AdminService {

    static final String API = "admin";
    /** Default length of each list of {@code /v1/admin/top}. */
    static final int DEFAULT_TOP = 10;

    private final Supplier<RuleSet> rules;
    private final CheckRequest parser;
    private final Settings settings;
    private final EnvoyDecider envoy;
    private final Store store;
    private final HotKeys hotKeys;
    private final ServerMetrics metrics;
    private final StoreErrors storeErrors;
    private final int maxBodyBytes;

    AdminService(Supplier<RuleSet> rules, CheckRequest parser, Settings settings, EnvoyDecider envoy, Store store,
                 HotKeys hotKeys, ServerMetrics metrics, StoreErrors storeErrors, int maxBodyBytes) {
        this.rules = rules;
        this.parser = parser;
        this.settings = settings;
        this.envoy = envoy;
        this.store = store;
        this.hotKeys = hotKeys;
        this.metrics = metrics;
        this.storeErrors = storeErrors;
        this.maxBodyBytes = maxBodyBytes;
    }

    /** {@code POST /v1/admin/state}. */
    HttpService state() {
        return (ctx, req) -> HttpResponse.of(req.aggregate().thenCompose(body -> {
            AdminAddress a;
            try {
                a = address(body, true);
            } catch (InvalidRequestException e) {
                return invalid(e);
            }
            Rule rule = a.rule();
            // The key's state is where its checks keep it: under its tier's rule when a tier applies to it.
            Tier tier = rule.tierFor(a.scoped());
            Rule decides = rule.ruleFor(a.scoped());
            CompletableFuture<HttpResponse> answer;
            try {
                // Two peeks: one of 0 permits for what the key has now (a peek of n reports what would be left
                // after n, as the request would), one of n for whether and when a request of n would pass.
                CompletableFuture<Decision> now = peek(tier, decides, a.scoped(), 0);
                CompletableFuture<Decision> asked = a.permits() == 0 ? now : peek(tier, decides, a.scoped(),
                        a.permits());
                answer = now.thenCombine(asked, (n, d) -> HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8,
                        state(a, tier, n, d)));
            } catch (RuntimeException e) {
                answer = CompletableFuture.failedFuture(e);
            }
            return answer.exceptionally(this::failed);
        }).exceptionally(e -> HttpResponses.unreadable(e, maxBodyBytes)));
    }

    /** {@code POST /v1/admin/reset}. */
    HttpService reset() {
        return (ServiceRequestContext ctx, com.linecorp.armeria.common.HttpRequest req) ->
                HttpResponse.of(req.aggregate().thenCompose(body -> {
                    AdminAddress a;
                    try {
                        a = address(body, false);
                    } catch (InvalidRequestException e) {
                        return invalid(e);
                    }
                    Rule rule = a.rule();
                    // A Redis store's reset blocks until Redis answers: not on an event loop.
                    return CompletableFuture.supplyAsync(() -> {
                        // The rule's own limits and every tier's, as RateLimiter.reset: a key that moved tiers too.
                        for (Rule r : rule.stateRules()) {
                            store.reset(r, a.scoped());
                        }
                        StringBuilder s = new StringBuilder(96).append("{\"reset\":true,");
                        return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8,
                                addressed(s, a).append('}').toString());
                    }, ctx.blockingTaskExecutor()).exceptionally(this::failed);
                }).exceptionally(e -> HttpResponses.unreadable(e, maxBodyBytes)));
    }

    /** {@code GET /v1/admin/top}. */
    HttpService top() {
        return (ctx, req) -> {
            int n;
            try {
                n = topCount(ctx.queryParams());
            } catch (InvalidRequestException e) {
                metrics.invalidRequest(API);
                return HttpResponses.error(HttpStatus.BAD_REQUEST, e.getMessage());
            }
            HotKeys.Report r = hotKeys.report(n);
            StringBuilder s = new StringBuilder(256 + 2 * n * 96);
            s.append("{\"window_seconds\":").append(HotKeys.SLOTS * HotKeys.SLOT_SECONDS)
                    .append(",\"decisions\":").append(r.decisions())
                    .append(",\"rejections\":").append(r.rejections())
                    .append(",\"hottest\":");
            entries(s, r.hottest());
            s.append(",\"most_rejected\":");
            entries(s, r.mostRejected());
            return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, s.append('}').toString());
        };
    }

    private int topCount(QueryParams params) throws InvalidRequestException {
        for (String name : params.names()) {
            if (!name.equals("n")) {
                throw InvalidRequestException.at(name, "unknown query parameter; expected n, the length of each list");
            }
        }
        List<String> values = params.getAll("n");
        if (values.isEmpty()) {
            return DEFAULT_TOP;
        }
        String at = "n";
        if (values.size() > 1) {
            throw InvalidRequestException.at(at, "given " + values.size() + " times; give it once");
        }
        String v = values.get(0);
        int max = hotKeys.capacity();
        String expected = "expected an integer in [1, " + max + "]";
        if (v.isEmpty() || v.length() > 9 || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw InvalidRequestException.at(at, expected + "; was " + Json.string(new StringBuilder(),
                    v.length() > 32 ? v.substring(0, 29) + "..." : v));
        }
        int n = Integer.parseInt(v);
        if (n < 1 || n > max) {
            throw InvalidRequestException.at(at, expected + "; was " + n);
        }
        return n;
    }

    private AdminAddress address(AggregatedHttpRequest body, boolean withPermits)
            throws InvalidRequestException {
        JsonNode root = CheckRequest.parse(body.content().array());
        return AdminAddress.parse(root, rules.get(), withPermits, parser, settings, envoy);
    }

    private CompletableFuture<HttpResponse> invalid(InvalidRequestException e) {
        metrics.invalidRequest(API);
        return CompletableFuture.completedFuture(HttpResponses.error(HttpStatus.BAD_REQUEST, e.getMessage()));
    }

    private HttpResponse failed(Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        storeErrors.record(API, cause);
        return HttpResponses.error(HttpStatus.SERVICE_UNAVAILABLE, "store unavailable: "
                + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage()));
    }

    /**
     * The state answer: the address; what the key has now ({@code remaining}, {@code reset_after_ms} and the
     * {@code limit} with the fewest permits left, from a peek of 0); and what a request of {@code permits} would
     * get ({@code allowed}, {@code retry_after_ms}, and when it would be rejected, {@code rejected_by}).
     */
    private CompletableFuture<Decision> peek(Tier tier, Rule decides, String key, long permits) {
        // An unlimited or blocked tier keeps no state and asks no store: it answers as a check of it would.
        return decides == null ? CompletableFuture.completedFuture(tier.decide(Request.peek(permits)))
                : store.decideAsync(decides, key, Request.peek(permits));
    }

    private static String state(AdminAddress a, Tier tier, Decision now, Decision asked) {
        StringBuilder s = new StringBuilder(256).append('{');
        addressed(s, a);
        if (tier != null) {
            s.append(",\"tier\":");
            Json.string(s, tier.name());
        }
        s.append(",\"remaining\":").append(now.remaining());
        s.append(",\"reset_after_ms\":");
        Json.millis(s, now.resetAfterMicros());
        s.append(",\"limit\":");
        Json.string(s, now.limit());
        s.append(",\"permits\":").append(a.permits());
        s.append(",\"allowed\":").append(asked.allowed());
        s.append(",\"retry_after_ms\":");
        Json.millis(s, asked.retryAfterMicros());
        if (!asked.allowed()) {
            s.append(",\"rejected_by\":");
            Json.string(s, asked.limit());
        }
        Decision.Source source = asked.source() != Decision.Source.STORE ? asked.source() : now.source();
        if (source != Decision.Source.STORE) {
            s.append(",\"source\":\"").append(source.name().toLowerCase(java.util.Locale.ROOT)).append('"');
        }
        return s.append('}').toString();
    }

    /**
     * {@code "rule":...,"domain":...,"key":...}, the domain only when there is one; for a descriptor, its entries
     * as given before the key (the counter's key on the store).
     */
    private static StringBuilder addressed(StringBuilder s, AdminAddress a) {
        s.append("\"rule\":");
        Json.string(s, a.rule().name());
        if (a.domain() != null) {
            s.append(",\"domain\":");
            Json.string(s, a.domain());
        }
        if (a.descriptor() != null) {
            s.append(",\"descriptor\":[");
            for (int i = 0; i < a.descriptor().size(); i++) {
                s.append(i == 0 ? "{\"key\":" : ",{\"key\":");
                Json.string(s, a.descriptor().get(i).key()).append(",\"value\":");
                Json.string(s, a.descriptor().get(i).value()).append('}');
            }
            s.append(']');
        }
        s.append(",\"key\":");
        return Json.string(s, a.key());
    }

    /**
     * A list of the report. A key counted in a domain is shown as the domain and the key, split where checks
     * join them ({@link CheckRequest#DOMAIN_SEPARATOR}).
     */
    private static void entries(StringBuilder s, List<HotKeys.Entry> entries) {
        s.append('[');
        for (int i = 0; i < entries.size(); i++) {
            HotKeys.Entry e = entries.get(i);
            s.append(i == 0 ? "{" : ",{").append("\"rule\":");
            Json.string(s, e.rule());
            int cut = e.key().indexOf(CheckRequest.DOMAIN_SEPARATOR);
            if (cut >= 0) {
                s.append(",\"domain\":");
                Json.string(s, e.key().substring(0, cut));
            }
            s.append(",\"key\":");
            Json.string(s, cut >= 0 ? e.key().substring(cut + 1) : e.key());
            s.append(",\"count\":").append(e.count()).append(",\"error\":").append(e.error()).append('}');
        }
        s.append(']');
    }
}
