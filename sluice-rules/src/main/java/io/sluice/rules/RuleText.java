package io.sluice.rules;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.sluice.FailurePolicy;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.Rule;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * One {@link Rule} as the text of a rule file (JSON) and its fingerprint: how a rule travels between a
 * process that defines it in Java and one that enforces it (the remote store and {@code sluice serve}).
 *
 * <p>The text is canonical: every parameter is written, defaults included, in a fixed order, so two equal
 * rules always give the same text and the same fingerprint, and {@link RuleFile#parse} reads it back as an
 * equal rule. The fingerprint is the first 16 hex digits of the text's SHA-256: two processes that agree on a
 * rule's name and fingerprint enforce the same limits with the same parameters, mode and failure policy.
 */
public final class RuleText {

    private static final JsonFactory JSON = new JsonFactory();

    private RuleText() {}

    /** {@code rule} as a canonical JSON rule file holding its limits and this one rule. */
    public static String of(Rule rule) {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeObjectFieldStart("limits");
            for (Limit limit : rule.limits()) {
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
            g.writeObjectFieldStart(rule.name());
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
            g.writeEndObject();
            g.writeEndObject();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing to a string cannot fail", e);
        }
        return out.toString();
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
     * The one rule of a rule-file text (as {@link #of(Rule)} writes it, or written by hand).
     *
     * @param source names the text in errors
     * @throws RuleFileException when the text is not a valid rule file of exactly one rule
     */
    public static Rule parse(String source, String text) throws RuleFileException {
        RuleFile file = RuleFile.parse(source, text);
        if (file.rules().size() != 1) {
            throw new RuleFileException(source, 1, 0, "rules", "expected exactly one rule, was "
                    + file.rules().size());
        }
        return file.rules().values().iterator().next();
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
