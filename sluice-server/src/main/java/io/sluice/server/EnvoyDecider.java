package io.sluice.server;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Store;
import io.sluice.http.RateLimitFields;
import io.sluice.rules.EnvoyConfig;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Decides envoyproxy/ratelimit requests — a domain and descriptors of key/value entries — with that service's
 * semantics, for the gRPC service, the {@code /json} endpoint and descriptor checks over {@code /v1/check}.
 *
 * <p>Per descriptor: the configured limit it matches ({@link EnvoyConfig#match}) or the override the request
 * carries; limits named in another matched limit's {@code replaces} are dropped; an unlimited or unmatched
 * descriptor is OK and counts nothing; {@code requests_per_unit: 0} is always over the limit; every other
 * descriptor adds its hits to a counter of the descriptor's exact entries in the current epoch-aligned window
 * of the unit — admitted or not, as envoy's INCRBY does ({@link FixedWindow} with {@code countRejected}) —
 * and is OVER_LIMIT when the count passes the limit, unless {@code shadow_mode} makes it OK. Descriptors are
 * independent: each is charged whatever the others decide, as in envoy.
 */
final class EnvoyDecider {

    /** A request descriptor's limit override: {@code requests_per_unit} per {@code unit}. */
    record Override(long requestsPerUnit, EnvoyConfig.Unit unit) {}

    /**
     * One descriptor of a request, validated.
     *
     * @param entries  its entries
     * @param override the request's own limit for it, or null
     * @param hits     how many hits it adds; 0 checks without counting (envoy's per-descriptor
     *                 {@code hits_addend: 0})
     */
    record Descriptor(List<EnvoyConfig.Entry> entries, Override override, long hits) {}

    /**
     * What one descriptor got.
     *
     * @param over            OVER_LIMIT (after shadow mode)
     * @param limitName       the name of the limit that applied, or null when none did
     * @param configName      its {@code rate_limit.name} (what envoy reports in {@code current_limit.name}), or empty
     * @param ruleLabel       the metrics label of that limit
     * @param requestsPerUnit the limit's requests per unit (when one applied)
     * @param unit            its unit (when one applied)
     * @param remaining       what is left in the window (when one applied)
     * @param resetSeconds    seconds until the window ends, rounded up (when one applied)
     * @param unlimited       an {@code unlimited} limit applied
     * @param decision        the store's decision, or null when the store was not asked
     * @param quotaMode       the limit has {@code quota_mode}: being over it fails the request only when every
     *                        quota-mode descriptor of the request is over
     */
    record Status(boolean over, String limitName, String configName, String ruleLabel, long requestsPerUnit,
                  EnvoyConfig.Unit unit, long remaining, long resetSeconds, boolean unlimited, Decision decision,
                  boolean quotaMode) {

        Status(boolean over, String limitName, String configName, String ruleLabel, long requestsPerUnit,
               EnvoyConfig.Unit unit, long remaining, long resetSeconds, boolean unlimited, Decision decision) {
            this(over, limitName, configName, ruleLabel, requestsPerUnit, unit, remaining, resetSeconds, unlimited,
                    decision, false);
        }

        boolean limited() {
            return unit != null;
        }
    }

    /** Most hits one descriptor may add: the largest count any limit accepts. */
    static final long MAX_HITS = Limit.MAX_COUNT;

    /** The stores' longest key: a descriptor's entries, escaped and joined, must fit it. */
    private static final int MAX_KEY_LENGTH = 512;

    private final Store store;
    private final ServerMetrics metrics;
    private final SluiceListener overrides;

    EnvoyDecider(Store store, ServerMetrics metrics) {
        this(store, metrics, SluiceListener.NONE);
    }

    /**
     * @param overrides told of decisions under a request's own limit, which go to the store without a limiter
     *                  (a configured limit's limiter tells its own listener)
     */
    EnvoyDecider(Store store, ServerMetrics metrics, SluiceListener overrides) {
        this.store = store;
        this.metrics = metrics;
        this.overrides = overrides;
    }

    /** The store key of a descriptor: its entries, with the characters that join them escaped. */
    static String key(List<EnvoyConfig.Entry> entries) {
        return key(entries, null);
    }

    /**
     * The store key of a descriptor whose entries at some positions count under a shared wildcard value
     * ({@code share_threshold}) instead of their own: {@code shared} holds it there, null elsewhere (or is null).
     */
    static String key(List<EnvoyConfig.Entry> entries, List<String> shared) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < entries.size(); i++) {
            EnvoyConfig.Entry e = entries.get(i);
            if (i > 0) {
                s.append('|');
            }
            escape(s, e.key());
            s.append('=');
            String value = shared != null && shared.get(i) != null ? shared.get(i) : e.value();
            escape(s, value);
        }
        return s.toString();
    }

    private static void escape(StringBuilder s, String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '%' -> s.append("%25");
                case '|' -> s.append("%7C");
                case '=' -> s.append("%3D");
                default -> s.append(c);
            }
        }
    }

    /**
     * Checks what every request must satisfy before anything is charged.
     *
     * @param path where the descriptors are in the request, for messages (e.g. {@code descriptors})
     * @throws InvalidRequestException naming the descriptor and the problem
     */
    void validate(String domain, List<Descriptor> descriptors, int maxDescriptors, int maxEntries, String path)
            throws InvalidRequestException {
        if (domain.isEmpty()) {
            throw InvalidRequestException.at("domain", "rate limit domain must not be empty");
        }
        CheckRequest.wellFormed(domain, "domain");
        if (domain.length() > Settings.MAX_DOMAIN_LENGTH) {
            throw InvalidRequestException.at("domain", "must be at most " + Settings.MAX_DOMAIN_LENGTH
                    + " characters, was " + domain.length());
        }
        if (descriptors.isEmpty()) {
            throw InvalidRequestException.at(path, "rate limit descriptor list must not be empty");
        }
        if (descriptors.size() > maxDescriptors) {
            throw InvalidRequestException.at(path, "at most " + maxDescriptors + " descriptors per request, was "
                    + descriptors.size());
        }
        for (int i = 0; i < descriptors.size(); i++) {
            Descriptor d = descriptors.get(i);
            String at = path + "[" + i + "]";
            // A descriptor without entries matches no limit: envoy answers it OK, and so does Sluice.
            if (d.entries().size() > maxEntries) {
                throw InvalidRequestException.at(at + ".entries", "at most " + maxEntries + " entries per"
                        + " descriptor, was " + d.entries().size());
            }
            for (int j = 0; j < d.entries().size(); j++) {
                EnvoyConfig.Entry entry = d.entries().get(j);
                if (entry.key().isEmpty()) {
                    throw InvalidRequestException.at(at + ".entries[" + j + "].key", "must not be empty");
                }
                CheckRequest.wellFormed(entry.key(), at + ".entries[" + j + "].key");
                CheckRequest.wellFormed(entry.value(), at + ".entries[" + j + "].value");
            }
            int length = key(d.entries()).length();
            if (length > MAX_KEY_LENGTH) {
                throw InvalidRequestException.at(at + ".entries", "the entries make a key of " + length
                        + " characters; at most " + MAX_KEY_LENGTH);
            }
            if (d.hits() < 0 || d.hits() > MAX_HITS) {
                throw InvalidRequestException.at(at + ".hits_addend", "must be in [0, " + MAX_HITS + "], was "
                        + d.hits());
            }
        }
    }

    /**
     * Decides validated descriptors; with {@code peek} nothing is counted (what a hit would get).
     *
     * @return one status per descriptor, in order; fails when the store does
     */
    CompletableFuture<List<Status>> decide(RuleSet rules, String domain, List<Descriptor> descriptors, boolean peek,
                                           String api) {
        EnvoyConfig config = rules.envoy();
        int n = descriptors.size();
        List<EnvoyConfig.Match> matched = new ArrayList<>(n);
        Set<String> replaced = new HashSet<>();
        boolean knownDomain = config.domains().contains(domain);
        for (Descriptor d : descriptors) {
            EnvoyConfig.Match m = d.override() != null || !knownDomain ? null : config.lookup(domain, d.entries());
            matched.add(m);
            if (m != null) {
                replaced.addAll(m.rateLimit().replaces());
            }
        }
        List<CompletableFuture<Status>> statuses = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Descriptor d = descriptors.get(i);
            EnvoyConfig.Match m = matched.get(i);
            if (m != null && !m.rateLimit().name().isEmpty() && replaced.contains(m.rateLimit().name())) {
                m = null; // another matched limit replaces this one: it neither applies nor counts
            }
            statuses.add(decideOne(rules, domain, d, m, knownDomain, peek, api));
        }
        return CompletableFuture.allOf(statuses.toArray(new CompletableFuture<?>[0]))
                .thenApply(x -> statuses.stream().map(CompletableFuture::join).toList());
    }

    private CompletableFuture<Status> decideOne(RuleSet rules, String domain, Descriptor d, EnvoyConfig.Match match,
                                                boolean knownDomain, boolean peek, String api) {
        RateLimiter limiter;
        Rule rule;
        String limitName;
        String label;
        long rpu;
        EnvoyConfig.Unit unit;
        boolean shadow;
        boolean quota;
        String configName;
        String statsKey;
        List<String> shared;
        if (d.override() != null && knownDomain && !d.entries().isEmpty()) {
            // envoy honours an override only for a configured domain, counting it per descriptor and unit.
            rpu = d.override().requestsPerUnit();
            unit = d.override().unit();
            limitName = "override";
            configName = "";
            label = domain + ".override";
            shadow = false;
            quota = false;
            // Statistics stay keyed by configuration, not by request values: one series per domain and unit.
            statsKey = domain + ".override_" + unit.word();
            shared = null;
            limiter = null;
            rule = rpu == 0 ? null : Rule.of(RuleSet.fit("rls:" + domain + ":override:" + unit.word()),
                    new FixedWindow(limitName, rpu, unit.duration(), FixedWindow.Align.EPOCH, true));
        } else if (match == null) {
            metrics.decision(api, knownDomain ? domain : "unknown_domain", ServerMetrics.UNMATCHED);
            return CompletableFuture.completedFuture(new Status(false, null, "", null, 0, null, 0, 0, false, null));
        } else if (match.rateLimit().unlimited()) {
            EnvoyConfig.RateLimit m = match.rateLimit();
            metrics.decision(api, m.fullKey(), ServerMetrics.UNLIMITED);
            return CompletableFuture.completedFuture(new Status(false, null, m.name(), m.fullKey(), 0, null, 0, 0, true,
                    null));
        } else {
            EnvoyConfig.RateLimit m = match.rateLimit();
            RuleSet.EnvoyBound bound = rules.envoy(m);
            limiter = bound.limiter();
            rule = bound.rule();
            limitName = bound.limitName();
            configName = m.name();
            label = m.fullKey();
            rpu = m.requestsPerUnit();
            unit = m.unit();
            shadow = m.shadowMode();
            quota = m.quotaMode();
            statsKey = match.statsKey();
            shared = match.sharedValue();
        }
        boolean counts = !peek;
        if (rule == null) {
            // requests_per_unit: 0 blocks every request; nothing to count.
            metrics.decision(api, label, shadow ? ServerMetrics.SHADOW : ServerMetrics.REJECTED);
            if (counts) {
                metrics.envoyHits(domain, statsKey, d.hits(), 0, -1, shadow);
            }
            return CompletableFuture.completedFuture(new Status(!shadow, limitName, configName, label, 0, unit, 0,
                    untilWindowEnd(unit), false, null, quota));
        }
        String key = key(d.entries(), shared);
        boolean check = peek || d.hits() == 0;
        // A configured limit goes through its limiter, which applies the block's on_failure; an override, built
        // per request, goes to the store directly (a failure is the store's error).
        Rule overridden = rule;
        CompletableFuture<Decision> decided = limiter == null
                ? store.decideAsync(rule, key, check ? Request.peek(d.hits()) : Request.tryAcquire(d.hits()))
                        .thenApply(decision -> {
                            overrides.onDecision(overridden, key, decision);
                            return decision;
                        })
                : check ? limiter.peekAsync(key, d.hits()) : limiter.tryAcquireAsync(key, d.hits());
        String ruleLabel = label;
        String name = limitName;
        long perUnit = rpu;
        EnvoyConfig.Unit u = unit;
        boolean inShadow = shadow;
        boolean inQuota = quota;
        String reported = configName;
        String stats = statsKey;
        long hits = d.hits();
        return decided.thenApply(decision -> {
            // A check of 0 hits is over when nothing is left: a Sluice window cannot tell "exactly at the limit"
            // (envoy: OK) from "past it" (envoy: OVER_LIMIT), and past it is the lasting state once rejected hits
            // have been counted.
            boolean over = !decision.allowed() || (hits == 0 && decision.remaining() == 0);
            if (decision.source().degraded()) {
                metrics.decision(api, ruleLabel, decision.source().name().toLowerCase(java.util.Locale.ROOT));
            } else if (over) {
                metrics.decision(api, ruleLabel, inShadow ? ServerMetrics.SHADOW : ServerMetrics.REJECTED);
            } else {
                metrics.decision(api, ruleLabel, ServerMetrics.ALLOWED);
                metrics.admitted(api, ruleLabel, decision.remaining(), perUnit);
            }
            if (counts) {
                metrics.envoyHits(domain, stats, d.hits(), perUnit, over ? -1 : perUnit - decision.remaining(),
                        over && inShadow);
            }
            long reset = decision.resetAfterMicros() > 0 ? RateLimitFields.ceilSeconds(decision.resetAfterMicros())
                    : untilWindowEnd(u);
            return new Status(over && !inShadow, name, reported, ruleLabel, perUnit, u, decision.remaining(), reset,
                    false, decision, inQuota);
        });
    }

    /** Seconds until the current epoch-aligned window of {@code unit} ends, as envoy computes it. */
    private static long untilWindowEnd(EnvoyConfig.Unit unit) {
        long now = System.currentTimeMillis() / 1000;
        return unit.seconds() - now % unit.seconds();
    }

    /**
     * The status that envoy's response headers describe: the last one over the limit, else the limited one
     * with the fewest remaining; null when no limit applied.
     */
    static Status headline(List<Status> statuses) {
        Status pick = null;
        for (Status s : statuses) {
            if (!s.limited()) {
                continue;
            }
            if (s.over()) {
                pick = s;
            } else if (pick == null || (!pick.over() && s.remaining() < pick.remaining())) {
                pick = s;
            }
        }
        return pick;
    }

    /** {@code RateLimit-Policy} for the limits that applied, each once, in order; null when none did. */
    static String policyField(List<Status> statuses) {
        List<RateLimitFields.Policy> policies = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Status s : statuses) {
            if (s.limited() && seen.add(s.limitName())) {
                policies.add(new RateLimitFields.Policy(s.limitName(), s.requestsPerUnit(), s.unit().seconds(),
                        false));
            }
        }
        return RateLimitFields.policyField(policies);
    }
}
