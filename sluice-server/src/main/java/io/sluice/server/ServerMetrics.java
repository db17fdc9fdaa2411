package io.sluice.server;

import io.micrometer.core.instrument.Counter;
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
 *       (over the limit but let through by {@code shadow_mode}), {@code unlimited}, {@code unmatched},
 *       {@code released}, {@code not_released}
 *   <li>{@code sluice_near_limit_total{api,rule}}: admitted with more than 80% of the quota used (envoy's
 *       {@code near_limit})
 *   <li>{@code sluice_check_seconds{api}}: latency of a check request, a histogram
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
    private final ConcurrentMap<String, Counter> decisions = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> nearLimit = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Timer> latency = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> simple = new ConcurrentHashMap<>();
    private final AtomicInteger rules = new AtomicInteger();

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
        decisions.computeIfAbsent(api + '\0' + rule + '\0' + outcome, k -> Counter.builder("sluice.decisions")
                .description("Decisions by API, rule and outcome")
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
