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
     * migrated, a new or re-typed limit starts fresh, a removed limit's state is dropped. A state that had
     * expired under its previous limit, or has expired under the new one once migrated, is dropped rather than
     * migrated or kept (as the Redis store does): for the algorithms whose expiry is deliberately not exact
     * (smooth_bursty, refresh_period) the two differ, and the documented behaviour is the key coming back new.
     */
    public Object[] migrateFrom(CompiledRule previous, Object[] states, long now) {
        Object[] out = new Object[algorithms.length];
        List<Limit> oldLimits = previous.rule.limits();
        for (int i = 0; i < algorithms.length; i++) {
            Limit limit = algorithms[i].limit();
            for (int j = 0; j < oldLimits.size(); j++) {
                Limit old = oldLimits.get(j);
                if (old.name().equals(limit.name()) && old.getClass() == limit.getClass() && states[j] != null) {
                    if (old.equals(limit)) {
                        out[i] = states[j];
                    } else if (now < previous.algorithms[j].expiresAt(states[j])) {
                        Object migrated = algorithms[i].migrate(states[j], old, now);
                        out[i] = migrated != null && now < algorithms[i].expiresAt(migrated) ? migrated : null;
                    }
                }
            }
        }
        return out;
    }

    /**
     * {@code states} as the limits see them at {@code now}: each state that has expired on its own is null.
     * An entry expires when its last state does, so in a rule of several limits one limit's state can expire
     * while the entry lives on; it must then decide as no state, as it would in a rule of its own and as in the
     * Redis store (one key per limit). Returns {@code states} itself when nothing expired.
     */
    public Object[] live(Object[] states, long now) {
        if (states.length < 2) {
            return states; // the entry's own expiry is this state's, and the store checked it
        }
        Object[] live = states;
        for (int i = 0; i < states.length; i++) {
            if (states[i] != null && now >= algorithms[i].expiresAt(states[i])) {
                if (live == states) {
                    live = states.clone();
                }
                live[i] = null;
            }
        }
        return live;
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
