package io.sluice.internal;

import io.sluice.Limit;
import io.sluice.Rule;
import io.sluice.internal.algorithm.Algorithm;
import io.sluice.internal.algorithm.Algorithms;
import java.util.List;

/** A rule with each limit's transition resolved once. Immutable. */
public final class CompiledRule {
    private final Rule rule;
    private final Algorithm<Object>[] algorithms;

    @SuppressWarnings("unchecked")
    public CompiledRule(Rule rule) {
        this.rule = rule;
        List<Limit> limits = rule.limits();
        this.algorithms = new Algorithm[limits.size()];
        for (int i = 0; i < algorithms.length; i++) {
            algorithms[i] = Algorithms.of(limits.get(i));
        }
    }

    public Rule rule() {
        return rule;
    }

    public int size() {
        return algorithms.length;
    }

    public Algorithm<Object> algorithm(int i) {
        return algorithms[i];
    }

    /**
     * States for this rule from states written under {@code previous}: each limit kept by name and algorithm is
     * migrated, a new or re-typed limit starts fresh, a removed limit's state is dropped.
     */
    public Object[] migrateFrom(CompiledRule previous, Object[] states, long now) {
        Object[] out = new Object[algorithms.length];
        List<Limit> oldLimits = previous.rule.limits();
        for (int i = 0; i < algorithms.length; i++) {
            Limit limit = algorithms[i].limit();
            for (int j = 0; j < oldLimits.size(); j++) {
                Limit old = oldLimits.get(j);
                // A state that had already expired under its old parameters means no state: migrating it would
                // resurrect what the store may already have dropped (the Redis store drops it by its TTL).
                if (old.name().equals(limit.name()) && old.getClass() == limit.getClass() && states[j] != null
                        && now < previous.algorithms[j].expiresAt(states[j])) {
                    out[i] = old.equals(limit) ? states[j] : algorithms[i].migrate(states[j], old, now);
                }
            }
        }
        return out;
    }

    /** The time from which all of {@code states} mean the same as no state. */
    public long expiresAt(Object[] states) {
        long at = Long.MIN_VALUE;
        for (int i = 0; i < algorithms.length; i++) {
            if (states[i] != null) {
                at = Math.max(at, algorithms[i].expiresAt(states[i]));
            }
        }
        return at;
    }
}
