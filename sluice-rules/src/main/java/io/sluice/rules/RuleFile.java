package io.sluice.rules;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.sluice.FailurePolicy;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.Rule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A rule file: named limits and the rules built from them, in YAML or JSON. The server and
 * {@code sluice replay} read the same format:
 *
 * <pre>
 * limits:
 *   per_minute: {algorithm: sliding_log, limit: 30, window: 1m}
 *   per_second: {algorithm: token_bucket, capacity: 5, refill_tokens: 5, refill_period: 1s}
 * rules:
 *   partner_api: {limits: [per_minute, per_second]}
 *   hot_path: {limits: [per_second], mode: leased, lease_ttl: 200ms, on_failure: local_fallback, fallback_share: 0.25}
 * </pre>
 *
 * <p>{@code limits} (required, at least one) maps each limit's name to its {@code algorithm} and that
 * algorithm's snake_case parameters; the name becomes the limit's {@link Limit#name()}, which decisions
 * report. {@code rules} (optional) maps each rule's name to the list of limit names it applies together, and
 * optionally how a shared store enforces it ({@code mode}: {@code exact} (default), {@code coalesced},
 * {@code leased} with {@code lease_ttl} and {@code max_batch}, {@code synced} with {@code sync_interval}; see
 * {@link Mode}) and what it decides when the store fails ({@code on_failure}: {@code raise} (default),
 * {@code fail_open}, {@code fail_closed}, {@code local_fallback} with {@code fallback_share}; see
 * {@link FailurePolicy}) and which of its limits only watch ({@code shadow}: {@code true} for all of them, or
 * a list of limit names; see {@link Rule#withShadow}) and which keys get their own limits, none, or no admission
 * ({@code tiers}; see {@link TierSchema}); and its {@code lockout}
 * (<code>{after: 3, within: 15m, for: 1h}</code>; see {@link io.sluice.Lockout}).
 * Durations are strings with a unit ({@link Durations}); omitted optional parameters take the defaults of the
 * records' {@code of(...)} factories. Anything else — an unknown field or algorithm, a value of the wrong
 * type, a rule naming an unknown limit, a value the record refuses — is a {@link RuleFileException} naming
 * the file, line, column and field. Immutable.
 */
public final class RuleFile {

    private static final JsonFactory JSON = new JsonFactory();
    private static final YAMLFactory YAML = new YAMLFactory();

    private final String source;
    private final Map<String, Limit> limits;
    private final Map<String, Rule> rules;
    private final java.util.Set<String> ownModes;

    private RuleFile(String source, Map<String, Limit> limits, Map<String, Rule> rules) {
        this(source, limits, rules, java.util.Set.of());
    }

    private RuleFile(String source, Map<String, Limit> limits, Map<String, Rule> rules,
                     java.util.Set<String> ownModes) {
        this.source = source;
        this.limits = Collections.unmodifiableMap(limits);
        this.rules = Collections.unmodifiableMap(rules);
        this.ownModes = java.util.Set.copyOf(ownModes);
    }

    /** Rules built elsewhere (e.g. from an envoy configuration by {@link EnvoyConfig#asRuleFile}). */
    static RuleFile of(String source, Map<String, Limit> limits, Map<String, Rule> rules) {
        return new RuleFile(source, limits, rules);
    }

    /**
     * Reads a rule file: JSON when its name ends in {@code .json}, YAML when in {@code .yaml} or {@code .yml},
     * otherwise JSON if the text starts with <code>{</code> and YAML if not. Errors name the file as
     * {@code file.toString()}.
     *
     * @throws IOException       when the file cannot be read
     * @throws RuleFileException when its content is not a valid rule file
     */
    public static RuleFile read(Path file) throws IOException, RuleFileException {
        return parse(file.toString(), Files.readString(file));
    }

    /**
     * Parses rule-file text; {@code source} names it in errors and decides JSON or YAML as in {@link #read}.
     *
     * @throws RuleFileException when the text is not a valid rule file
     */
    public static RuleFile parse(String source, String text) throws RuleFileException {
        Node root = readDocument(source, text);
        Map<String, Node> top = root.members("a map with 'limits' (and optionally 'rules')");
        for (Map.Entry<String, Node> e : top.entrySet()) {
            if (!e.getKey().equals("limits") && !e.getKey().equals("rules")) {
                throw e.getValue().error("unknown field; a rule file has 'limits' and 'rules'");
            }
        }
        Node limitsNode = top.get("limits");
        if (limitsNode == null) {
            throw root.error("missing 'limits': a map of limit names to their algorithm and parameters");
        }
        Map<String, Node> limitDefinitions = limitsNode.members("a map of limit names to their definitions");
        if (limitDefinitions.isEmpty()) {
            throw limitsNode.error("expected at least one limit");
        }
        Map<String, Limit> limits = new LinkedHashMap<>();
        for (Map.Entry<String, Node> e : limitDefinitions.entrySet()) {
            limits.put(e.getKey(), defineLimit(e.getKey(), e.getValue()));
        }
        Map<String, Rule> rules = new LinkedHashMap<>();
        java.util.Set<String> ownModes = new java.util.HashSet<>();
        Node rulesNode = top.get("rules");
        if (rulesNode != null) {
            for (Map.Entry<String, Node> e : rulesNode.members("a map of rule names to their limits").entrySet()) {
                rules.put(e.getKey(), defineRule(e.getKey(), e.getValue(), limits));
                Map<String, Node> members = e.getValue().members("a map with 'limits': a list of limit names");
                if (MODE_FIELDS.stream().anyMatch(members::containsKey)) {
                    ownModes.add(e.getKey());
                }
            }
        }
        return new RuleFile(source, limits, rules, ownModes);
    }

    /**
     * Applies a change of parameters to a live limit, as a rule file would write them: a JSON object of any
     * subset of {@code current}'s parameters (the others keep their values), or, with an {@code algorithm}
     * other than {@code current}'s, a full definition of a new limit of that name. Used by traces'
     * {@code set_limit} and by anything else that edits limits over JSON.
     *
     * @param change the parameters, e.g. <code>{"limit": 20, "window": "30s"}</code>
     * @param source names the text in errors (e.g. a trace file)
     * @param line   the line {@code change} is on, for errors
     * @param field  the dotted path of {@code change} in its document, e.g. {@code params}, for errors
     * @throws RuleFileException naming the parameter at fault and what was expected
     */
    public static Limit changeLimit(Limit current, JsonNode change, String source, int line, String field)
            throws RuleFileException {
        Node node = Node.of(change, source, field, line);
        Map<String, Node> given = node.members("a map of parameters to change");
        if (given.isEmpty()) {
            throw node.error("expected at least one parameter to change");
        }
        Node algorithmNode = given.get("algorithm");
        if (algorithmNode != null && !algorithmNode.string("an algorithm name").equals(current.algorithm())) {
            return defineLimit(current.name(), node);
        }
        return LimitSchema.of(current.algorithm()).change(current, node);
    }

    /** The algorithm names a rule file accepts, e.g. {@code token_bucket}. */
    public static List<String> algorithms() {
        return LimitSchema.algorithms();
    }

    /** The name errors use for this file. */
    public String source() {
        return source;
    }

    /** The limits by name, in file order; each limit's {@link Limit#name()} is its key. */
    public Map<String, Limit> limits() {
        return limits;
    }

    /** The rules by name, in file order; each rule's {@link Rule#name()} is its key. */
    public Map<String, Rule> rules() {
        return rules;
    }

    /**
     * The names of the rules that choose their own mode ({@code mode}, or one of its options); the others have
     * the default, exact, which a server may replace with its own default ({@code sluice serve --redis-mode}).
     */
    public java.util.Set<String> rulesWithOwnMode() {
        return ownModes;
    }

    private static Limit defineLimit(String name, Node definition) throws RuleFileException {
        Map<String, Node> members = definition.members("a map of an algorithm and its parameters");
        Node algorithmNode = members.get("algorithm");
        if (algorithmNode == null) {
            throw definition.error("missing 'algorithm': one of " + String.join(", ", LimitSchema.algorithms()));
        }
        String algorithm = algorithmNode.string("an algorithm name");
        LimitSchema schema = LimitSchema.of(algorithm);
        if (schema == null) {
            throw algorithmNode.error("unknown algorithm \"" + algorithm + "\"; expected one of "
                    + String.join(", ", LimitSchema.algorithms()));
        }
        return schema.define(name, definition);
    }

    /** The fields that choose a rule's mode: a rule with none of them has the default (exact, or a server's). */
    private static final List<String> MODE_FIELDS = List.of("mode", "lease_ttl", "max_batch", "sync_interval");

    /** The fields a rule may have besides its limits. */
    static final List<String> RULE_FIELDS = List.of("limits", "mode", "lease_ttl", "max_batch",
            "sync_interval", "on_failure", "fallback_share", "shadow", "tiers", "lockout");

    /** The limits a list of limit names names (a rule's or a tier's {@code limits}), each one the file defines. */
    static List<Limit> namedLimits(Node listNode, Map<String, Limit> limits) throws RuleFileException {
        List<Node> items = listNode.items("a list of limit names");
        if (items.isEmpty()) {
            throw listNode.error("expected at least one limit name");
        }
        List<Limit> chosen = new ArrayList<>();
        for (Node item : items) {
            String limitName = item.string("a limit name");
            Limit limit = limits.get(limitName);
            if (limit == null) {
                throw item.error("unknown limit \"" + limitName + "\"; the file defines "
                        + String.join(", ", limits.keySet()));
            }
            chosen.add(limit);
        }
        return chosen;
    }

    private static Rule defineRule(String name, Node definition, Map<String, Limit> limits) throws RuleFileException {
        Map<String, Node> members = definition.members("a map with 'limits': a list of limit names");
        for (Map.Entry<String, Node> e : members.entrySet()) {
            if (!RULE_FIELDS.contains(e.getKey())) {
                throw e.getValue().error("unknown field; a rule has " + String.join(", ", RULE_FIELDS));
            }
        }
        Node listNode = members.get("limits");
        if (listNode == null) {
            throw definition.error("missing 'limits': a list of limit names");
        }
        List<Limit> chosen = namedLimits(listNode, limits);
        Rule rule;
        try {
            rule = Rule.of(name, chosen);
        } catch (IllegalArgumentException e) {
            throw (e.getMessage().startsWith("rule name") ? definition : listNode).error(e.getMessage());
        }
        Node modeNode = members.get("mode");
        if (modeNode != null || members.containsKey("lease_ttl") || members.containsKey("max_batch")
                || members.containsKey("sync_interval")) {
            Mode mode = defineMode(modeNode == null ? definition : modeNode, members);
            try {
                rule = rule.withMode(mode);
            } catch (IllegalArgumentException e) {
                throw (modeNode == null ? definition : modeNode).error(e.getMessage());
            }
        }
        Node shadowNode = members.get("shadow");
        if (shadowNode != null) {
            rule = defineShadow(rule, shadowNode);
        }
        Node lockoutNode = members.get("lockout");
        if (lockoutNode != null) {
            rule = LockoutField.apply(rule, lockoutNode);
        }
        Node policyNode = members.get("on_failure");
        if (policyNode != null || members.containsKey("fallback_share")) {
            FailurePolicy policy = definePolicy(policyNode == null ? definition : policyNode, members);
            try {
                rule = rule.withFailurePolicy(policy);
            } catch (IllegalArgumentException e) {
                // The share is what leaves a limit without permits.
                Node share = members.get("fallback_share");
                throw (share != null ? share : policyNode == null ? definition : policyNode).error(e.getMessage());
            }
        }
        Node tiersNode = members.get("tiers");
        if (tiersNode != null) {
            rule = TierSchema.apply(rule, tiersNode, limits); // last: a tier runs in the rule's mode and policy
        }
        return rule;
    }

    /**
     * {@code shadow}: {@code true} (every limit of the rule decides and counts but never rejects), {@code false},
     * or a list of the rule's limit names that are shadow limits.
     */
    private static Rule defineShadow(Rule rule, Node shadowNode) throws RuleFileException {
        String expected = "true, false or a list of the rule's limit names";
        if (shadowNode.kind() == Node.Kind.BOOLEAN) {
            try {
                return shadowNode.bool(expected) ? rule.asShadow() : rule;
            } catch (IllegalArgumentException e) {
                throw shadowNode.error(e.getMessage());
            }
        }
        if (shadowNode.kind() != Node.Kind.ARRAY) {
            throw shadowNode.error("expected " + expected + "; was " + shadowNode.describe());
        }
        List<String> names = new ArrayList<>();
        for (Node item : shadowNode.items(expected)) {
            String limitName = item.string("a limit name of this rule");
            if (rule.limit(limitName) == null) {
                throw item.error("\"" + limitName + "\" is not a limit of this rule; its limits are "
                        + String.join(", ", rule.limits().stream().map(Limit::name).toList()));
            }
            if (names.contains(limitName)) {
                throw item.error("\"" + limitName + "\" appears twice");
            }
            names.add(limitName);
        }
        try {
            return rule.withShadow(names.toArray(String[]::new));
        } catch (IllegalArgumentException e) {
            throw shadowNode.error(e.getMessage());
        }
    }

    /** {@code mode} and the options that belong to it: {@code lease_ttl}, {@code max_batch}, {@code sync_interval}. */
    private static Mode defineMode(Node at, Map<String, Node> members) throws RuleFileException {
        Node modeNode = members.get("mode");
        String kind = modeNode == null ? "exact" : modeNode.string("one of exact, coalesced, leased, synced");
        Node ttl = members.get("lease_ttl");
        Node batch = members.get("max_batch");
        Node interval = members.get("sync_interval");
        for (Node option : new Node[] {ttl, batch}) {
            if (option != null && !kind.equals("leased")) {
                throw option.error("applies to mode leased only; this rule's mode is " + kind);
            }
        }
        if (interval != null && !kind.equals("synced")) {
            throw interval.error("applies to mode synced only; this rule's mode is " + kind);
        }
        try {
            switch (kind) {
                case "exact":
                    return Mode.exact();
                case "coalesced":
                    return Mode.coalesced();
                case "leased": {
                    Mode mode = Mode.leased();
                    if (ttl != null) {
                        mode = mode.withLeaseTtl(duration(ttl));
                    }
                    if (batch != null) {
                        mode = mode.withMaxBatch(longValue(batch, "an integer number of permits"));
                    }
                    return mode;
                }
                case "synced":
                    return Mode.synced(interval == null ? Mode.DEFAULT_SYNC_INTERVAL : duration(interval));
                default:
                    throw at.error("unknown mode \"" + kind + "\"; expected one of exact, coalesced, leased, synced");
            }
        } catch (IllegalArgumentException e) {
            String field = e.getMessage().substring(0, Math.max(0, e.getMessage().indexOf(' ')));
            Node culprit = members.get(field);
            throw (culprit == null ? at : culprit).error(e.getMessage());
        }
    }

    /** {@code on_failure} and, for {@code local_fallback}, {@code fallback_share}. */
    private static FailurePolicy definePolicy(Node at, Map<String, Node> members) throws RuleFileException {
        Node policyNode = members.get("on_failure");
        String kind = policyNode == null ? "raise"
                : policyNode.string("one of raise, fail_open, fail_closed, local_fallback");
        Node shareNode = members.get("fallback_share");
        if (shareNode != null && !kind.equals("local_fallback")) {
            throw shareNode.error("applies to on_failure: local_fallback only; this rule's on_failure is " + kind);
        }
        return failurePolicy(kind, shareNode, at);
    }

    /**
     * The policy {@code on_failure: kind} names, with {@code fallback_share} for {@code local_fallback}; Sluice
     * rule files and envoyproxy/ratelimit configurations read it alike. Errors point at {@code where}.
     */
    static FailurePolicy failurePolicy(String kind, Node shareNode, Node where) throws RuleFileException {
        switch (kind) {
            case "raise":
                return FailurePolicy.raise();
            case "fail_open":
                return FailurePolicy.failOpen();
            case "fail_closed":
                return FailurePolicy.failClosed();
            case "local_fallback":
                if (shareNode == null) {
                    throw where.error("local_fallback needs fallback_share: the share of each limit a node enforces "
                            + "alone, in (0, 1], e.g. 0.25 for four nodes");
                }
                try {
                    return FailurePolicy.localFallback(shareNode.number("a number in (0, 1]").doubleValue());
                } catch (IllegalArgumentException e) {
                    throw shareNode.error(e.getMessage());
                }
            default:
                throw where.error("unknown on_failure \"" + kind
                        + "\"; expected one of raise, fail_open, fail_closed, local_fallback");
        }
    }

    private static Duration duration(Node n) throws RuleFileException {
        try {
            return Durations.parse(n.string(Durations.EXPECTED));
        } catch (IllegalArgumentException e) {
            throw n.error(e.getMessage());
        }
    }

    private static long longValue(Node n, String expected) throws RuleFileException {
        java.math.BigInteger v = n.integer(expected);
        if (v.bitLength() > 62) {
            throw n.error("expected " + expected + "; was " + v);
        }
        return v.longValue();
    }

    private static Node readDocument(String source, String text) throws RuleFileException {
        boolean json = isJson(source, text);
        try (JsonParser p = (json ? JSON : YAML).createParser(text)) {
            if (p.nextToken() == null) {
                throw new RuleFileException(source, 1, 0, "", "empty file; expected a map with 'limits'");
            }
            Node root = Node.read(p, source, "", p.currentTokenLocation());
            if (p.nextToken() != null) {
                JsonLocation at = p.currentTokenLocation();
                throw new RuleFileException(source, at.getLineNr(), at.getColumnNr(), "",
                        "expected the end of the file after the rule file's map");
            }
            return root;
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            throw new RuleFileException(source, at == null ? 0 : at.getLineNr(), at == null ? 0 : at.getColumnNr(), "",
                    "not valid " + (json ? "JSON" : "YAML") + ": " + oneLine(e.getOriginalMessage()));
        } catch (IOException e) {
            throw new RuleFileException(source, 0, 0, "", "cannot be parsed: " + e.getMessage());
        }
    }

    /** Parser messages may span lines; an error message should not. */
    private static String oneLine(String message) {
        return message.strip().replaceAll("\\s*\\R\\s*", "; ");
    }

    private static boolean isJson(String source, String text) {
        String name = source.toLowerCase(Locale.ROOT);
        if (name.endsWith(".json")) {
            return true;
        }
        if (name.endsWith(".yaml") || name.endsWith(".yml")) {
            return false;
        }
        return text.stripLeading().startsWith("{");
    }
}
