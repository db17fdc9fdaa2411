package io.sluice.rules;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.sluice.FailurePolicy;
import io.sluice.rules.EnvoyConfig.RateLimit;
import io.sluice.rules.EnvoyConfig.Unit;
import io.sluice.rules.EnvoyDescriptorTree.Branch;
import io.sluice.rules.EnvoyDescriptorTree.Level;
import io.sluice.rules.EnvoyDescriptorTree.Wildcard;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads envoyproxy/ratelimit's YAML into {@link EnvoyConfig}'s descriptor trees and {@code rate_limit} blocks:
 * every field checked where it belongs, errors naming the file, line, column and field. Stateless.
 */
final class EnvoyConfigParser {

    /** Every field a descriptor may have. */
    private static final Set<String> DESCRIPTOR_FIELDS = Set.of("key", "value", "rate_limit", "descriptors",
            "shadow_mode", "quota_mode", "detailed_metric", "value_to_metric", "share_threshold", "metadata",
            "on_failure");
    private static final String DESCRIPTOR_FIELD_LIST = "key, value, rate_limit, descriptors, shadow_mode,"
            + " quota_mode, detailed_metric, value_to_metric, share_threshold, metadata and on_failure";

    private static final YAMLFactory YAML = new YAMLFactory();
    private static final long MAX_REQUESTS_PER_UNIT = 0xFFFF_FFFFL;

    private EnvoyConfigParser() {
    }

    /**
     * Parses {@code text}, one or more YAML documents, each a domain, into {@code domains} (each domain's
     * descriptor tree) and {@code rateLimits} (each domain's blocks in file order).
     */
    static void parse(String source, String text, Map<String, Level> domains,
                      Map<String, List<RateLimit>> rateLimits) throws RuleFileException {
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
