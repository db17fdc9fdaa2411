package io.sluice.server;

import io.sluice.Rule;
import io.sluice.rules.RuleFileException;
import io.sluice.rules.RuleText;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The rules remote stores ({@code sluice-client}) decide under, by fingerprint.
 *
 * <p>A remote store sends a rule's definition once ({@link #register}) and then names it in each call by name
 * and fingerprint ({@link RuleText#fingerprint}). A rule the server's rule files also define must be the same
 * rule: a registration or call whose fingerprint differs from the file's is refused with a
 * {@link Mismatch} naming the rule, never decided under either definition; a matching one is decided as the
 * server enforces the file's rule (in the server's default mode, {@link DefaultMode}, unless the file chose one). A name the files do not define is
 * the client's own rule; clients that send different definitions under one name share its keys' state, as two
 * embedded limiters of one name share a store. Names in the server's own namespaces ({@code rls:},
 * {@code limit:}, {@code sluice:}) are refused.
 *
 * <p>Memory is bounded: past {@link #MAX_RULES} fingerprints the table is emptied, and each client registers
 * its rules again on its next call (an {@link Unknown} answer makes it do so). Thread-safe.
 */
final class RemoteRules {

    static final int MAX_RULES = 10_000;

    /** A registered rule; {@code checkedAgainst} is the rule set it was last found consistent with. */
    private record Entry(Rule rule, String fingerprint, RuleSet checkedAgainst) {}

    /** The rule's definition differs from the server's rule files. */
    static final class Mismatch extends Exception {
        private static final long serialVersionUID = 1L;

        Mismatch(String message) {
            super(message, null, false, false);
        }
    }

    /** No rule has this fingerprint (never registered, or forgotten): the client registers it again. */
    static final class Unknown extends Exception {
        private static final long serialVersionUID = 1L;

        Unknown(String message) {
            super(message, null, false, false);
        }
    }

    private final Supplier<RuleSet> files;
    private final Map<String, Entry> byFingerprint = new ConcurrentHashMap<>();

    RemoteRules(Supplier<RuleSet> files) {
        this.files = files;
    }

    /**
     * Reads a rule definition and registers it; returns its fingerprint.
     *
     * @throws InvalidRequestException when the text is not one valid rule, or names a reserved namespace
     * @throws Mismatch                when the server's rule files define the name differently
     */
    String register(String text) throws InvalidRequestException, Mismatch {
        Rule rule;
        try {
            rule = RuleText.parse("rule", text);
        } catch (RuleFileException e) {
            throw new InvalidRequestException(e.getMessage());
        }
        String name = rule.name();
        if (name.startsWith("rls:") || name.startsWith("limit:") || name.startsWith("sluice:")) {
            throw new InvalidRequestException("rule: the name '" + name + "' is in a namespace the server keeps for"
                    + " its own rules (rls:, limit:, sluice:); name the rule otherwise");
        }
        String fingerprint = RuleText.fingerprint(rule);
        RuleSet set = files.get();
        check(set, rule, fingerprint);
        if (byFingerprint.size() >= MAX_RULES) {
            byFingerprint.clear();
        }
        byFingerprint.put(fingerprint, new Entry(rule, fingerprint, set));
        return fingerprint;
    }

    /**
     * The rule a call names.
     *
     * @throws Unknown  when no rule of that name has that fingerprint here
     * @throws Mismatch when the rule files now define the name differently (they were reloaded)
     */
    Rule rule(String name, String fingerprint) throws Unknown, Mismatch {
        Entry e = byFingerprint.get(fingerprint);
        if (e == null || !e.rule().name().equals(name)) {
            throw new Unknown("rule '" + name + "' with fingerprint " + fingerprint + " is not registered");
        }
        RuleSet set = files.get();
        if (e.checkedAgainst() != set) {
            check(set, e.rule(), fingerprint);
            byFingerprint.replace(fingerprint, e, new Entry(e.rule(), fingerprint, set));
        }
        // A rule of the files is enforced as the server enforces it: in the server's default mode unless the
        // file chose one (the client's copy matched the file's definition, which names no mode then). So is the
        // rule of one of its tiers.
        String[] tierOf = e.rule().tierOf();
        RuleSet.Bound file = set.rule(tierOf == null ? name : tierOf[0]);
        if (file == null) {
            return e.rule();
        }
        return tierOf == null ? file.rule() : file.rule().tierRule(tierOf[1]);
    }

    /**
     * A rule the files define must be theirs; so must the rule of a tier of one (a remote store is asked about a
     * key of a tier with the tier's rule): the files' rule must have that tier, with the same limits.
     */
    private static void check(RuleSet set, Rule rule, String fingerprint) throws Mismatch {
        String[] tierOf = rule.tierOf();
        String name = tierOf == null ? rule.name() : tierOf[0];
        RuleSet.Bound file = set.rule(name);
        if (file == null) {
            return;
        }
        Rule declared = tierOf == null ? file.declared() : file.declared().tierRule(tierOf[1]);
        if (declared == null) {
            throw new Mismatch("rule '" + name + "' differs from the server's rule files: the client's has a tier '"
                    + tierOf[1] + "' of limits " + RuleText.of(rule) + ", the server's has none: "
                    + RuleText.of(file.declared()));
        }
        String serverFingerprint = RuleText.fingerprint(declared);
        if (!serverFingerprint.equals(fingerprint)) {
            String what = tierOf == null ? "" : " in its tier '" + tierOf[1] + "'";
            throw new Mismatch("rule '" + name + "' differs from the server's rule files" + what + ": the client's"
                    + " has fingerprint " + fingerprint + " " + RuleText.of(rule) + ", the server's "
                    + serverFingerprint + " " + RuleText.of(declared));
        }
    }
}
