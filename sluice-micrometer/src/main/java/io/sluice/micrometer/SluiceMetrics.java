package io.sluice.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.sluice.Decision;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sluice's events as Micrometer meters: pass one instance as the listener of a limiter and of a Redis store.
 *
 * <pre>{@code
 * SluiceMetrics metrics = new SluiceMetrics(registry);
 * RedisStore store = RedisStore.builder().uri(uri).listener(metrics).build();
 * RateLimiter limiter = RateLimiter.builder(rule).store(store).listener(metrics).build();
 * }</pre>
 *
 * <table>
 * <caption>Meters (Prometheus names in brackets)</caption>
 * <tr><td>{@code sluice.limiter.decisions{rule,limit,outcome,source}}</td><td>counter
 * [{@code sluice_limiter_decisions_total}]: outcome {@code allowed}/{@code rejected}, source as
 * {@link Decision.Source} in lower case ({@code store}, {@code lease}, {@code sync}, {@code cached} for a denial a
 * Redis store repeated without a round trip (docs/cached-denials.md), {@code fail_open}, ...)</td></tr>
 * <tr><td>{@code sluice.limiter.shadow{rule,limit}}</td><td>counter
 * [{@code sluice_limiter_shadow_total}]: decisions a shadow limit would have rejected, by that limit (what it
 * would have done; the decision itself is counted above)</td></tr>
 * <tr><td>{@code sluice.limiter.tiers{rule,tier,outcome}}</td><td>counter
 * [{@code sluice_limiter_tiers_total}]: decisions a tier of the rule took ({@link Decision#tier()}), by tier name,
 * never by key</td></tr>
 * <tr><td>{@code sluice.limiter.lockouts{rule}}</td><td>counter [{@code sluice_limiter_lockouts_total}]:
 * lockouts that began ({@link io.sluice.Lockout#began}): keys of the rule locked out by their rejections; the
 * rejections during a lockout are counted above, with limit {@code lockout}</td></tr>
 * <tr><td>{@code sluice.store.calls{operation,outcome}}</td><td>timer: each call to the store's backend
 * ({@code decide}, {@code lease}, {@code sync}, ...), outcome {@code success}/{@code error}</td></tr>
 * <tr><td>{@code sluice.breaker.state}</td><td>gauge: 0 closed, 1 half-open, 2 open</td></tr>
 * <tr><td>{@code sluice.breaker.transitions{to}}</td><td>counter</td></tr>
 * <tr><td>{@code sluice.lease.permits{rule,kind}}</td><td>counter: permits {@code requested} and
 * {@code granted} by lease calls; {@code sluice.lease.calls{rule}} counts the calls</td></tr>
 * <tr><td>{@code sluice.sync.rounds{outcome}}</td><td>timer of sync rounds; {@code sluice.sync.keys} a summary
 * of keys per round; {@code sluice.sync.pushed} permits pushed</td></tr>
 * </table>
 *
 * <p>Tags come from configuration (rule and limit names, operations), never from keys, so their number is
 * bounded by the rules you define. Meters are created on first use and cached: after warm-up a decision costs
 * one map lookup and one counter increment. Thread-safe.
 */
public final class SluiceMetrics implements SluiceListener {

    private final MeterRegistry registry;
    private final Map<DecisionTags, Counter> decisions = new ConcurrentHashMap<>();
    private final Map<ShadowTags, Counter> shadows = new ConcurrentHashMap<>();
    private final Map<TierTags, Counter> tiers = new ConcurrentHashMap<>();
    private final Map<String, Counter> lockouts = new ConcurrentHashMap<>();
    private final Map<CallTags, Timer> calls = new ConcurrentHashMap<>();
    private final Map<String, Counter> breakerTransitions = new ConcurrentHashMap<>();
    private final Map<String, Counter[]> leases = new ConcurrentHashMap<>();
    private final AtomicInteger breakerState = new AtomicInteger();
    private final Timer syncOk;
    private final Timer syncFailed;
    private final DistributionSummary syncKeys;
    private final Counter syncPushed;

    private record DecisionTags(String rule, String limit, boolean allowed, Decision.Source source) {}

    private record CallTags(String operation, boolean failed) {}

    public SluiceMetrics(MeterRegistry registry) {
        if (registry == null) {
            throw new IllegalArgumentException("registry must not be null");
        }
        this.registry = registry;
        Gauge.builder("sluice.breaker.state", breakerState, AtomicInteger::get)
                .description("Circuit breaker in front of the store: 0 closed, 1 half-open, 2 open")
                .register(registry);
        syncOk = syncTimer("success");
        syncFailed = syncTimer("error");
        syncKeys = DistributionSummary.builder("sluice.sync.keys").description("Keys per sync round")
                .register(registry);
        syncPushed = Counter.builder("sluice.sync.pushed").description("Permits pushed by sync rounds")
                .register(registry);
    }

    private Timer syncTimer(String outcome) {
        return Timer.builder("sluice.sync.rounds").description("Sync rounds of synced-mode rules")
                .tag("outcome", outcome).register(registry);
    }

    /**
     * Counts the decision by rule, deciding limit, outcome and source. The key is deliberately not a tag: keys
     * are as many as callers send, and a meter per key would grow the registry without bound.
     */
    @Override
    public void onDecision(Rule rule, String key, Decision decision) {
        onDecision(rule, decision);
    }

    @Override
    public void onDecision(Rule rule, Decision decision) {
        decisions.computeIfAbsent(new DecisionTags(rule.name(), decision.limit(), decision.allowed(),
                decision.source()), t -> Counter.builder("sluice.limiter.decisions")
                .description("Decisions by rule, deciding limit, outcome and source")
                .tags(Tags.of("rule", t.rule(), "limit", t.limit(), "outcome", t.allowed() ? "allowed" : "rejected",
                        "source", lower(t.source().name())))
                .register(registry)).increment();
        if (decision.tier() != null) {
            tiers.computeIfAbsent(new TierTags(rule.name(), decision.tier(), decision.allowed()), t ->
                    Counter.builder("sluice.limiter.tiers")
                            .description("Decisions a tier of the rule took, by rule, tier and outcome")
                            .tags(Tags.of("rule", t.rule(), "tier", t.tier(), "outcome",
                                    t.allowed() ? "allowed" : "rejected")).register(registry)).increment();
        }
        if (rule.lockout() != null && rule.lockout().began(decision)) {
            lockouts.computeIfAbsent(rule.name(), name -> Counter.builder("sluice.limiter.lockouts")
                    .description("Lockouts that began: keys locked out by their rejections, by rule")
                    .tag("rule", name).register(registry)).increment();
        }
        if (decision.shadowRejected()) {
            shadows.computeIfAbsent(new ShadowTags(rule.name(), decision.shadowLimit()), t ->
                    Counter.builder("sluice.limiter.shadow")
                            .description("Decisions a shadow limit would have rejected, by rule and shadow limit")
                            .tags(Tags.of("rule", t.rule(), "limit", t.limit())).register(registry)).increment();
        }
    }

    /** The tags of a tier counter: tier names come from configuration, so they are bounded as rule names are. */
    private record TierTags(String rule, String tier, boolean allowed) {}

    /** The tags of a shadow counter. */
    private record ShadowTags(String rule, String limit) {}

    @Override
    public void onStoreCall(String operation, long nanos, Throwable error) {
        calls.computeIfAbsent(new CallTags(operation, error != null), t -> Timer.builder("sluice.store.calls")
                .description("Calls from a Sluice store to its backend")
                .tags("operation", t.operation(), "outcome", t.failed() ? "error" : "success")
                .register(registry)).record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void onBreakerTransition(BreakerState from, BreakerState to, String reason) {
        breakerState.set(switch (to) {
            case CLOSED -> 0;
            case HALF_OPEN -> 1;
            case OPEN -> 2;
        });
        breakerTransitions.computeIfAbsent(lower(to.name()), name -> Counter.builder("sluice.breaker.transitions")
                .description("Circuit breaker transitions by target state").tag("to", name)
                .register(registry)).increment();
    }

    @Override
    public void onLease(Rule rule, long requested, long granted) {
        Counter[] c = leases.computeIfAbsent(rule.name(), name -> new Counter[] {
            Counter.builder("sluice.lease.calls").description("Lease calls of leased-mode rules").tag("rule", name)
                    .register(registry),
            Counter.builder("sluice.lease.permits").description("Permits asked for and granted by lease calls")
                    .tags("rule", name, "kind", "requested").register(registry),
            Counter.builder("sluice.lease.permits").description("Permits asked for and granted by lease calls")
                    .tags("rule", name, "kind", "granted").register(registry)});
        c[0].increment();
        c[1].increment(requested);
        c[2].increment(granted);
    }

    @Override
    public void onSync(int keys, long pushed, long nanos, Throwable error) {
        (error == null ? syncOk : syncFailed).record(nanos, TimeUnit.NANOSECONDS);
        syncKeys.record(keys);
        syncPushed.increment(pushed);
    }

    private static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "SluiceMetrics{" + registry.getClass().getSimpleName() + "}";
    }
}
