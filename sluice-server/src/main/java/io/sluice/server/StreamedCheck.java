package io.sluice.server;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.time.temporal.ChronoUnit;

/**
 * The common {@code POST /v1/check} body read straight from Jackson's token stream, without building a tree:
 * an object of {@code rule}, {@code key} and, optionally, {@code op}, {@code domain} (strings) and
 * {@code permits} (an integer), each at most once, nothing after it. That is what nearly every check sends,
 * and the tree (a map and a node per field) was the largest share of the server's own work per request.
 *
 * <p>Anything else — another field, a value of another type, a repeated field, malformed JSON, op
 * {@code release} — is not read here: {@link #read} answers null and the caller parses the body as a tree
 * ({@link CheckRequest#single(com.fasterxml.jackson.databind.JsonNode, RuleSet)}), which names the problem. The
 * fields read here are validated by the tree path's own checks, in its order, so that a refusal is the same
 * message either way ({@code StreamedCheckTest} compares the two).
 */
final class StreamedCheck {

    private StreamedCheck() {}

    /**
     * The check of {@code body} (well-formed UTF-8, not empty), or null when the body is not of the common
     * shape.
     *
     * @throws InvalidRequestException when the body has the common shape but a value is refused
     */
    static CheckRequest.Check read(CheckRequest parser, byte[] body, RuleSet rules) throws InvalidRequestException {
        String rule = null;
        String key = null;
        String op = null;
        String domain = null;
        long permits = 0;
        boolean hasPermits = false;
        try (JsonParser p = CheckRequest.MAPPER.getFactory().createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (name.equals("permits")) {
                    if (value != JsonToken.VALUE_NUMBER_INT || hasPermits
                            || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                        return null;
                    }
                    permits = p.getLongValue();
                    hasPermits = true;
                    continue;
                }
                if (value != JsonToken.VALUE_STRING) {
                    return null;
                }
                switch (name) {
                    case "rule" -> {
                        if (rule != null) {
                            return null;
                        }
                        rule = p.getText();
                    }
                    case "key" -> {
                        if (key != null) {
                            return null;
                        }
                        key = p.getText();
                    }
                    case "op" -> {
                        if (op != null) {
                            return null;
                        }
                        op = p.getText();
                    }
                    case "domain" -> {
                        if (domain != null) {
                            return null;
                        }
                        domain = p.getText();
                    }
                    default -> {
                        return null;
                    }
                }
            }
            if (t != JsonToken.END_OBJECT || p.nextToken() != null) {
                return null;
            }
        } catch (IOException e) {
            // Malformed, or past a read constraint: the tree path says which.
            return null;
        }
        if (rule == null || key == null || "release".equals(op)) {
            return null;
        }
        // CheckRequest.check's order: op, domain, rule, key, permits.
        CheckRequest.Op o = op == null ? CheckRequest.Op.TRY
                : CheckRequest.op(CheckRequest.wellFormed(op, "op"), "op");
        String d = domain == null ? null : CheckRequest.domain(CheckRequest.wellFormed(domain, "domain"), "domain");
        RuleSet.Bound bound = CheckRequest.rule(CheckRequest.wellFormed(rule, "rule"), "rule", rules);
        String k = parser.key(CheckRequest.wellFormed(key, "key"), "key");
        String scoped = d == null ? k : d + CheckRequest.DOMAIN_SEPARATOR + k;
        long n = hasPermits ? CheckRequest.permits(permits, "permits", o, bound, scoped) : 1;
        return new CheckRequest.RuleCheck(o, bound, scoped, n,
                o == CheckRequest.Op.ACQUIRE ? ChronoUnit.FOREVER.getDuration() : null, 0);
    }
}
