package io.sluice.rules;

import io.sluice.Lockout;
import io.sluice.Rule;
import java.math.BigInteger;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A rule's {@code lockout} field: <code>{after: 3, within: 15m, for: 1h}</code>, all three required (see
 * {@link Lockout}). Errors name the field, e.g. {@code rules.login.lockout.within}.
 */
final class LockoutField {

    static final List<String> FIELDS = List.of("after", "within", "for");
    private static final String EXPECTED = "a map {after: <rejections>, within: <duration>, for: <duration>}";

    private LockoutField() {}

    /** {@code rule} with the lockout {@code node} defines. */
    static Rule apply(Rule rule, Node node) throws RuleFileException {
        Map<String, Node> members = node.members(EXPECTED);
        for (Map.Entry<String, Node> e : members.entrySet()) {
            if (!FIELDS.contains(e.getKey())) {
                throw e.getValue().error("unknown field; a lockout has " + String.join(", ", FIELDS));
            }
        }
        for (String field : FIELDS) {
            if (!members.containsKey(field)) {
                throw node.error("missing '" + field + "'; expected " + EXPECTED);
            }
        }
        Lockout lockout;
        try {
            lockout = Lockout.of(after(members.get("after")), duration(members.get("within")),
                    duration(members.get("for")));
        } catch (IllegalArgumentException e) {
            // "lockout.<field> must be ...": point at that field.
            String message = e.getMessage();
            String field = message.startsWith("lockout.") ? message.substring(8, message.indexOf(' ')) : "";
            Node culprit = members.get(field);
            throw (culprit == null ? node : culprit).error(message);
        }
        try {
            return rule.withLockout(lockout);
        } catch (IllegalArgumentException e) {
            throw node.error(e.getMessage());
        }
    }

    private static long after(Node n) throws RuleFileException {
        BigInteger v = n.integer("an integer number of rejections");
        if (v.bitLength() > 62) {
            throw n.error("lockout.after must be in [1, 1000000000000], was " + v);
        }
        return v.longValue();
    }

    private static Duration duration(Node n) throws RuleFileException {
        try {
            return Durations.parse(n.string(Durations.EXPECTED));
        } catch (IllegalArgumentException e) {
            throw n.error(e.getMessage());
        }
    }
}
