package io.sluice.spring.boot.actuate;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.http.RateLimitFields;
import io.sluice.spring.boot.RateLimiterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code sluice} Actuator endpoint: {@code GET /actuator/sluice} lists the rules with their limits, mode,
 * failure policy and advertised policy; {@code GET /actuator/sluice/{rule}/{key}} shows one key's state as a
 * peek (which charges nothing): allowed, remaining, retry-after and reset-after. Read-only. Expose it with
 * {@code management.endpoints.web.exposure.include=sluice} (keys may be user names: protect it as you would
 * any endpoint that reads them).
 */
@Endpoint(id = "sluice")
public class SluiceEndpoint {

    private final RateLimiterRegistry registry;

    public SluiceEndpoint(RateLimiterRegistry registry) {
        this.registry = registry;
    }

    @ReadOperation
    public Map<String, Object> rules() {
        Map<String, Object> rules = new LinkedHashMap<>();
        registry.limiters().forEach((name, limiter) -> rules.put(name, describe(limiter.rule())));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("store", registry.store().toString());
        out.put("rules", rules);
        return out;
    }

    /** One key's state under a rule, or null (404) for an unknown rule. */
    @ReadOperation
    public Map<String, Object> key(@Selector String rule, @Selector String key) {
        RateLimiter limiter = registry.find(rule).orElse(null);
        if (limiter == null) {
            return null;
        }
        Decision d = limiter.peek(RateLimiter.checkKey(key), 0);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("rule", rule);
        out.put("key", key);
        out.put("allowed", d.allowed());
        out.put("remaining", d.remaining());
        out.put("limit", d.limit());
        out.put("retryAfterMicros", d.retryAfterMicros() == Long.MAX_VALUE ? null : d.retryAfterMicros());
        out.put("resetAfterMicros", d.resetAfterMicros());
        out.put("decidedBy", d.source().name().toLowerCase(java.util.Locale.ROOT));
        return out;
    }

    private static Map<String, Object> describe(Rule rule) {
        List<String> limits = new ArrayList<>();
        for (Limit l : rule.limits()) {
            limits.add(l.toString());
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("limits", limits);
        out.put("mode", rule.mode().toString());
        out.put("onFailure", rule.failurePolicy().toString());
        out.put("policy", RateLimitFields.policyField(rule));
        return out;
    }
}
