package io.sluice.rules;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.FailurePolicy;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.Rule;
import io.sluice.Tier;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * One {@link Rule} as the text of a rule file (JSON) and its fingerprint: how a rule travels between a
 * process that defines it in Java and one that enforces it (the remote store and {@code sluice serve}).
 *
 * <p>The text is canonical: every parameter is written, defaults included, in a fixed order, so two equal
 * rules always give the same text and the same fingerprint, and {@link RuleFile#parse} reads it back as an
 * equal rule. The fingerprint is the first 16 hex digits of the text's SHA-256: two processes that agree on a
 * rule's name and fingerprint enforce the same limits with the same parameters, mode, failure policy, lockout and
 * tiers.
 */
public final class RuleText {

    private static final JsonFactory JSON = new JsonFactory();
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** The top-level member naming the tier whose rule a text holds. */
    private static final String TIER = "tier";

    private RuleText() {}

    /**
     * {@code rule} as a canonical JSON rule file holding its limits and this one rule: its tiers too, with their
     * limits among the file's. The rule of a tier ({@link Rule#tierOf()}, what a store is asked about for a key
     * of that tier) is written as its parent's name holding the tier's limits, plus a top-level {@code "tier"}
     * naming the tier; {@link #parse} reads both forms back.
     *
     * @throws IllegalArgumentException when two different limits of the rule and its tiers share a name, which a
     *                                  rule file cannot express (give one of them another name with
     *                                  {@code Limit.named})
     */
    public static String of(Rule rule) {
        String[] tierOf = rule.tierOf();
        Map<String, Limit> limits = new LinkedHashMap<>();
        for (Limit limit : rule.limits()) {
            limits.put(limit.name(), limit);
        }
        for (Tier tier : rule.tiers()) {
            for (Limit limit : tier.limits()) {
                Limit same = limits.putIfAbsent(limit.name(), limit);
                if (same != null && !same.equals(limit)) {
                    throw new IllegalArgumentException("rule '" + rule.name() + "': tier '" + tier.name()
                            + "' has a limit named '" + limit.name() + "' that differs from the rule's or an"
                            + " earlier tier's limit of that name (" + limit + " vs " + same + "); a rule file"
                            + " (and so the remote store) names each limit once: give it its own name (Limit.named)");
                }
            }
        }
        StringWriter out = new StringWriter(256);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeObjectFieldStart("limits");
            for (Limit limit : limits.values()) {
                g.writeObjectFieldStart(limit.name());
                g.writeStringField("algorithm", limit.algorithm());
                for (Map.Entry<String, Object> p : new TreeMap<>(LimitSchema.of(limit.algorithm()).read(limit))
                        .entrySet()) {
                    write(g, p.getKey(), p.getValue());
                }
                g.writeEndObject();
            }
            g.writeEndObject();
            g.writeObjectFieldStart("rules");
            g.writeObjectFieldStart(tierOf == null ? rule.name() : tierOf[0]);
            writeRule(g, rule);
            g.writeEndObject();
            g.writeEndObject();
            if (tierOf != null) {
                g.writeStringField(TIER, tierOf[1]);
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing to a string cannot fail", e);
        }
        return out.toString();
    }

    /** The members of a rule's object, defaults left out, in a fixed order. */
    private static void writeRule(JsonGenerator g, Rule rule) throws IOException {
        g.writeArrayFieldStart("limits");
        for (Limit limit : rule.limits()) {
            g.writeString(limit.name());
        }
        g.writeEndArray();
        Mode mode = rule.mode();
        if (mode.kind() != Mode.Kind.EXACT) {
            g.writeStringField("mode", word(mode.kind()));
        }
        if (mode.kind() == Mode.Kind.LEASED) {
            g.writeStringField("lease_ttl", Durations.format(mode.leaseTtl()));
            if (mode.maxBatch() != 0) {
                g.writeNumberField("max_batch", mode.maxBatch());
            }
        }
        if (mode.kind() == Mode.Kind.SYNCED) {
            g.writeStringField("sync_interval", Durations.format(mode.syncInterval()));
        }
        if (!rule.shadow().isEmpty()) {
            g.writeArrayFieldStart("shadow");
            for (Limit limit : rule.limits()) {
                if (rule.isShadow(limit.name())) {
                    g.writeString(limit.name());
                }
            }
            g.writeEndArray();
        }
        if (rule.lockout() != null) {
            g.writeObjectFieldStart("lockout");
            g.writeNumberField("after", rule.lockout().after());
            g.writeStringField("within", Durations.format(rule.lockout().within()));
            g.writeStringField("for", Durations.format(rule.lockout().duration()));
            g.writeEndObject();
        }
        FailurePolicy policy = rule.failurePolicy();
        if (policy.kind() != FailurePolicy.Kind.RAISE) {
            g.writeStringField("on_failure", policy.name());
        }
        if (policy.kind() == FailurePolicy.Kind.LOCAL_FALLBACK) {
            g.writeNumberField("fallback_share", policy.share());
        }
        if (rule.hasTiers()) {
            g.writeObjectFieldStart("tiers");
            for (Tier tier : rule.tiers()) {
                g.writeObjectFieldStart(tier.name());
                g.writeArrayFieldStart("keys");
                for (String key : tier.keys()) {
                    g.writeString(key);
                }
                g.writeEndArray();
                switch (tier.kind()) {
                    case LIMITS -> {
                        g.writeArrayFieldStart("limits");
                        for (Limit limit : tier.limits()) {
                            g.writeString(limit.name());
                        }
                        g.writeEndArray();
                    }
                    case UNLIMITED -> g.writeBooleanField("unlimited", true);
                    case BLOCKED -> g.writeBooleanField("blocked", true);
                }
                g.writeEndObject();
            }
            g.writeEndObject();
        }
    }

    /** The fingerprint of {@code rule}: 16 hex digits of the SHA-256 of {@link #of(Rule)}. */
    public static String fingerprint(Rule rule) {
        return fingerprintOf(of(rule));
    }

    /** The fingerprint of a canonical text as {@link #of(Rule)} writes it. */
    public static String fingerprintOf(String canonicalText) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(canonicalText.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /**
     * The one rule of a rule-file text (as {@link #of(Rule)} writes it, or written by hand); with a top-level
     * {@code "tier"}, the rule of that tier of it, holding the rule's limits.
     *
     * @param source names the text in errors
     * @throws RuleFileException when the text is not a valid rule file of exactly one rule
     */
    public static Rule parse(String source, String text) throws RuleFileException {
        String tier = null;
        if (text.contains("\"" + TIER + "\"")) {
            JsonNode tree;
            try {
                tree = MAPPER.readTree(text);
            } catch (IOException e) {
                tree = null; // not JSON: RuleFile.parse says where, as for any text
            }
            if (tree instanceof ObjectNode o && o.has(TIER)) {
                JsonNode name = o.remove(TIER);
                if (!name.isTextual()) {
                    throw new RuleFileException(source, 1, 0, TIER, "expected the name of a tier, was " + name);
                }
                tier = name.asText();
                text = o.toString();
            }
        }
        RuleFile file = RuleFile.parse(source, text);
        if (file.rules().size() != 1) {
            throw new RuleFileException(source, 1, 0, "rules", "expected exactly one rule, was "
                    + file.rules().size());
        }
        Rule rule = file.rules().values().iterator().next();
        if (tier == null) {
            return rule;
        }
        if (rule.hasTiers()) {
            throw new RuleFileException(source, 1, 0, TIER, "the rule of a tier has no tiers of its own");
        }
        try {
            return rule.withTiers(Tier.named(tier).keys("*").limits(rule.limits())).tierRule(tier);
        } catch (IllegalArgumentException e) {
            throw new RuleFileException(source, 1, 0, TIER, e.getMessage());
        }
    }

    private static void write(JsonGenerator g, String name, Object value) throws IOException {
        if (value instanceof Duration d) {
            g.writeStringField(name, Durations.format(d));
        } else if (value instanceof Long l) {
            g.writeNumberField(name, l);
        } else if (value instanceof Double d) {
            g.writeNumberField(name, d);
        } else if (value instanceof Boolean b) {
            g.writeBooleanField(name, b);
        } else {
            g.writeStringField(name, String.valueOf(value));
        }
    }

    private static String word(Enum<?> e) {
        return e.name().toLowerCase(java.util.Locale.ROOT);
    }
}
