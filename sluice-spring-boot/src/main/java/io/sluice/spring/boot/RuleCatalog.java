package io.sluice.spring.boot;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.FailurePolicy;
import io.sluice.Rule;
import io.sluice.rules.RuleFile;
import io.sluice.rules.RuleFileException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.springframework.core.io.Resource;
import org.springframework.core.io.ResourceLoader;

/**
 * Reads the rules named by {@link SluiceProperties}: the rule files ({@code sluice.rules}) through sluice-rules'
 * own loader, and the limits and rules declared under {@code sluice.define}, which are turned into a rule
 * document and read by the same loader, so both accept exactly the same fields and values. Any error is a
 * {@link SluiceConfigurationException} naming the property.
 */
final class RuleCatalog {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern INTEGER = Pattern.compile("-?\\d{1,18}");
    private static final Pattern DECIMAL = Pattern.compile("-?\\d+\\.\\d+");

    private RuleCatalog() {}

    /** The rules by name, files first in the order given, then those of {@code sluice.define}. */
    static Map<String, Rule> load(SluiceProperties properties, ResourceLoader loader) {
        Map<String, Rule> rules = new LinkedHashMap<>();
        Map<String, String> definedIn = new LinkedHashMap<>();
        List<String> files = properties.getRules();
        for (int i = 0; i < files.size(); i++) {
            String property = "sluice.rules[" + i + "]";
            RuleFile file = readFile(property, files.get(i), loader);
            add(rules, definedIn, file.rules(), property);
        }
        SluiceProperties.Define define = properties.getDefine();
        if (!define.getLimits().isEmpty() || !define.getRules().isEmpty()) {
            add(rules, definedIn, parseDefinitions(define), "sluice.define.rules");
        }
        SluiceProperties.Defaults defaults = properties.getDefaults();
        if (defaults.getOnFailure() != null) {
            FailurePolicy policy = defaultPolicy(defaults);
            rules.replaceAll((name, rule) -> rule.failurePolicy().kind() != FailurePolicy.Kind.RAISE ? rule
                    : withPolicy(rule, policy));
        }
        return rules;
    }

    private static Rule withPolicy(Rule rule, FailurePolicy policy) {
        try {
            return rule.withFailurePolicy(policy);
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigurationException("sluice.defaults.fallback-share", "cannot apply to rule '"
                    + rule.name() + "': " + e.getMessage());
        }
    }

    private static void add(Map<String, Rule> rules, Map<String, String> definedIn, Map<String, Rule> more,
                            String property) {
        for (Rule rule : more.values()) {
            String earlier = definedIn.putIfAbsent(rule.name(), property);
            if (earlier != null) {
                throw new SluiceConfigurationException(property, "rule '" + rule.name() + "' is already defined by "
                        + earlier + "; each rule name may be defined once");
            }
            rules.put(rule.name(), rule);
        }
    }

    private static RuleFile readFile(String property, String location, ResourceLoader loader) {
        if (location == null || location.isBlank()) {
            throw new SluiceConfigurationException(property, "expected a resource location such as "
                    + "classpath:rules.yaml, was empty");
        }
        Resource resource = loader.getResource(location.trim());
        if (!resource.exists()) {
            throw new SluiceConfigurationException(property, "no rule file at '" + location + "'");
        }
        String text;
        try (InputStream in = resource.getInputStream()) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new SluiceConfigurationException(property, "cannot read '" + location + "': " + e.getMessage(), e);
        }
        try {
            return RuleFile.parse(location.trim(), text);
        } catch (RuleFileException e) {
            throw new SluiceConfigurationException(property, "invalid rule file: " + e.getMessage());
        }
    }

    /** {@code sluice.define} as a rule document, read by the rule-file loader. */
    private static Map<String, Rule> parseDefinitions(SluiceProperties.Define define) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode limits = root.putObject("limits");
        define.getLimits().forEach((name, params) -> {
            ObjectNode limit = limits.putObject(name);
            params.forEach((param, value) -> putScalar(limit, param.replace('-', '_'), value));
        });
        if (!define.getRules().isEmpty()) {
            ObjectNode rules = root.putObject("rules");
            define.getRules().forEach((name, d) -> {
                ObjectNode rule = rules.putObject(name);
                ArrayNode names = rule.putArray("limits");
                d.getLimits().forEach(names::add);
                putIfSet(rule, "mode", d.getMode());
                putIfSet(rule, "lease_ttl", d.getLeaseTtl());
                if (d.getMaxBatch() != null) {
                    rule.put("max_batch", d.getMaxBatch());
                }
                putIfSet(rule, "sync_interval", d.getSyncInterval());
                putIfSet(rule, "on_failure", d.getOnFailure());
                if (d.getFallbackShare() != null) {
                    rule.put("fallback_share", d.getFallbackShare());
                }
                if (!d.getTiers().isEmpty()) {
                    ObjectNode tiers = rule.putObject("tiers");
                    d.getTiers().forEach((tierName, t) -> {
                        ObjectNode tier = tiers.putObject(tierName);
                        // Empty lists are left out, so a missing field is reported as a rule file reports it.
                        if (!t.getKeys().isEmpty()) {
                            t.getKeys().forEach(tier.putArray("keys")::add);
                        }
                        if (!t.getLimits().isEmpty()) {
                            t.getLimits().forEach(tier.putArray("limits")::add);
                        }
                        if (t.getUnlimited() != null) {
                            tier.put("unlimited", t.getUnlimited());
                        }
                        if (t.getBlocked() != null) {
                            tier.put("blocked", t.getBlocked());
                        }
                    });
                }
            });
        }
        try {
            return RuleFile.parse("sluice.define.json", root.toString()).rules();
        } catch (RuleFileException e) {
            throw new SluiceConfigurationException(e.field().isEmpty() ? "sluice.define" : "sluice.define." + e.field(),
                    e.problem());
        }
    }

    /** A rule document has typed values; properties are text, so numbers and booleans are restored. */
    private static void putScalar(ObjectNode node, String field, String value) {
        if (value == null) {
            node.putNull(field);
        } else if (INTEGER.matcher(value).matches()) {
            node.put(field, Long.parseLong(value));
        } else if (DECIMAL.matcher(value).matches()) {
            node.put(field, Double.parseDouble(value));
        } else if (value.equals("true") || value.equals("false")) {
            node.put(field, Boolean.parseBoolean(value));
        } else {
            node.put(field, value);
        }
    }

    private static void putIfSet(ObjectNode node, String field, String value) {
        if (value != null) {
            node.put(field, value);
        }
    }

    /** The default failure policy, read by the rule-file loader from a one-rule document. */
    private static FailurePolicy defaultPolicy(SluiceProperties.Defaults defaults) {
        ObjectNode root = JSON.createObjectNode();
        root.putObject("limits").putObject("probe").put("algorithm", "fixed_window").put("limit", 1_000_000)
                .put("window", "1h");
        ObjectNode rule = root.putObject("rules").putObject("probe");
        rule.putArray("limits").add("probe");
        rule.put("on_failure", defaults.getOnFailure());
        if (defaults.getFallbackShare() != null) {
            rule.put("fallback_share", defaults.getFallbackShare());
        }
        try {
            return RuleFile.parse("sluice.defaults.json", root.toString()).rules().get("probe").failurePolicy();
        } catch (RuleFileException e) {
            String field = e.field().endsWith("fallback_share") ? "sluice.defaults.fallback-share"
                    : "sluice.defaults.on-failure";
            throw new SluiceConfigurationException(field, e.problem());
        }
    }
}
