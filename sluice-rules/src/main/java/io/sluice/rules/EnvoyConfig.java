package io.sluice.rules;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
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
 * or {@code unlimited}), with {@code name}/{@code replaces}, {@code shadow_mode} and {@code detailed_metric}.
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
 * {@code GetLimit} does: at each level {@code key_value} first, then a wildcard value ending in {@code *}
 * (a prefix match), then {@code key} alone (the "default" for any value); the limit applies only when the
 * request's last entry lands on it, so a request deeper or shallower than the configuration matches nothing.
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
     * @param detailedMetric  {@code detailed_metric: true} (statistics only)
     */
    public record RateLimit(String domain, String path, String name, long requestsPerUnit, Unit unit,
                            boolean unlimited, boolean shadowMode, List<String> replaces, boolean detailedMetric) {

        /** envoy's full key, {@code domain.path}: the statistics name of the limit. */
        public String fullKey() {
            return domain + "." + path;
        }
    }

    /** One entry of a request descriptor. */
    public record Entry(String key, String value) {}

    /** The descriptors of one level, by {@code key} or {@code key_value}, and which of those end in {@code *}. */
    private record Level(Map<String, Branch> byKey, List<String> wildcardKeys) {
        static final Level EMPTY = new Level(Map.of(), List.of());
    }

    /** One configured descriptor: its limit (or null) and the level below it. */
    private record Branch(RateLimit rateLimit, Level children) {}

    private static final YAMLFactory YAML = new YAMLFactory();
    private static final Pattern DOMAIN_LINE = Pattern.compile("(?m)^domain\\s*:");
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
     * top-level {@code domain:} line, which a rule file cannot have.
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
        Level level = domains.get(domain);
        if (level == null) {
            return null;
        }
        RateLimit found = null;
        for (int i = 0; i < entries.size(); i++) {
            Entry entry = entries.get(i);
            String keyValue = entry.key() + "_" + entry.value();
            Branch next = level.byKey().get(keyValue);
            if (next == null) {
                for (String wildcard : level.wildcardKeys()) {
                    if (keyValue.startsWith(wildcard.substring(0, wildcard.length() - 1))) {
                        next = level.byKey().get(wildcard);
                        break;
                    }
                }
            }
            if (next == null) {
                next = level.byKey().get(entry.key());
            }
            if (next != null && next.rateLimit() != null && i == entries.size() - 1) {
                found = next.rateLimit();
            }
            if (next == null || next.children().byKey().isEmpty()) {
                break;
            }
            level = next.children();
        }
        return found;
    }

    private static void readDomain(Node root, Map<String, Level> domains,
                                   Map<String, List<RateLimit>> rateLimits) throws RuleFileException {
        Map<String, Node> top = root.members("a map with 'domain' and 'descriptors'");
        for (Map.Entry<String, Node> e : top.entrySet()) {
            if (!e.getKey().equals("domain") && !e.getKey().equals("descriptors")) {
                throw e.getValue().error("unknown field; a configuration has 'domain' and 'descriptors'");
            }
        }
        Node domainNode = top.get("domain");
        if (domainNode == null) {
            throw root.error("missing 'domain': the name requests use to select this configuration");
        }
        String domain = domainNode.string("the domain's name");
        if (domain.isEmpty()) {
            throw domainNode.error("config file cannot have empty domain");
        }
        if (domains.containsKey(domain)) {
            throw domainNode.error("duplicate domain '" + domain + "' in config file");
        }
        List<RateLimit> limits = new ArrayList<>();
        domains.put(domain, readLevel(domain, "", top.get("descriptors"), limits));
        rateLimits.put(domain, Collections.unmodifiableList(limits));
    }

    private static Level readLevel(String domain, String parentPath, Node node, List<RateLimit> limits)
            throws RuleFileException {
        if (node == null || node.kind() == Node.Kind.NULL) {
            return Level.EMPTY;
        }
        Map<String, Branch> byKey = new LinkedHashMap<>();
        List<String> wildcards = new ArrayList<>();
        for (Node item : node.items("a list of descriptors")) {
            Map<String, Node> members = item.members("a descriptor: a map with 'key' and"
                    + " optionally 'value', 'rate_limit', 'descriptors', 'shadow_mode', 'detailed_metric'");
            for (Map.Entry<String, Node> e : members.entrySet()) {
                if (!Set.of("key", "value", "rate_limit", "descriptors", "shadow_mode", "detailed_metric")
                        .contains(e.getKey())) {
                    throw e.getValue().error("unknown field; a descriptor has key, value, rate_limit, descriptors,"
                            + " shadow_mode and detailed_metric");
                }
            }
            Node keyNode = members.get("key");
            if (keyNode == null) {
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
            boolean detailed = flag(members.get("detailed_metric"));
            RateLimit rateLimit = null;
            Node rateLimitNode = members.get("rate_limit");
            if (rateLimitNode != null && rateLimitNode.kind() != Node.Kind.NULL) {
                rateLimit = readRateLimit(domain, path, rateLimitNode, shadow, detailed);
                limits.add(rateLimit);
            }
            Level children = readLevel(domain, path, members.get("descriptors"), limits);
            byKey.put(finalKey, new Branch(rateLimit, children));
            if (finalKey.endsWith("*")) {
                wildcards.add(finalKey);
            }
        }
        return new Level(Collections.unmodifiableMap(byKey), List.copyOf(wildcards));
    }

    private static RateLimit readRateLimit(String domain, String path, Node node, boolean shadow,
                                           boolean detailed) throws RuleFileException {
        Map<String, Node> members = node.members("a map with 'unit' and 'requests_per_unit' (or"
                + " 'unlimited: true'), and optionally 'name' and 'replaces'");
        for (Map.Entry<String, Node> e : members.entrySet()) {
            if (!Set.of("unit", "requests_per_unit", "unlimited", "name", "replaces").contains(e.getKey())) {
                throw e.getValue().error("unknown field; a rate_limit has unit, requests_per_unit, unlimited, name"
                        + " and replaces");
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
                        throw e.getValue().error("unknown field; a replaces entry has 'name'");
                    }
                }
                Node replacedNode = r.get("name");
                String replaced = replacedNode == null ? "" : replacedNode.string("the name of a limit");
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
                detailed);
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
