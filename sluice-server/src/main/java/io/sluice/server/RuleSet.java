package io.sluice.server;

import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Store;
import io.sluice.http.RateLimitFields;
import io.sluice.rules.EnvoyConfig;
import io.sluice.rules.RuleFile;
import io.sluice.rules.RuleFileException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rules the server enforces at one moment: Sluice rules (addressed by name) and envoyproxy/ratelimit
 * domains (addressed by descriptors), each compiled to a {@link Rule} on the server's one store. Immutable; a
 * reload builds a new set and swaps it in whole, so a request sees either the old rules or the new ones.
 *
 * <p>Counters survive a reload because the store keeps state by rule name: a rule that keeps its name keeps
 * its keys' state, and a changed limit of the same name migrates it as {@link RateLimiter#updateLimit}
 * documents (e.g. a fixed window keeps its count under a new limit).
 */
final class RuleSet {

    /** Where the bundled example lives on the classpath (a copy of {@code examples/server-rules.yaml}). */
    static final String BUNDLED_RESOURCE = "/io/sluice/server/default-rules.yaml";
    /** How the bundled example is named in messages. */
    static final String BUNDLED_NAME = "examples/server-rules.yaml (bundled)";
    /**
     * The bundled envoyproxy/ratelimit example (a copy of {@code examples/envoy-rules.yaml}), so that Envoy's
     * protocol and {@code POST /json} answer with real limits out of the box.
     */
    static final String BUNDLED_ENVOY_RESOURCE = "/io/sluice/server/default-envoy-rules.yaml";
    static final String BUNDLED_ENVOY_NAME = "examples/envoy-rules.yaml (bundled)";

    /** Rule names on the store are at most this long ({@link Rule#of}). */
    private static final int MAX_NAME = 128;

    /**
     * A Sluice rule the API can address.
     *
     * @param rule        the rule as enforced: with the server's default mode unless it chose its own
     * @param declared    the rule as its file defines it (what a remote store's copy must match)
     * @param limiter     its limiter on the server's store
     * @param policyField its {@code RateLimit-Policy} value, or null when no limit has a policy to advertise
     * @param quotas      each limit's advertised quota {@code q}, for near-limit counting
     */
    record Bound(Rule rule, Rule declared, RateLimiter limiter, String policyField, Map<String, Long> quotas) {}

    /**
     * An envoy {@code rate_limit} block compiled for the store.
     *
     * @param config    the block
     * @param rule      its rule on the store (one epoch-aligned fixed window counting every hit, as envoy's
     *                  counter does); null for an unlimited block or {@code requests_per_unit: 0}
     * @param limitName the name decisions and headers report: the block's {@code name}, else its path
     * @param limiter   the rule's limiter on the server's store, applying the block's {@code on_failure}; null
     *                  when {@code rule} is
     */
    record EnvoyBound(EnvoyConfig.RateLimit config, Rule rule, String limitName, RateLimiter limiter) {}

    /**
     * What was read from the rule files, before it is bound to a store.
     *
     * @param ownModes the rules that choose their own mode; the server's default mode applies to the others
     */
    record Sources(List<String> names, Map<String, Rule> rules, Map<String, Limit> limits, Set<String> ambiguousLimits,
                   EnvoyConfig envoy, Set<String> ownModes) {

        Sources(List<String> names, Map<String, Rule> rules, Map<String, Limit> limits, Set<String> ambiguousLimits,
                EnvoyConfig envoy) {
            this(names, rules, limits, ambiguousLimits, envoy, Set.of());
        }
    }

    private final Sources sources;
    private final SluiceListener listener;
    private final DefaultMode defaultMode;
    private final Instant loadedAt;
    private final Map<String, Bound> rules;
    private final Map<String, Bound> limits;
    private final Map<EnvoyConfig.RateLimit, EnvoyBound> envoy;

    private RuleSet(Sources sources, SluiceListener listener, DefaultMode defaultMode, Instant loadedAt,
                    Map<String, Bound> rules, Map<String, Bound> limits, Map<EnvoyConfig.RateLimit, EnvoyBound> envoy) {
        this.sources = sources;
        this.listener = listener;
        this.defaultMode = defaultMode;
        this.loadedAt = loadedAt;
        this.rules = rules;
        this.limits = limits;
        this.envoy = envoy;
    }

    /**
     * Reads rule files, each either a Sluice rule file or an envoyproxy/ratelimit configuration (told apart by a
     * top-level {@code domain:}); an empty list reads the bundled examples (Sluice rules and an envoy domain).
     *
     * @throws RuleFileException naming file, line and field when a file is invalid, or when two files define
     *                           the same rule or domain
     * @throws IOException       when a file cannot be read
     */
    static Sources read(List<Path> files) throws IOException, RuleFileException {
        if (files.isEmpty()) {
            return combine(List.of(BUNDLED_NAME, BUNDLED_ENVOY_NAME),
                    List.of(bundled(BUNDLED_RESOURCE), bundled(BUNDLED_ENVOY_RESOURCE)));
        }
        List<String> names = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        for (Path file : files) {
            names.add(file.toString());
            texts.add(Files.readString(file));
        }
        return combine(names, texts);
    }

    private static String bundled(String resource) throws IOException {
        try (InputStream in = RuleSet.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("the bundled rules " + resource + " are missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Parses the texts of rule files named {@code names}. */
    static Sources combine(List<String> names, List<String> texts) throws RuleFileException {
        Map<String, Rule> rules = new LinkedHashMap<>();
        Map<String, String> ruleSources = new HashMap<>();
        Map<String, Limit> limits = new LinkedHashMap<>();
        Set<String> ambiguous = new HashSet<>();
        Set<String> ownModes = new HashSet<>();
        List<EnvoyConfig> envoyConfigs = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            String text = texts.get(i);
            if (EnvoyConfig.looksLikeEnvoyConfig(text)) {
                envoyConfigs.add(EnvoyConfig.parse(name, text));
                continue;
            }
            RuleFile file = RuleFile.parse(name, text);
            ownModes.addAll(file.rulesWithOwnMode());
            for (Map.Entry<String, Rule> r : file.rules().entrySet()) {
                String before = ruleSources.putIfAbsent(r.getKey(), name);
                if (before != null) {
                    throw new RuleFileException(name, 0, 0, "rules." + r.getKey(), "rule \"" + r.getKey()
                            + "\" is already defined in " + before + "; rule names must be unique across files");
                }
                rules.put(r.getKey(), r.getValue());
            }
            for (Map.Entry<String, Limit> l : file.limits().entrySet()) {
                if (limits.putIfAbsent(l.getKey(), l.getValue()) != null) {
                    ambiguous.add(l.getKey());
                }
            }
        }
        ambiguous.forEach(limits::remove);
        return new Sources(List.copyOf(names), Collections.unmodifiableMap(rules), Collections.unmodifiableMap(limits),
                Set.copyOf(ambiguous), EnvoyConfig.merge(envoyConfigs), Set.copyOf(ownModes));
    }

    /** Binds rules read from files to {@code store}, with limiters that tell nobody of their decisions. */
    static RuleSet bind(Sources sources, Store store) {
        return bind(sources, store, SluiceListener.NONE, DefaultMode.EXACT);
    }

    /**
     * Binds rules read from files to {@code store}; every limiter tells {@code listener} of each decision and
     * its key (the server's {@link HotKeys}).
     */
    static RuleSet bind(Sources sources, Store store, SluiceListener listener) {
        return bind(sources, store, listener, DefaultMode.EXACT);
    }

    /**
     * As {@link #bind(Sources, Store, SluiceListener)}, enforcing every rule that does not choose its own mode,
     * every limit addressed alone and every envoy limit in {@code defaultMode} where it can run them.
     */
    static RuleSet bind(Sources sources, Store store, SluiceListener listener, DefaultMode defaultMode) {
        Map<String, Bound> rules = new LinkedHashMap<>();
        for (Rule rule : sources.rules().values()) {
            Rule enforced = sources.ownModes().contains(rule.name()) ? rule : defaultMode.apply(rule);
            if (enforced.hasTiers()) {
                // A key sent with a domain is decided as domain U+001F key; its tier is the key's as sent.
                enforced = enforced.withTierKeysAfter(CheckRequest.DOMAIN_SEPARATOR);
            }
            rules.put(rule.name(), bound(enforced, rule, store, listener));
        }
        Map<String, Bound> limits = new LinkedHashMap<>();
        for (Limit limit : sources.limits().values()) {
            // A limit addressed alone is a rule of that limit, named as sluice replay names it.
            String ruleName = "limit:" + limit.name();
            if (ruleName.length() <= MAX_NAME) {
                Rule alone = Rule.of(ruleName, limit);
                limits.put(limit.name(), bound(defaultMode.apply(alone), alone, store, listener));
            }
        }
        Map<EnvoyConfig.RateLimit, EnvoyBound> envoy = new HashMap<>();
        for (String domain : sources.envoy().domains()) {
            for (EnvoyConfig.RateLimit config : sources.envoy().rateLimits(domain)) {
                String limitName = fit(config.name().isEmpty() ? config.path() : config.name());
                Rule rule = null;
                RateLimiter limiter = null;
                if (!config.unlimited() && config.requestsPerUnit() > 0) {
                    rule = Rule.of(envoyRuleName(config.fullKey()), new FixedWindow(limitName,
                            config.requestsPerUnit(), config.unit().duration(), FixedWindow.Align.EPOCH, true));
                    if (config.onFailure() != null) {
                        rule = rule.withFailurePolicy(config.onFailure());
                    }
                    rule = defaultMode.apply(rule);
                    limiter = RateLimiter.builder(rule).store(store).listener(listener).build();
                }
                envoy.put(config, new EnvoyBound(config, rule, limitName, limiter));
            }
        }
        return new RuleSet(sources, listener, defaultMode, Instant.now(), Collections.unmodifiableMap(rules),
                Collections.unmodifiableMap(limits), Collections.unmodifiableMap(envoy));
    }

    private static Bound bound(Rule rule, Rule declared, Store store, SluiceListener listener) {
        List<RateLimitFields.Policy> policies = new ArrayList<>();
        Map<String, Long> quotas = new HashMap<>();
        for (Limit l : rule.limits()) {
            RateLimitFields.Policy p = RateLimitFields.policy(l);
            policies.add(p);
            if (p != null) {
                quotas.put(l.name(), p.quota());
            }
        }
        return new Bound(rule, declared, RateLimiter.builder(rule).store(store).listener(listener).build(),
                RateLimitFields.policyField(policies),
                Map.copyOf(quotas));
    }

    /** The store's rule name for an envoy block: {@code rls:} and envoy's full key, shortened if need be. */
    static String envoyRuleName(String fullKey) {
        return fit("rls:" + fullKey);
    }

    /**
     * {@code name} if it fits the store's 128-character names, else a prefix and a hash of the whole, so that
     * distinct long names stay distinct and the same name always maps to the same store namespace.
     */
    static String fit(String name) {
        if (name.length() <= MAX_NAME) {
            return name;
        }
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
            return name.substring(0, MAX_NAME - 17) + "~" + HexFormat.of().formatHex(hash, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /**
     * {@code sources} bound to {@code store} as this set is: its limiters tell the same listener, and the same
     * default mode applies.
     */
    RuleSet rebind(Sources sources, Store store) {
        return bind(sources, store, listener, defaultMode);
    }

    /** The server's default mode, and the rules it could not apply to (they are enforced exactly). */
    DefaultMode defaultMode() {
        return defaultMode;
    }

    /**
     * The rules of the files (and limits addressed alone) that choose no mode of their own but are enforced in
     * another than the default because it cannot run them, each as {@code name (algorithms)}; empty when the
     * default is exact.
     */
    List<String> notInDefaultMode() {
        List<String> out = new ArrayList<>();
        if (defaultMode.mode().kind() == io.sluice.Mode.Kind.EXACT) {
            return out;
        }
        List<Bound> all = new ArrayList<>();
        rules.values().stream().filter(b -> !sources.ownModes().contains(b.rule().name())).forEach(all::add);
        all.addAll(limits.values());
        for (Bound b : all) {
            if (!b.rule().mode().equals(defaultMode.mode())) {
                out.add(b.rule().name() + " (" + String.join(", ", b.rule().limits().stream().map(Limit::algorithm)
                        .distinct().toList()) + ")");
            }
        }
        for (EnvoyBound e : envoy.values()) {
            if (e.rule() != null && !e.rule().mode().equals(defaultMode.mode())) {
                out.add(e.rule().name() + " (fixed_window)");
            }
        }
        return out;
    }

    /** The files the rules came from. */
    List<String> sourceNames() {
        return sources.names();
    }

    Sources sources() {
        return sources;
    }

    Instant loadedAt() {
        return loadedAt;
    }

    /** The Sluice rules by name. */
    Map<String, Bound> rules() {
        return rules;
    }

    /** The Sluice rule of that name, or null. */
    Bound rule(String name) {
        return rules.get(name);
    }

    /** The one-limit rule of a limit of that name, or null. */
    Bound limit(String name) {
        return limits.get(name);
    }

    /** Whether {@code name} is a limit defined in several files (so it cannot be addressed alone). */
    boolean ambiguousLimit(String name) {
        return sources.ambiguousLimits().contains(name);
    }

    /** The envoy configuration (no domains when none was loaded). */
    EnvoyConfig envoy() {
        return sources.envoy();
    }

    /** The compiled form of an envoy block of this set. */
    EnvoyBound envoy(EnvoyConfig.RateLimit config) {
        return envoy.get(config);
    }

    /** Rules and envoy limits in this set, for the {@code sluice_rules} gauge. */
    int limitCount() {
        int n = rules.size();
        for (String domain : sources.envoy().domains()) {
            n += sources.envoy().rateLimits(domain).size();
        }
        return n;
    }

    /** How many rules and domains this set holds, for logs. */
    String summary() {
        StringBuilder s = new StringBuilder();
        s.append(rules.size()).append(rules.size() == 1 ? " rule" : " rules");
        if (!rules.isEmpty()) {
            s.append(" (");
            boolean first = true;
            for (Bound b : rules.values()) {
                s.append(first ? "" : ", ").append(b.rule().name()).append(": ");
                List<String> names = new ArrayList<>();
                b.rule().limits().forEach(l -> names.add(l.name()));
                s.append(String.join(" + ", names));
                first = false;
            }
            s.append(')');
        }
        Set<String> domains = sources.envoy().domains();
        if (!domains.isEmpty()) {
            s.append(", ").append(domains.size()).append(domains.size() == 1 ? " envoy domain (" : " envoy domains (")
                    .append(String.join(", ", domains)).append(')');
        }
        return s.toString();
    }
}
