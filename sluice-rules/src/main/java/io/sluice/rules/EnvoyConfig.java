package io.sluice.rules;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.Rule;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * envoyproxy/ratelimit's YAML configuration, read as that service reads it, so its users can point Sluice at
 * their existing files: a {@code domain}, and a tree of {@code descriptors} of {@code key} and optional
 * {@code value}, each optionally carrying a {@code rate_limit} ({@code unit} and {@code requests_per_unit},
 * or {@code unlimited}), with {@code name}/{@code replaces}, {@code shadow_mode}, {@code quota_mode},
 * {@code detailed_metric}, {@code value_to_metric}, {@code share_threshold} and {@code metadata}; and, a Sluice
 * addition, {@code on_failure} (at the top or on a descriptor, inherited by the descriptors below it).
 *
 * <pre>
 * domain: messaging
 * descriptors:
 *   - key: message_type
 *     value: marketing
 *     descriptors:
 *       - key: to_number
 *         rate_limit: {unit: day, requests_per_unit: 5}
 *   - key: to_number
 *     rate_limit: {unit: day, requests_per_unit: 100}
 * </pre>
 *
 * <p>One file may hold several YAML documents ({@code ---}), one domain each; a domain may appear once.
 * {@link #match} finds the limit for a request descriptor exactly as envoyproxy/ratelimit's
 * {@code GetLimit} does: at each level {@code key_value} first, then the wildcards in file order (each
 * {@code *} anywhere in the value matches any run of characters, possibly empty), then {@code key} alone (the
 * "default" for any value); the limit applies only when the request's last entry lands on it, so a request
 * deeper or shallower than the configuration matches nothing. {@link #lookup} also gives the statistics key
 * envoy would use for the request ({@code detailed_metric}, {@code value_to_metric}, {@code share_threshold})
 * and the entries whose counter is shared by every value its wildcard matches ({@code share_threshold}).
 *
 * <p>Deliberate differences, all on the side of telling the user early: keys are checked where they belong
 * (envoy accepts any of its keys anywhere); {@code requests_per_unit} must be written unless
 * {@code unlimited} (envoy reads a missing one as 0, which rejects every request); wildcards are honoured at
 * every level of the tree. Errors name the file, line, column and field, as {@link RuleFile}'s do.
 * Immutable.
 */
public final class EnvoyConfig {

    /** Time units of envoy's {@code rate_limit.unit}; windows are aligned to the Unix epoch, as envoy's are. */
    public enum Unit {
        SECOND(1), MINUTE(60), HOUR(3_600), DAY(86_400), WEEK(7 * 86_400L),
        /** 30 days, as envoyproxy/ratelimit divides by. */
        MONTH(30 * 86_400L),
        /** 365 days, as envoyproxy/ratelimit divides by. */
        YEAR(365 * 86_400L);

        private final long seconds;

        Unit(long seconds) {
            this.seconds = seconds;
        }

        public long seconds() {
            return seconds;
        }

        public Duration duration() {
            return Duration.ofSeconds(seconds);
        }

        /** The name as the YAML writes it, e.g. {@code minute}. */
        public String word() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One {@code rate_limit} block and where it sits.
     *
     * @param domain          the domain
     * @param path            the descriptor path below the domain as envoy names it in statistics, e.g.
     *                        {@code message_type_marketing.to_number}: each level's {@code key} or
     *                        {@code key_value}, joined by dots
     * @param name            {@code rate_limit.name}, or empty
     * @param requestsPerUnit {@code requests_per_unit}, in [0, 2^32 − 1]; 0 rejects every request
     * @param unit            the window; null when {@code unlimited}
     * @param unlimited       {@code unlimited: true}: always OK, never counted
     * @param shadowMode      {@code shadow_mode: true}: counted and reported, but the code is always OK
     * @param replaces        names of limits this one replaces when both match one request
     * @param detailedMetric  {@code detailed_metric: true}: statistics per request value
     * @param quotaMode       {@code quota_mode: true}: over the limit fails the request only when every
     *                        quota-mode descriptor of it is over
     * @param metadata        {@code metadata}, as plain maps, lists and scalars; empty when absent
     * @param onFailure       {@code on_failure} in force for this block (its own or inherited), or null for the
     *                        server's default (the store's error answered as UNAVAILABLE)
     */
    public record RateLimit(String domain, String path, String name, long requestsPerUnit, Unit unit,
                            boolean unlimited, boolean shadowMode, List<String> replaces, boolean detailedMetric,
                            boolean quotaMode, Map<String, Object> metadata, FailurePolicy onFailure) {

        /** envoy's full key, {@code domain.path}: the statistics name of the limit. */
        public String fullKey() {
            return domain + "." + path;
        }
    }

    /** One entry of a request descriptor. */
    public record Entry(String key, String value) {}

    /**
     * What a request descriptor falls under.
     *
     * @param rateLimit   the block that applies
     * @param statsKey    envoy's statistics key for this request, {@code domain.path}: the block's full key, or
     *                    with request values where {@code detailed_metric} or {@code value_to_metric} ask for them
     * @param sharedValue per request entry, the wildcard value whose counter that entry shares
     *                    ({@code share_threshold}), or null where the entry's own value keys the counter
     */
    public record Match(RateLimit rateLimit, String statsKey, List<String> sharedValue) {}

    /** The descriptors of one level, by {@code key} or {@code key_value}, and those containing {@code *}. */
    private record Level(Map<String, Branch> byKey, List<Wildcard> wildcards) {
        static final Level EMPTY = new Level(Map.of(), List.of());
    }

    /** A {@code key_value} containing {@code *}, split around its stars once when read. */
    private record Wildcard(String finalKey, List<String> parts) {

        /** Whether {@code text} is the parts in order with anything (or nothing) between them. */
        boolean matches(String text) {
            if (parts.size() == 1) {
                return parts.get(0).equals(text);
            }
            String first = parts.get(0);
            String last = parts.get(parts.size() - 1);
            if (text.length() < first.length() + last.length() || !text.startsWith(first) || !text.endsWith(last)) {
                return false;
            }
            int from = first.length();
            int to = text.length() - last.length();
            for (int i = 1; i < parts.size() - 1; i++) {
                int at = text.indexOf(parts.get(i), from);
                if (at < 0 || at + parts.get(i).length() > to) {
                    return false;
                }
                from = at + parts.get(i).length();
            }
            return true;
        }
    }

    /** One configured descriptor: its limit (or null), the level below it and its statistics flags. */
    private record Branch(RateLimit rateLimit, Level children, boolean valueToMetric, boolean shareThreshold) {}

    /** Every field a descriptor may have. */
    private static final Set<String> DESCRIPTOR_FIELDS = Set.of("key", "value", "rate_limit", "descriptors",
            "shadow_mode", "quota_mode", "detailed_metric", "value_to_metric", "share_threshold", "metadata",
            "on_failure");
    private static final String DESCRIPTOR_FIELD_LIST = "key, value, rate_limit, descriptors, shadow_mode,"
            + " quota_mode, detailed_metric, value_to_metric, share_threshold, metadata and on_failure";

    private static final YAMLFactory YAML = new YAMLFactory();
    /** A top-level {@code domain:} or {@code descriptors:} line, which a Sluice rule file cannot have. */
    private static final Pattern DOMAIN_LINE = Pattern.compile("(?m)^(domain|descriptors)\\s*:");
    private static final long MAX_REQUESTS_PER_UNIT = 0xFFFF_FFFFL;

    private final String source;
    private final Map<String, Level> domains;
    private final Map<String, List<RateLimit>> rateLimits;

    private EnvoyConfig(String source, Map<String, Level> domains, Map<String, List<RateLimit>> rateLimits) {
        this.source = source;
        this.domains = Collections.unmodifiableMap(domains);
        this.rateLimits = Collections.unmodifiableMap(rateLimits);
    }

    /**
     * Whether {@code text} is an envoyproxy/ratelimit configuration rather than a Sluice rule file: it has a
     * top-level {@code domain:} or {@code descriptors:} line, which a rule file cannot have (so a configuration
     * missing its domain is refused as one, with envoy's message).
     */
    public static boolean looksLikeEnvoyConfig(String text) {
        return DOMAIN_LINE.matcher(text).find();
    }

    /**
     * Reads a configuration file; errors name it as {@code file.toString()}.
     *
     * @throws IOException       when the file cannot be read
     * @throws RuleFileException when its content is not a valid configuration
     */
    public static EnvoyConfig read(Path file) throws IOException, RuleFileException {
        return parse(file.toString(), Files.readString(file));
    }

    /**
     * Parses configuration text: one or more YAML documents, each a domain.
     *
     * @throws RuleFileException naming the line, column and field at fault
     */
    public static EnvoyConfig parse(String source, String text) throws RuleFileException {
        Map<String, Level> domains = new LinkedHashMap<>();
        Map<String, List<RateLimit>> rateLimits = new LinkedHashMap<>();
        try (JsonParser p = YAML.createParser(text)) {
            JsonToken token = p.nextToken();
            if (token == null) {
                throw new RuleFileException(source, 1, 0, "", "empty file; expected a map with 'domain' and"
                        + " 'descriptors'");
            }
            while (token != null) {
                Node root = Node.read(p, source, "", p.currentTokenLocation());
                readDomain(root, domains, rateLimits);
                token = p.nextToken();
            }
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            throw new RuleFileException(source, at == null ? 0 : at.getLineNr(), at == null ? 0 : at.getColumnNr(),
                    "", "not valid YAML: " + e.getOriginalMessage().strip().replaceAll("\\s*\\R\\s*", "; "));
        } catch (IOException e) {
            throw new RuleFileException(source, 0, 0, "", "cannot be parsed: " + e.getMessage());
        }
        return new EnvoyConfig(source, domains, rateLimits);
    }

    /**
     * Several configurations as one, as envoyproxy/ratelimit loads a directory of files.
     *
     * @throws RuleFileException when two of them configure the same domain
     */
    public static EnvoyConfig merge(List<EnvoyConfig> configs) throws RuleFileException {
        Map<String, Level> domains = new LinkedHashMap<>();
        Map<String, List<RateLimit>> rateLimits = new LinkedHashMap<>();
        Map<String, String> sources = new LinkedHashMap<>();
        List<String> names = new ArrayList<>();
        for (EnvoyConfig c : configs) {
            names.add(c.source);
            for (Map.Entry<String, Level> d : c.domains.entrySet()) {
                String before = sources.putIfAbsent(d.getKey(), c.source);
                if (before != null) {
                    throw new RuleFileException(c.source, 0, 0, "domain", "duplicate domain '" + d.getKey()
                            + "', already configured in " + before);
                }
                domains.put(d.getKey(), d.getValue());
                rateLimits.put(d.getKey(), c.rateLimits.get(d.getKey()));
            }
        }
        return new EnvoyConfig(String.join(", ", names), domains, rateLimits);
    }

    /**
     * The configuration as Sluice rules, for tools that address rules by name ({@code sluice replay}): each
     * counted {@code rate_limit} block becomes a rule named by its full key ({@code domain.path}, e.g.
     * {@code messaging.message_type_marketing.to_number}) of one limit of the same name, an epoch-aligned
     * {@code fixed_window} counting rejected hits, as envoy's counter and {@code sluice serve} count, with the
     * block's {@code on_failure}. Blocks that count nothing ({@code unlimited}, {@code requests_per_unit: 0})
     * have no rule.
     *
     * @throws RuleFileException when a full key is too long to be a rule name
     */
    public RuleFile asRuleFile() throws RuleFileException {
        Map<String, Limit> limits = new LinkedHashMap<>();
        Map<String, Rule> rules = new LinkedHashMap<>();
        for (List<RateLimit> blocks : rateLimits.values()) {
            for (RateLimit b : blocks) {
                if (b.unlimited() || b.requestsPerUnit() == 0) {
                    continue;
                }
                String name = b.fullKey();
                FixedWindow limit = new FixedWindow(name, b.requestsPerUnit(),
                        b.unit().duration(), FixedWindow.Align.EPOCH, true);
                Rule rule;
                try {
                    rule = Rule.of(name, limit);
                } catch (IllegalArgumentException e) {
                    throw new RuleFileException(source, 0, 0, "descriptors", "limit " + name
                            + " cannot be a rule: " + e.getMessage());
                }
                if (b.onFailure() != null) {
                    rule = rule.withFailurePolicy(b.onFailure());
                }
                limits.put(name, limit);
                rules.put(name, rule);
            }
        }
        return RuleFile.of(source, limits, rules);
    }

    /** The file(s) this configuration was read from. */
    public String source() {
        return source;
    }

    /** The configured domains, in file order. */
    public Set<String> domains() {
        return domains.keySet();
    }

    /** Every {@code rate_limit} block of {@code domain}, in file order (depth first); empty for an unknown domain. */
    public List<RateLimit> rateLimits(String domain) {
        return rateLimits.getOrDefault(domain, List.of());
    }

    /**
     * The limit a request descriptor of {@code domain} falls under, or null when none applies (an unknown
     * domain, no matching descriptor, or a match whose depth differs from the request's).
     */
    public RateLimit match(String domain, List<Entry> entries) {
        Match m = lookup(domain, entries);
        return m == null ? null : m.rateLimit();
    }

    /**
     * The limit a request descriptor of {@code domain} falls under, with the statistics key and shared counters
     * envoyproxy/ratelimit would use for it; null when no limit applies (as for {@link #match}). A descriptor
     * without entries matches nothing.
     */
    public Match lookup(String domain, List<Entry> entries) {
        Level level = domains.get(domain);
        if (level == null) {
            return null;
        }
        RateLimit found = null;
        StringBuilder detailedKey = new StringBuilder(domain);
        StringBuilder valueKey = new StringBuilder(domain);
        String[] shared = null;
        for (int i = 0; i < entries.size(); i++) {
            Entry entry = entries.get(i);
            String keyValue = entry.key() + "_" + entry.value();
            detailedKey.append('.').append(keyValue);
            Branch next = level.byKey().get(keyValue);
            String wildcardKey = null;
            if (next == null) {
                for (Wildcard w : level.wildcards()) {
                    if (w.matches(keyValue)) {
                        next = level.byKey().get(w.finalKey());
                        wildcardKey = w.finalKey();
                        break;
                    }
                }
            }
            boolean byValue = next != null;
            if (next == null) {
                next = level.byKey().get(entry.key());
            }
            // The statistics key names each level as envoy does: the configured wildcard, the request's
            // value where value_to_metric asks for it, or the key alone for a default descriptor.
            valueKey.append('.').append(entry.key());
            if (next != null) {
                String patternValue = wildcardKey == null ? null : stripPrefix(wildcardKey, entry.key() + "_");
                String value;
                if (wildcardKey != null && next.shareThreshold()) {
                    if (shared == null) {
                        shared = new String[entries.size()];
                    }
                    shared[i] = patternValue;
                    value = patternValue;
                } else if (wildcardKey != null) {
                    value = next.valueToMetric() ? entry.value() : patternValue;
                } else if (byValue) {
                    value = entry.value();
                } else {
                    value = next.valueToMetric() ? entry.value() : "";
                }
                if (!value.isEmpty()) {
                    valueKey.append('_').append(value);
                }
            }
            if (next != null && next.rateLimit() != null && i == entries.size() - 1) {
                found = next.rateLimit();
            }
            if (next == null || next.children().byKey().isEmpty()) {
                break;
            }
            level = next.children();
        }
        if (found == null) {
            return null;
        }
        String statsKey;
        if (found.detailedMetric() && shared != null) {
            // share_threshold keeps one statistic per wildcard even when detailed_metric asks for values.
            StringBuilder k = new StringBuilder(domain);
            for (int i = 0; i < entries.size(); i++) {
                Entry e = entries.get(i);
                k.append('.').append(e.key());
                String v = shared[i] != null ? shared[i] : e.value();
                if (!v.isEmpty()) {
                    k.append('_').append(v);
                }
            }
            statsKey = k.toString();
        } else if (found.detailedMetric()) {
            statsKey = detailedKey.toString();
        } else {
            statsKey = valueKey.toString();
        }
        return new Match(found, statsKey, shared == null ? null : Collections.unmodifiableList(
                java.util.Arrays.asList(shared)));
    }

    private static String stripPrefix(String text, String prefix) {
        return text.startsWith(prefix) ? text.substring(prefix.length()) : text;
    }

    private static void readDomain(Node root, Map<String, Level> domains,
                                   Map<String, List<RateLimit>> rateLimits) throws RuleFileException {
        Map<String, Node> top = root.members("a map with 'domain' and 'descriptors'");
        for (Map.Entry<String, Node> e : top.entrySet()) {
            if (!Set.of("domain", "descriptors", "on_failure", "fallback_share").contains(e.getKey())) {
                throw e.getValue().error("unknown key '" + e.getKey() + "'; a configuration has domain,"
                        + " descriptors and (a Sluice addition) on_failure");
            }
        }
        Node domainNode = top.get("domain");
        if (domainNode == null || domainNode.kind() == Node.Kind.NULL) {
            throw root.error("config file cannot have empty domain: 'domain' names the configuration requests use");
        }
        String domain = domainNode.string("the domain's name");
        if (domain.isEmpty()) {
            throw domainNode.error("config file cannot have empty domain");
        }
        if (domains.containsKey(domain)) {
            throw domainNode.error("duplicate domain '" + domain + "' in config file");
        }
        FailurePolicy policy = policy(top, null);
        List<RateLimit> limits = new ArrayList<>();
        domains.put(domain, readLevel(domain, "", top.get("descriptors"), limits, policy));
        rateLimits.put(domain, Collections.unmodifiableList(limits));
    }

    /**
     * The {@code on_failure} (with {@code fallback_share} for {@code local_fallback}) written among
     * {@code members}, else {@code inherited}.
     */
    private static FailurePolicy policy(Map<String, Node> members, FailurePolicy inherited) throws RuleFileException {
        Node policyNode = members.get("on_failure");
        Node shareNode = members.get("fallback_share");
        if (policyNode == null) {
            if (shareNode != null) {
                throw shareNode.error("applies to on_failure: local_fallback only, and no on_failure is written here");
            }
            return inherited;
        }
        String kind = policyNode.string("one of raise, fail_open, fail_closed, local_fallback");
        if (shareNode != null && !kind.equals("local_fallback")) {
            throw shareNode.error("applies to on_failure: local_fallback only; on_failure here is " + kind);
        }
        return RuleFile.failurePolicy(kind, shareNode, policyNode);
    }

    private static Level readLevel(String domain, String parentPath, Node node, List<RateLimit> limits,
                                   FailurePolicy inheritedPolicy) throws RuleFileException {
        if (node == null || node.kind() == Node.Kind.NULL) {
            return Level.EMPTY;
        }
        Map<String, Branch> byKey = new LinkedHashMap<>();
        List<Wildcard> wildcards = new ArrayList<>();
        for (Node item : node.items("a list of descriptors")) {
            Map<String, Node> members = item.members("a descriptor: a map with 'key' and optionally "
                    + DESCRIPTOR_FIELD_LIST.substring(DESCRIPTOR_FIELD_LIST.indexOf(',') + 2));
            for (Map.Entry<String, Node> e : members.entrySet()) {
                if (!DESCRIPTOR_FIELDS.contains(e.getKey()) && !e.getKey().equals("fallback_share")) {
                    throw e.getValue().error("unknown key '" + e.getKey() + "'; a descriptor has "
                            + DESCRIPTOR_FIELD_LIST);
                }
            }
            Node keyNode = members.get("key");
            if (keyNode == null || keyNode.kind() == Node.Kind.NULL) {
                throw item.error("descriptor has empty key");
            }
            String key = scalar(keyNode, "the descriptor's key");
            if (key.isEmpty()) {
                throw keyNode.error("descriptor has empty key");
            }
            Node valueNode = members.get("value");
            String value = valueNode == null || valueNode.kind() == Node.Kind.NULL ? ""
                    : scalar(valueNode, "the descriptor's value");
            String finalKey = value.isEmpty() ? key : key + "_" + value;
            String path = parentPath.isEmpty() ? finalKey : parentPath + "." + finalKey;
            if (byKey.containsKey(finalKey)) {
                throw keyNode.error("duplicate descriptor composite key '" + domain + "." + path + "'");
            }
            boolean shadow = flag(members.get("shadow_mode"));
            boolean quota = flag(members.get("quota_mode"));
            boolean detailed = flag(members.get("detailed_metric"));
            boolean valueToMetric = flag(members.get("value_to_metric"));
            boolean shareThreshold = flag(members.get("share_threshold"));
            if (shareThreshold && !finalKey.contains("*")) {
                throw members.get("share_threshold").error("share_threshold can only be used with wildcard values"
                        + " (containing '*'), but found key '" + finalKey + "'");
            }
            Map<String, Object> metadata = metadata(members.get("metadata"));
            FailurePolicy policy = policy(members, inheritedPolicy);
            RateLimit rateLimit = null;
            Node rateLimitNode = members.get("rate_limit");
            if (rateLimitNode != null && rateLimitNode.kind() != Node.Kind.NULL) {
                rateLimit = readRateLimit(domain, path, rateLimitNode, shadow, detailed, quota, metadata, policy);
                limits.add(rateLimit);
            }
            Level children = readLevel(domain, path, members.get("descriptors"), limits, policy);
            byKey.put(finalKey, new Branch(rateLimit, children, valueToMetric, shareThreshold));
            if (finalKey.contains("*")) {
                wildcards.add(new Wildcard(finalKey, List.of(finalKey.split("\\*", -1))));
            }
        }
        return new Level(Collections.unmodifiableMap(byKey), List.copyOf(wildcards));
    }

    /** {@code metadata}: any YAML map, kept as plain values (maps, lists, strings, numbers, booleans). */
    private static Map<String, Object> metadata(Node node) throws RuleFileException {
        if (node == null || node.kind() == Node.Kind.NULL) {
            return Map.of();
        }
        Object plain = plain(node);
        if (!(plain instanceof Map)) {
            throw node.error("error parsing metadata: expected a map, was " + node.describe());
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) plain;
        return map;
    }

    private static Object plain(Node node) throws RuleFileException {
        switch (node.kind()) {
            case OBJECT: {
                Map<String, Object> out = new LinkedHashMap<>();
                for (Map.Entry<String, Node> e : node.members("a map").entrySet()) {
                    out.put(e.getKey(), plain(e.getValue()));
                }
                return Collections.unmodifiableMap(out);
            }
            case ARRAY: {
                List<Object> out = new ArrayList<>();
                for (Node item : node.items("a list")) {
                    out.add(plain(item));
                }
                return Collections.unmodifiableList(out);
            }
            case STRING:
                return node.string("a string");
            case INTEGER:
                return node.integer("an integer");
            case DECIMAL:
                return node.number("a number");
            case BOOLEAN:
                return node.bool("a boolean");
            default:
                return null;
        }
    }

    private static RateLimit readRateLimit(String domain, String path, Node node, boolean shadow,
                                           boolean detailed, boolean quota, Map<String, Object> metadata,
                                           FailurePolicy policy) throws RuleFileException {
        Map<String, Node> members = node.members("a map with 'unit' and 'requests_per_unit' (or"
                + " 'unlimited: true'), and optionally 'name' and 'replaces'");
        for (Map.Entry<String, Node> e : members.entrySet()) {
            if (!Set.of("unit", "requests_per_unit", "unlimited", "name", "replaces").contains(e.getKey())) {
                throw e.getValue().error("unknown key '" + e.getKey() + "'; a rate_limit has unit,"
                        + " requests_per_unit, unlimited, name and replaces");
            }
        }
        boolean unlimited = flag(members.get("unlimited"));
        Node unitNode = members.get("unit");
        Unit unit = null;
        if (unitNode != null && unitNode.kind() != Node.Kind.NULL) {
            String word = unitNode.string("a unit: second, minute, hour, day, week, month or year");
            for (Unit u : Unit.values()) {
                if (u.name().equalsIgnoreCase(word)) {
                    unit = u;
                }
            }
            if (unit == null) {
                throw unitNode.error("invalid rate limit unit '" + word + "'; expected second, minute, hour, day,"
                        + " week, month or year");
            }
            if (unlimited) {
                throw unitNode.error("should not specify rate limit unit when unlimited");
            }
        } else if (!unlimited) {
            throw node.error("missing 'unit': second, minute, hour, day, week, month or year (or 'unlimited: true')");
        }
        Node rpuNode = members.get("requests_per_unit");
        long requestsPerUnit = 0;
        if (rpuNode != null) {
            BigInteger rpu = rpuNode.integer("an integer in [0, " + MAX_REQUESTS_PER_UNIT + "]");
            if (rpu.signum() < 0 || rpu.compareTo(BigInteger.valueOf(MAX_REQUESTS_PER_UNIT)) > 0) {
                throw rpuNode.error("requests_per_unit must be in [0, " + MAX_REQUESTS_PER_UNIT + "], was " + rpu);
            }
            requestsPerUnit = rpu.longValue();
        } else if (!unlimited) {
            throw node.error("missing 'requests_per_unit' (envoyproxy/ratelimit would read it as 0, which rejects"
                    + " every request; write requests_per_unit: 0 if that is meant)");
        }
        Node nameNode = members.get("name");
        String name = nameNode == null || nameNode.kind() == Node.Kind.NULL ? ""
                : nameNode.string("the limit's name");
        List<String> replaces = new ArrayList<>();
        Node replacesNode = members.get("replaces");
        if (replacesNode != null && replacesNode.kind() != Node.Kind.NULL) {
            for (Node item : replacesNode.items("a list of {name: LIMIT}")) {
                Map<String, Node> r = item.members("a map with 'name': the limit replaced");
                for (Map.Entry<String, Node> e : r.entrySet()) {
                    if (!e.getKey().equals("name")) {
                        throw e.getValue().error("unknown key '" + e.getKey() + "'; a replaces entry has 'name'");
                    }
                }
                Node replacedNode = r.get("name");
                String replaced = replacedNode == null || replacedNode.kind() == Node.Kind.NULL ? ""
                        : replacedNode.string("the name of a limit");
                if (replaced.isEmpty()) {
                    throw (replacedNode == null ? item : replacedNode).error("should not have an empty replaces entry");
                }
                if (replaced.equals(name)) {
                    throw replacedNode.error("replaces should not contain name of same descriptor");
                }
                replaces.add(replaced);
            }
        }
        return new RateLimit(domain, path, name, requestsPerUnit, unit, unlimited, shadow, List.copyOf(replaces),
                detailed, quota, metadata, policy);
    }

    /** A key or value: envoy reads numbers and booleans written without quotes as their text. */
    private static String scalar(Node node, String expected) throws RuleFileException {
        switch (node.kind()) {
            case STRING:
                return node.string(expected);
            case INTEGER:
                return node.integer(expected).toString();
            case DECIMAL:
                return node.number(expected).toPlainString();
            case BOOLEAN:
                return String.valueOf(node.bool(expected));
            default:
                throw node.error("expected " + expected + " (a string); was " + node.describe());
        }
    }

    private static boolean flag(Node node) throws RuleFileException {
        return node != null && node.kind() != Node.Kind.NULL && node.bool("true or false");
    }
}
