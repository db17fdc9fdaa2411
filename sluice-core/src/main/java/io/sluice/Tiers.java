package io.sluice;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A rule's tiers, compiled for lookup: which tier a key falls under, and the rule holding each limits tier's
 * state. Immutable.
 *
 * <p><b>State.</b> A limits tier decides through a rule of its own whose name is the parent's, U+FFFF (a Unicode
 * noncharacter, which rule names may not hold), and the tier's name. Stores namespace state by rule name, so
 * state is per (rule, tier, limit name) in every store, and no tier's state can be confused with another
 * rule's. The rule's own limits keep the rule's own name: adding tiers leaves the state of every other key
 * where it was.
 *
 * <p><b>Lookup.</b> Exact keys are found in a hash map, then globs are tried in order. That is the
 * first-match order because {@link #of} refuses an exact key that an earlier tier's pattern already matches.
 */
final class Tiers {

    /** Between a rule's name and a tier's in the name of the tier's rule; refused in rule names. */
    static final char SEPARATOR = '\uFFFF';

    static final Tiers NONE = new Tiers(List.of(), new Rule[0], Map.of(), new int[0], new KeyPattern[0]);

    private final List<Tier> tiers;
    /** The rule deciding each tier's keys; null for unlimited and blocked tiers. */
    private final Rule[] rules;
    private final Map<String, Integer> exact;
    /** Glob patterns in file order, and the tier of each. */
    private final int[] globTier;
    private final KeyPattern[] globs;

    private Tiers(List<Tier> tiers, Rule[] rules, Map<String, Integer> exact, int[] globTier, KeyPattern[] globs) {
        this.tiers = tiers;
        this.rules = rules;
        this.exact = exact;
        this.globTier = globTier;
        this.globs = globs;
    }

    /**
     * Compiles {@code tiers} of {@code parent}: each limits tier's rule takes the parent's mode and failure
     * policy, and as shadow limits those of its limits whose names the parent lists as shadow.
     *
     * @throws IllegalArgumentException for two tiers of one name, or a tier that can never apply
     */
    static Tiers of(Rule parent, List<Tier> tiers) {
        if (tiers.isEmpty()) {
            return NONE;
        }
        Set<String> names = new HashSet<>();
        Rule[] rules = new Rule[tiers.size()];
        Map<String, Integer> exact = new HashMap<>();
        List<Integer> globTier = new ArrayList<>();
        List<KeyPattern> globs = new ArrayList<>();
        String everything = null;
        for (int t = 0; t < tiers.size(); t++) {
            Tier tier = Checks.notNull(tiers.get(t), "tiers of rule '" + parent.name() + "'");
            String where = "tiers[" + t + "] ('" + tier.name() + "') of rule '" + parent.name() + "'";
            if (!names.add(tier.name())) {
                throw new IllegalArgumentException(where + ": tier names must be unique; '" + tier.name()
                        + "' appears twice");
            }
            if (everything != null) {
                throw new IllegalArgumentException(where + " can never apply: tier '" + everything
                        + "' before it matches every key");
            }
            for (KeyPattern p : tier.patterns()) {
                if (p.isGlob()) {
                    if (p.matchesEverything()) {
                        everything = tier.name();
                    }
                    globs.add(p);
                    globTier.add(t);
                    continue;
                }
                Integer earlier = exact.get(p.exactKey());
                String shadowedBy = earlier != null && earlier < t ? "tier '" + tiers.get(earlier).name() + "'" : null;
                for (int g = 0; shadowedBy == null && g < globs.size(); g++) {
                    if (globTier.get(g) < t && globs.get(g).matches(p.exactKey())) {
                        shadowedBy = "tier '" + tiers.get(globTier.get(g)).name() + "' (pattern '"
                                + globs.get(g).text() + "')";
                    }
                }
                if (shadowedBy != null) {
                    throw new IllegalArgumentException(where + ": key '" + p.text() + "' can never apply here: "
                            + shadowedBy + " before it matches it first");
                }
                exact.putIfAbsent(p.exactKey(), t);
            }
            if (tier.kind() == Tier.Kind.LIMITS) {
                rules[t] = tierRule(parent, tier, where);
            }
        }
        return new Tiers(List.copyOf(tiers), rules, Map.copyOf(exact),
                globTier.stream().mapToInt(Integer::intValue).toArray(), globs.toArray(KeyPattern[]::new));
    }

    private static Rule tierRule(Rule parent, Tier tier, String where) {
        try {
            List<String> shadow = new ArrayList<>();
            for (Limit l : tier.limits()) {
                if (parent.isShadow(l.name())) {
                    shadow.add(l.name());
                }
            }
            return Rule.forTier(parent.name() + SEPARATOR + tier.name(), tier.limits(), parent.mode(),
                    parent.failurePolicy(), Set.copyOf(shadow), parent.lockout());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
    }

    boolean isEmpty() {
        return tiers.isEmpty();
    }

    List<Tier> list() {
        return tiers;
    }

    /** The index of the first tier matching {@code key}, or -1. */
    int indexOf(String key) {
        Integer t = exact.get(key);
        if (t != null) {
            return t;
        }
        for (int g = 0; g < globs.length; g++) {
            if (globs[g].matches(key)) {
                return globTier[g];
            }
        }
        return -1;
    }

    Tier tier(int index) {
        return tiers.get(index);
    }

    /** The rule deciding tier {@code index}'s keys; null for an unlimited or blocked tier. */
    Rule rule(int index) {
        return rules[index];
    }

    /** Every rule holding tier state, for a reset. */
    List<Rule> rules() {
        List<Rule> out = new ArrayList<>();
        for (Rule r : rules) {
            if (r != null) {
                out.add(r);
            }
        }
        return out;
    }
}
