package io.sluice;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One or more limits that apply together to every key: a request passes only if every limit passes, and
 * when any limit rejects <b>no limit is charged</b> (the one deliberate exception: a limit with
 * {@code countRejected} records the rejected attempt, which is what that option asks for).
 *
 * <p>The rule's name is the namespace of its keys in a store: two limiters with rules of the same name on one
 * store share state. Limit names must be unique within a rule, and a rule holds at most one
 * {@link Concurrency} limit (it hands out the lease ids). Immutable.
 */
public final class Rule {

    private final String name;
    private final List<Limit> limits;
    private final Mode mode;
    private final FailurePolicy failurePolicy;
    /** {@link #maxPermits()}, read on every decision: computed once, the limits being immutable. */
    private final long maxPermits;

    private Rule(String name, List<Limit> limits) {
        this(name, limits, Mode.exact(), FailurePolicy.raise());
    }

    private Rule(String name, List<Limit> limits, Mode mode, FailurePolicy failurePolicy) {
        this.name = Checks.name(name, "rule name");
        if (limits == null || limits.isEmpty()) {
            throw new IllegalArgumentException("limits of rule '" + name + "' must hold at least one limit");
        }
        Set<String> names = new HashSet<>();
        int concurrency = 0;
        for (Limit limit : limits) {
            Checks.notNull(limit, "limits of rule '" + name + "'");
            if (!names.add(limit.name())) {
                throw new IllegalArgumentException("limit names in rule '" + name + "' must be unique; '"
                        + limit.name() + "' appears twice (name one with Limit.named)");
            }
            if (limit instanceof Concurrency) {
                concurrency++;
            }
        }
        if (concurrency > 1) {
            throw new IllegalArgumentException("rule '" + name + "' must hold at most one concurrency limit, had "
                    + concurrency);
        }
        this.limits = Collections.unmodifiableList(new ArrayList<>(limits));
        this.mode = Checks.notNull(mode, "mode");
        this.failurePolicy = Checks.notNull(failurePolicy, "failure_policy");
        long max = Long.MAX_VALUE;
        for (Limit l : this.limits) {
            max = Math.min(max, l.maxPermits());
        }
        this.maxPermits = max;
        mode.check(name, this.limits);
        if (failurePolicy.kind() == FailurePolicy.Kind.LOCAL_FALLBACK) {
            io.sluice.internal.LimitShares.scale(this, failurePolicy.share());
        }
    }

    /**
     * A rule of the given limits.
     *
     * @throws IllegalArgumentException if the name is null, empty, longer than 128 characters or not well-formed
     *                                  Unicode ({@link Text}), no limit is
     *                                  given, two limits share a name, or two are concurrency limits
     */
    public static Rule of(String name, Limit... limits) {
        return new Rule(name, limits == null ? List.of() : java.util.Arrays.asList(limits));
    }

    /** As {@link #of(String, Limit...)}. */
    public static Rule of(String name, List<? extends Limit> limits) {
        return new Rule(name, limits == null ? List.of() : new ArrayList<>(limits));
    }

    public String name() {
        return name;
    }

    /** How a shared store enforces the rule; default {@link Mode#exact()}. */
    public Mode mode() {
        return mode;
    }

    /** What the rule decides when its store cannot; default {@link FailurePolicy#raise()}. */
    public FailurePolicy failurePolicy() {
        return failurePolicy;
    }

    /**
     * A copy enforced in {@code mode} by shared stores (the in-memory store decides every mode exactly).
     *
     * @throws IllegalArgumentException when a limit's algorithm cannot run in that mode (see {@link Mode})
     */
    public Rule withMode(Mode mode) {
        return new Rule(name, limits, Checks.notNull(mode, "mode"), failurePolicy);
    }

    /**
     * A copy that decides by {@code policy} when its store fails.
     *
     * @throws IllegalArgumentException when a local fallback's share leaves a limit without a permit
     */
    public Rule withFailurePolicy(FailurePolicy policy) {
        return new Rule(name, limits, mode, Checks.notNull(policy, "failure_policy"));
    }

    /** The limits, in the order given. */
    public List<Limit> limits() {
        return limits;
    }

    /** The limit with this name, or null. */
    public Limit limit(String limitName) {
        for (Limit l : limits) {
            if (l.name().equals(limitName)) {
                return l;
            }
        }
        return null;
    }

    /**
     * A copy in which the limit of the same name is replaced by {@code limit}; a limit of a new name is added.
     * Replacing a limit by one of another algorithm drops that limit's state.
     */
    public Rule withLimit(Limit limit) {
        Checks.notNull(limit, "limit");
        List<Limit> next = new ArrayList<>(limits);
        boolean replaced = false;
        for (int i = 0; i < next.size(); i++) {
            if (next.get(i).name().equals(limit.name())) {
                next.set(i, limit);
                replaced = true;
            }
        }
        if (!replaced) {
            next.add(limit);
        }
        return new Rule(name, next, mode, failurePolicy);
    }

    /**
     * The most permits one all-or-nothing request may ask for: the smallest {@link Limit#maxPermits()}.
     */
    public long maxPermits() {
        return maxPermits;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Rule r && r.name.equals(name) && r.limits.equals(limits) && r.mode.equals(mode)
                && r.failurePolicy.equals(failurePolicy);
    }

    @Override
    public int hashCode() {
        return (name.hashCode() * 31 + limits.hashCode()) * 31 + mode.hashCode() * 7 + failurePolicy.hashCode();
    }

    @Override
    public String toString() {
        return "Rule{" + name + ", " + limits + (mode.kind() == Mode.Kind.EXACT ? "" : ", mode=" + mode)
                + (failurePolicy.kind() == FailurePolicy.Kind.RAISE ? "" : ", on_failure=" + failurePolicy) + "}";
    }
}
