package io.sluice.internal;

import io.sluice.Limit;
import io.sluice.Lockout;
import io.sluice.Rule;
import io.sluice.internal.algorithm.Algorithm;
import io.sluice.internal.algorithm.Algorithms;
import io.sluice.internal.algorithm.InPlaceStep;
import java.util.List;

/** A rule with each limit's transition resolved once. Immutable. */
public final class CompiledRule {
    private final Rule rule;
    private final Algorithm<Object>[] algorithms;
    /** Which limits are shadow limits; null when none is (most rules). */
    private final boolean[] shadow;
    /** How many limits are enforced (not shadow). */
    private final int enforced;
    /** The rule's lockout, or null; its state is the last of the states ({@link #slots()}). */
    private final Lockout lockout;
    /** The in-place step of a rule of one enforced limit whose algorithm has one; else null. */
    private final InPlaceStep<Object> inPlace;

    @SuppressWarnings("unchecked")
    public CompiledRule(Rule rule) {
        this.rule = rule;
        List<Limit> limits = rule.limits();
        this.algorithms = new Algorithm[limits.size()];
        for (int i = 0; i < algorithms.length; i++) {
            algorithms[i] = Algorithms.of(limits.get(i));
        }
        boolean[] flags = null;
        int count = algorithms.length;
        for (int i = 0; i < algorithms.length; i++) {
            if (rule.isShadow(limits.get(i).name())) {
                flags = flags == null ? new boolean[algorithms.length] : flags;
                flags[i] = true;
                count--;
            }
        }
        this.shadow = flags;
        this.enforced = count;
        this.lockout = rule.lockout();
        // A lockout's state is a second slot beside the limit's, so a rule with one takes the general path.
        this.inPlace = algorithms.length == 1 && flags == null && lockout == null ? algorithms[0].inPlace() : null;
    }

    /** Whether the rule has a lockout. */
    public boolean hasLockout() {
        return lockout != null;
    }

    /** The rule's lockout, or null. */
    public Lockout lockout() {
        return lockout;
    }

    /** How many states a key of this rule has: one per limit, and the lockout's when it has one. */
    public int slots() {
        return lockout == null ? algorithms.length : algorithms.length + 1;
    }

    /**
     * For a rule of one limit without shadow whose algorithm can step on a mutable cell, that step (the
     * memory store's allocation-free path); null otherwise.
     */
    public InPlaceStep<Object> inPlace() {
        return inPlace;
    }

    /** Whether some limit of the rule is a shadow limit. */
    public boolean hasShadow() {
        return shadow != null;
    }

    /** Whether limit {@code i} is a shadow limit. */
    public boolean shadow(int i) {
        return shadow != null && shadow[i];
    }

    /** How many limits are enforced, i.e. not shadow limits. */
    public int enforced() {
        return enforced;
    }

    private CompiledRule(Rule rule, Algorithm<Object>[] algorithms) {
        this.rule = rule;
        this.algorithms = algorithms;
        this.shadow = null;
        this.enforced = algorithms.length;
        this.lockout = null;
        this.inPlace = null;
    }

    /**
     * The limits of several rules side by side, in order, as one rule for {@link RuleEvaluator#evaluate}: how
     * several targets are decided together. Only for evaluation: its {@link #rule()} is the first part's.
     */
    @SuppressWarnings("unchecked")
    public static CompiledRule concat(List<CompiledRule> parts) {
        for (CompiledRule part : parts) {
            if (part.hasLockout()) {
                // Which key's rejections would count, and which key a lockout would reject, has no one answer.
                throw new IllegalArgumentException("rule '" + part.rule.name()
                        + "' has a lockout: it cannot be decided together with other targets");
            }
            if (part.hasShadow()) {
                // A shadow limit decides apart from the enforced ones; a batch decided together has no such split.
                throw new IllegalArgumentException("rule '" + part.rule.name()
                        + "' has shadow limits: it cannot be decided together with other targets");
            }
        }
        int n = parts.stream().mapToInt(CompiledRule::size).sum();
        Algorithm<Object>[] all = new Algorithm[n];
        int at = 0;
        for (CompiledRule part : parts) {
            System.arraycopy(part.algorithms, 0, all, at, part.size());
            at += part.size();
        }
        return new CompiledRule(parts.get(0).rule, all);
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
     * migrated, a new or re-typed limit starts fresh, a removed limit's state is dropped. A changed limit's
     * state that has expired at {@code now} (under its old parameters, or under the new ones once migrated) is
     * dropped too, as the Redis script drops it: kept, it would come back to life for a clock that then steps
     * back, so the outcome would depend on whether the store had already dropped it.
     */
    public Object[] migrateFrom(CompiledRule previous, Object[] states, long now) {
        Object[] out = new Object[slots()];
        List<Limit> oldLimits = previous.rule.limits();
        if (lockout != null && previous.lockout != null) {
            // A changed lockout keeps any lockout in force, and its count if after and within are the same (the
            // state records them: LockoutEvaluator); dropped with the lockout itself.
            out[algorithms.length] = states[oldLimits.size()];
        }
        for (int i = 0; i < algorithms.length; i++) {
            Limit limit = algorithms[i].limit();
            for (int j = 0; j < oldLimits.size(); j++) {
                Limit old = oldLimits.get(j);
                if (old.name().equals(limit.name()) && old.getClass() == limit.getClass() && states[j] != null) {
                    out[i] = old.equals(limit) ? states[j] : migrated(i, previous.algorithms[j], states[j], now);
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
        Object[] live = states;
        int n = algorithms.length;
        if (lockout != null && states[n] != null
                && LockoutEvaluator.expired(lockout, (LockoutEvaluator.State) states[n], now)) {
            live = states.clone();
            live[n] = null;
        }
        for (int i = 0; i < n; i++) {
            if (states[i] != null && now >= algorithms[i].expiresAt(states[i])) {
                if (live == states) {
                    live = states.clone();
                }
                live[i] = null;
            }
        }
        return live;
    }

    private Object migrated(int i, Algorithm<Object> before, Object state, long now) {
        if (now >= before.expiresAt(state)) {
            return null;
        }
        Object after = algorithms[i].migrate(state, before.limit(), now);
        return after == null || now >= algorithms[i].expiresAt(after) ? null : after;
    }

    /** The time from which all of {@code states} mean the same as no state. */
    public long expiresAt(Object[] states) {
        long at = Long.MIN_VALUE;
        for (int i = 0; i < algorithms.length; i++) {
            if (states[i] != null) {
                at = Math.max(at, algorithms[i].expiresAt(states[i]));
            }
        }
        if (lockout != null && states[algorithms.length] != null) {
            at = Math.max(at, LockoutEvaluator.expiresAt((LockoutEvaluator.State) states[algorithms.length]));
        }
        return at;
    }
}
