package io.sluice.rules;

import io.sluice.Limit;
import io.sluice.Rule;
import io.sluice.Tier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A rule's {@code tiers} in a rule file: a map of tier names, in the order they are tried (the first whose keys
 * match a key decides it), to {@code keys} (exact keys and {@code *} globs) and exactly one of {@code limits}
 * (names of the file's limits, in place of the rule's), {@code unlimited: true} or {@code blocked: true}.
 *
 * <pre>
 * rules:
 *   api:
 *     limits: [per_minute]
 *     tiers:
 *       premium:  {keys: [tenant-acme, "tenant-big-*"], limits: [premium_per_minute]}
 *       internal: {keys: ["svc-*"], unlimited: true}
 *       blocked:  {keys: [tenant-evil], blocked: true}
 * </pre>
 *
 * Errors name the field at fault: {@code rules.api.tiers.premium.keys[1]}, {@code ...internal.unlimited}.
 */
final class TierSchema {

    static final List<String> FIELDS = List.of("keys", "limits", "unlimited", "blocked");

    private TierSchema() {}

    /** {@code rule} with the tiers {@code tiersNode} defines. */
    static Rule apply(Rule rule, Node tiersNode, Map<String, Limit> limits) throws RuleFileException {
        Map<String, Node> definitions = tiersNode.members("a map of tier names to their keys and limits");
        if (definitions.isEmpty()) {
            throw tiersNode.error("expected at least one tier (or leave 'tiers' out)");
        }
        List<Tier> tiers = new ArrayList<>();
        List<Node> nodes = new ArrayList<>();
        for (Map.Entry<String, Node> e : definitions.entrySet()) {
            tiers.add(define(e.getKey(), e.getValue(), limits));
            nodes.add(e.getValue());
        }
        try {
            return rule.withTiers(tiers);
        } catch (IllegalArgumentException e) {
            throw culprit(e.getMessage(), nodes, tiersNode).error(e.getMessage());
        }
    }

    private static Tier define(String name, Node definition, Map<String, Limit> limits) throws RuleFileException {
        Map<String, Node> members = definition.members("a map with 'keys' and one of 'limits', 'unlimited: true',"
                + " 'blocked: true'");
        for (Map.Entry<String, Node> e : members.entrySet()) {
            if (!FIELDS.contains(e.getKey())) {
                throw e.getValue().error("unknown field; a tier has " + String.join(", ", FIELDS));
            }
        }
        Node keysNode = members.get("keys");
        if (keysNode == null) {
            throw definition.error("missing 'keys': a list of the keys and patterns (e.g. \"tenant-*\") of this tier");
        }
        List<Node> keyItems = keysNode.items("a list of keys and patterns");
        List<String> keys = new ArrayList<>();
        for (Node item : keyItems) {
            keys.add(item.string("a key or a pattern with '*'"));
        }
        Tier.Builder builder;
        try {
            builder = Tier.named(name).keys(keys);
        } catch (IllegalArgumentException e) {
            throw culprit(e.getMessage(), keyItems, keysNode).error(e.getMessage());
        }
        Node limitsNode = members.get("limits");
        Node unlimited = flag(members.get("unlimited"));
        Node blocked = flag(members.get("blocked"));
        int given = (limitsNode != null ? 1 : 0) + (unlimited != null ? 1 : 0) + (blocked != null ? 1 : 0);
        if (given == 0) {
            throw definition.error("missing what the tier does: 'limits' (a list of limit names), 'unlimited: true'"
                    + " or 'blocked: true'");
        }
        if (given > 1) {
            Node second = blocked != null ? blocked : unlimited;
            throw second.error("a tier has exactly one of 'limits', 'unlimited: true' and 'blocked: true'; this one"
                    + " also has " + (limitsNode != null ? "'limits'" : "'unlimited: true'"));
        }
        if (unlimited != null) {
            return builder.unlimited();
        }
        if (blocked != null) {
            return builder.blocked();
        }
        List<Limit> chosen = RuleFile.namedLimits(limitsNode, limits);
        try {
            return builder.limits(chosen);
        } catch (IllegalArgumentException e) {
            throw limitsNode.error(e.getMessage());
        }
    }

    /** A boolean field given as {@code true}; null when absent or {@code false}. */
    private static Node flag(Node n) throws RuleFileException {
        if (n == null) {
            return null;
        }
        return n.bool("true or false") ? n : null;
    }

    /**
     * The node an error of the core's names: the item at the first {@code [i]} the message mentions (keys[i],
     * tiers[i]), and within a tier the key item the message quotes; {@code whole} otherwise.
     */
    private static Node culprit(String message, List<Node> items, Node whole) throws RuleFileException {
        int open = message.indexOf('[');
        int close = message.indexOf(']', open + 1);
        if (open < 0 || close < 0) {
            return whole;
        }
        int index;
        try {
            index = Integer.parseInt(message.substring(open + 1, close));
        } catch (NumberFormatException e) {
            return whole;
        }
        if (index < 0 || index >= items.size()) {
            return whole;
        }
        Node item = items.get(index);
        int quoted = message.indexOf(": key '");
        if (quoted >= 0 && item.kind() == Node.Kind.OBJECT) {
            Node keys = item.members("a tier").get("keys");
            String key = message.substring(quoted + 7, message.indexOf('\'', quoted + 7));
            if (keys != null) {
                for (Node k : keys.items("a list of keys")) {
                    if (k.string("a key").equals(key)) {
                        return k;
                    }
                }
            }
        }
        return item;
    }
}
