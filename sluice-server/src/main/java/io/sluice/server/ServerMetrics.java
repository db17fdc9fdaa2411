package io.sluice.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server's Prometheus metrics. Labels are bounded by the configuration, never by traffic: {@code rule} is
 * a configured rule (or envoy descriptor path), {@code api} one of {@code http}, {@code grpc}, {@code json};
 * keys and domains sent by clients never become labels.
 *
 * <ul>
 *   <li>{@code sluice_decisions_total{api,rule,outcome}}: {@code allowed}, {@code rejected}, {@code shadow}
 *       (over the limit but let through by {@code shadow_mode}, or by a rule's shadow limit), {@code unlimited}, {@code unmatched},
 *       {@code released}, {@code not_released}
 *   <li>{@code sluice_tier_decisions_total{api,rule,tier,outcome}}: the decisions above that a tier of the rule
 *       took ({@code allowed}, {@code shadow}, {@code rejected}), by tier name
 *   <li>{@code sluice_lockouts_total{api,rule}}: lockouts that began (keys locked out by their rejections);
 *       the rejections during a lockout are {@code rejected} decisions above
 *   <li>{@code sluice_near_limit_total{api,rule}}: admitted with more than 80% of the quota used (envoy's
 *       {@code near_limit})
 *   <li>{@code sluice_envoy_<stat>_total{domain,key}}: envoyproxy/ratelimit's per-descriptor statistics
 *       ({@link #envoyHits}); {@code key} is bounded by the configuration except where a limit opts into
 *       request values ({@code detailed_metric}, {@code value_to_metric}), as in envoy
 *   <li>{@code outcome} of {@code sluice_decisions_total} is also {@code fail_open}, {@code fail_closed} or
 *       {@code local_fallback} when an envoy limit's {@code on_failure} decided because the store failed
 *   <li>{@code sluice_check_seconds{api}}: latency of a check request, a histogram
 *   <li>{@code sluice_store_batch_calls}: remote-store calls per {@code POST /v1/store/calls} request (count:
 *       requests, sum: calls)
 *   <li>{@code sluice_store_errors_total{api}}, {@code sluice_invalid_requests_total{api}},
 *       {@code sluice_unauthorized_total{api}}
 *   <li>{@code sluice_rule_reloads_total{result}} ({@code applied}, {@code rejected}), {@code sluice_rules}
 *   <li>Armeria's own request and connection metrics, and JVM memory, threads, CPU and uptime
 * </ul>
 */
final class ServerMetrics {

    /** Outcomes of {@code sluice_decisions_total}. */
    static final String ALLOWED = "allowed";
    static final String REJECTED = "rejected";
    static final String SHADOW = "shadow";
    static final String UNLIMITED = "unlimited";
    static final String UNMATCHED = "unmatched";
    static final String RELEASED = "released";
    static final String NOT_RELEASED = "not_released";

    private final PrometheusMeterRegistry registry;
    /**
     * By API, then rule, then outcome: every check counts one decision, and three lookups of strings whose hash
     * is cached cost less than building a joined key per request.
     */
    private final ConcurrentMap<String, ConcurrentMap<String, ConcurrentMap<String, Counter>>> decisions =
            new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> nearLimit = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> tierDecisions = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> envoy = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Timer> latency = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> simple = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> lockouts = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> settlements = new ConcurrentHashMap<>();
    private final AtomicInteger rules = new AtomicInteger();
    private volatile DistributionSummary batchCalls;

    ServerMetrics() {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        registry.gauge("sluice.rules", rules);
    }

    MeterRegistry registry() {
        return registry;
    }

    /** The Prometheus text exposition. */
    String scrape(String contentType) {
        return registry.scrape(contentType);
    }

    void decision(String api, String rule, String outcome) {
        ConcurrentMap<String, ConcurrentMap<String, Counter>> byRule = decisions.get(api);
        if (byRule == null) {
            byRule = decisions.computeIfAbsent(api, a -> new ConcurrentHashMap<>());
        }
        ConcurrentMap<String, Counter> byOutcome = byRule.get(rule);
        if (byOutcome == null) {
            byOutcome = byRule.computeIfAbsent(rule, r -> new ConcurrentHashMap<>());
        }
        Counter counter = byOutcome.get(outcome);
        if (counter == null) {
            counter = byOutcome.computeIfAbsent(outcome, o -> Counter.builder("sluice.decisions")
                    .description("Decisions by API, rule and outcome")
                    .tags("api", api, "rule", rule, "outcome", outcome).register(registry));
        }
        counter.increment();
    }

    /**
     * Counts a decision taken under a tier of the rule: {@code sluice_tier_decisions_total{api,rule,tier,outcome}},
     * labelled by the tier's name (configured), never by the key.
     */
    void tierDecision(String api, String rule, String tier, String outcome) {
        tierDecisions.computeIfAbsent(api + '\0' + rule + '\0' + tier + '\0' + outcome, k ->
                Counter.builder("sluice.tier.decisions").description("Decisions under a tier, by API, rule, tier and"
                        + " outcome").tags("api", api, "rule", rule, "tier", tier, "outcome", outcome)
                        .register(registry)).increment();
    }

    /**
     * Counts a lockout that began ({@link io.sluice.Lockout#began}): {@code sluice_lockouts_total{api,rule}}, keys
     * of the rule locked out by their rejections, never labelled by key.
     */
    void lockout(String api, String rule) {
        lockouts.computeIfAbsent(api + '\0' + rule, k -> Counter.builder("sluice.lockouts")
                .description("Lockouts that began: keys locked out by their rejections, by API and rule")
                .tags("api", api, "rule", rule).register(registry)).increment();
    }

    /**
     * Counts a settlement of an estimated charge ({@code POST /v1/settle}):
     * {@code sluice_settlements_total{api,rule,outcome}}, {@code settled} when it found the ticket, else
     * {@code not_settled} (settled already, expired, or of a key whose tier is not counted).
     */
    void settlement(String api, String rule, boolean settled) {
        String outcome = settled ? "settled" : "not_settled";
        settlements.computeIfAbsent(api + '\0' + rule + '\0' + outcome, k -> Counter.builder("sluice.settlements")
                .description("Settlements of estimated charges, by API, rule and outcome")
                .tags("api", api, "rule", rule, "outcome", outcome).register(registry)).increment();
    }

    /**
     * Counts a near-limit admission: more than 80% of {@code quota} used after it, envoy's
     * {@code near_limit} ratio.
     */
    void admitted(String api, String rule, long remaining, long quota) {
        if (quota > 0 && quota - remaining > (long) Math.floor(quota * 0.8)) {
            nearLimit.computeIfAbsent(api + '\0' + rule, k -> Counter.builder("sluice.near.limit")
                    .description("Admissions that left less than 20% of the quota")
                    .tags("api", api, "rule", rule).register(registry)).increment();
        }
    }

    /**
     * Counts one envoy descriptor's hits in envoyproxy/ratelimit's per-descriptor statistics, exported as
     * {@code sluice_envoy_total_hits_total}, {@code sluice_envoy_over_limit_total},
     * {@code sluice_envoy_near_limit_total}, {@code sluice_envoy_within_limit_total} and
     * {@code sluice_envoy_shadow_mode_total}, labelled {@code domain} and {@code key} (envoy's statistics key
     * without the domain, e.g. {@code key1_value1.subkey1}). As in envoy: every hit is a total hit; an admitted
     * request's hits are within the limit, and those past 80% of it near the limit too; a rejected request's
     * hits are over the limit, and also shadow-mode hits when {@code shadow_mode} let it through.
     *
     * @param limit    the limit's requests per unit
     * @param after    the window's count after these hits when admitted; negative when over the limit
     * @param shadowed over the limit but let through by {@code shadow_mode}
     */
    void envoyHits(String domain, String statsKey, long hits, long limit, long after, boolean shadowed) {
        String key = statsKey.startsWith(domain + ".") ? statsKey.substring(domain.length() + 1) : statsKey;
        envoyCounter("total_hits", domain, key).increment(hits);
        if (after < 0) {
            envoyCounter("over_limit", domain, key).increment(hits);
            if (shadowed) {
                envoyCounter("shadow_mode", domain, key).increment(hits);
            }
            return;
        }
        long near = (long) Math.floor(limit * 0.8f);
        if (after > near) {
            long before = after - hits;
            envoyCounter("near_limit", domain, key).increment(before >= near ? hits : after - near);
        }
        envoyCounter("within_limit", domain, key).increment(hits);
    }

    private Counter envoyCounter(String stat, String domain, String key) {
        return envoy.computeIfAbsent(stat + '\0' + domain + '\0' + key, k -> Counter.builder("sluice.envoy." + stat)
                .description("envoyproxy/ratelimit's per-descriptor " + stat + " statistic")
                .tags("domain", domain, "key", key).register(registry));
    }

    /** Records how long one check request took, from when it was read. */
    void latency(String api, long startNanos) {
        latency.computeIfAbsent(api, a -> Timer.builder("sluice.check")
                .description("Latency of check requests")
                .tags("api", a)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(50_000))
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry)).record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    /** Counts one {@code POST /v1/store/calls} request carrying {@code calls} calls. */
    void storeBatch(int calls) {
        DistributionSummary s = batchCalls;
        if (s == null) {
            s = DistributionSummary.builder("sluice.store.batch.calls")
                    .description("Remote-store calls per batch request (POST /v1/store/calls)").register(registry);
            batchCalls = s;
        }
        s.record(calls);
    }

    void storeError(String api) {
        count("sluice.store.errors", "Store calls that failed", "api", api);
    }

    void invalidRequest(String api) {
        count("sluice.invalid.requests", "Requests refused as malformed or out of bounds", "api", api);
    }

    void unauthorized(String api) {
        count("sluice.unauthorized", "Requests refused for a missing or wrong bearer token", "api", api);
    }

    void reload(boolean applied) {
        count("sluice.rule.reloads", "Rule file changes, applied or rejected", "result",
                applied ? "applied" : "rejected");
    }

    /** Keeps {@code sluice_rules} at the number of rules (and envoy rate limits) loaded. */
    void rulesLoaded(int count) {
        rules.set(count);
    }

    private void count(String name, String description, String tag, String value) {
        simple.computeIfAbsent(name + '\0' + value, k -> Counter.builder(name).description(description)
                .tags(tag, value).register(registry)).increment();
    }

    void close() {
        registry.close();
    }
}
