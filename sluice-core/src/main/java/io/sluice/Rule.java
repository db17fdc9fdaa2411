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
 * <p>A <b>shadow</b> limit ({@link #withShadow}) decides and counts but never rejects: the request is decided by
 * the other limits, and {@link Decision#shadowLimit()} names the shadow limit that would have rejected it. The
 * shadow limits keep the state they would have under the rule with them in force: all or nothing among
 * themselves, charged only when the request was admitted and every shadow limit would have admitted it. A rule
 * whose limits are all shadow limits admits every request. Shadow limits run in {@link Mode#exact()} and
 * {@link Mode#coalesced} modes.
 *
 * <p><b>Tiers</b> ({@link #withTiers}) give chosen keys or key patterns their own limits, no limit, or no
 * admission; the first matching tier decides, and {@link Decision#tier()} names it. See {@link Tier}.
 *
 * <p>The rule's name is the namespace of its keys in a store: two limiters with rules of the same name on one
 * store share state. Limit names must be unique within a rule, and a rule holds at most one
 * {@link Concurrency} limit (it hands out the lease ids). A rule may have a {@link Lockout}
 * ({@link #withLockout}): after a number of rejections of a key within a period, the key is locked out for a
 * while. Immutable.
 */
public final class Rule {

    private final String name;
    private final List<Limit> limits;
    private final Mode mode;
    private final FailurePolicy failurePolicy;
    /** Names of the shadow limits; empty for most rules. */
    private final Set<String> shadow;
    /** The lockout, or null (most rules). */
    private final Lockout lockout;
    /** {@link #maxPermits()}, read on every decision: computed once, the limits being immutable. */
    private final long maxPermits;
    /** The keys with their own limits, or none ({@link Tiers#NONE} for most rules). */
    private final Tiers tiers;
    /** Tiers match the part of a key after this character's first occurrence; -1: the whole key (most rules). */
    private final int tierKeysAfter;

    private Rule(String name, List<Limit> limits) {
        this(name, limits, Mode.exact(), FailurePolicy.raise(), Set.of(), List.of(), false, null, -1);
    }

    private Rule(String name, List<Limit> limits, Mode mode, FailurePolicy failurePolicy, Set<String> shadow,
                 List<Tier> tiers, boolean ofTier, Lockout lockout, int tierKeysAfter) {
        // A tier's rule is named <rule> U+FFFF <tier> (Tiers), a name no rule given by a user can have.
        this.name = ofTier ? name : checkName(name);
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
        for (String s : shadow) {
            if (!names.contains(s)) {
                throw new IllegalArgumentException("shadow of rule '" + name + "' names limit '" + s
                        + "', which the rule does not have; its limits are " + names);
            }
        }
        this.shadow = Set.copyOf(shadow);
        for (Limit limit : limits) {
            if (limit instanceof Concurrency && this.shadow.contains(limit.name())) {
                throw new IllegalArgumentException("shadow of rule '" + name + "' names the concurrency limit '"
                        + limit.name() + "'; a concurrency limit cannot be a shadow limit (its leases must be"
                        + " released, and a shadow decision hands none out)");
            }
        }
        if (!this.shadow.isEmpty() && mode.kind() != Mode.Kind.EXACT && mode.kind() != Mode.Kind.COALESCED) {
            throw new IllegalArgumentException("shadow limits of rule '" + name + "' run in the exact and coalesced"
                    + " modes only; its mode is " + mode);
        }
        if (lockout != null && mode.kind() != Mode.Kind.EXACT) {
            // A lockout decides before the limits and counts their rejections in the same atomic step: a mode
            // that decides locally (leases, syncs) or in batches has no such step.
            throw new IllegalArgumentException("lockout of rule '" + name + "' runs in the exact mode only; its mode is "
                    + mode);
        }
        this.lockout = lockout;
        mode.check(name, this.limits);
        if (failurePolicy.kind() == FailurePolicy.Kind.LOCAL_FALLBACK) {
            io.sluice.internal.LimitShares.scale(this, failurePolicy.share());
        }
        this.tiers = Tiers.of(this, tiers);
        this.tierKeysAfter = tierKeysAfter;
    }

    private static String checkName(String name) {
        Checks.name(name, "rule name");
        if (name.indexOf(Tiers.SEPARATOR) >= 0) {
            throw new IllegalArgumentException("rule name must not hold U+FFFF, which names the state of tiers");
        }
        return name;
    }

    /** The rule deciding a tier's keys; see {@link Tiers}. */
    static Rule forTier(String name, List<Limit> limits, Mode mode, FailurePolicy failurePolicy, Set<String> shadow,
                        Lockout lockout) {
        return new Rule(name, limits, mode, failurePolicy, shadow, List.of(), true, lockout, -1);
    }

    /**
     * A rule of the given limits.
     *
     * @throws IllegalArgumentException if the name is null, empty, longer than 128 characters, not well-formed
     *                                  Unicode ({@link Text}) or holds U+FFFF (reserved for tiers), no limit is
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
        return new Rule(name, limits, Checks.notNull(mode, "mode"), failurePolicy, shadow, tiers.list(), isTierRule(),
                lockout, tierKeysAfter);
    }

    /**
     * A copy that decides by {@code policy} when its store fails.
     *
     * @throws IllegalArgumentException when a local fallback's share leaves a limit without a permit
     */
    public Rule withFailurePolicy(FailurePolicy policy) {
        return new Rule(name, limits, mode, Checks.notNull(policy, "failure_policy"), shadow, tiers.list(),
                isTierRule(), lockout, tierKeysAfter);
    }

    /**
     * A copy in which the limits named {@code limitNames} are shadow limits (and no other: an empty array makes
     * every limit enforced again). See the class Javadoc for what a shadow limit does.
     *
     * @throws IllegalArgumentException when a name is not one of the rule's limits, or the rule's mode is
     *                                  neither exact nor coalesced
     */
    public Rule withShadow(String... limitNames) {
        Set<String> names = new HashSet<>();
        for (String n : Checks.notNull(limitNames, "shadow")) {
            names.add(Checks.notNull(n, "shadow"));
        }
        return new Rule(name, limits, mode, failurePolicy, names, tiers.list(), isTierRule(), lockout, tierKeysAfter);
    }

    /** A copy in which every limit is a shadow limit: the rule admits every request and says what it would do. */
    public Rule asShadow() {
        return withShadow(limits.stream().map(Limit::name).toArray(String[]::new));
    }

    /**
     * A copy with {@code lockout} ({@code null}: none): after its number of rejections of a key within its
     * period, the key is locked out for its duration (see {@link Lockout}). In memory and in Redis the lockout
     * is decided in the same atomic step as the limits; {@code reset} lifts it.
     *
     * @throws IllegalArgumentException when the rule's mode is not {@link Mode#exact()}
     */
    public Rule withLockout(Lockout lockout) {
        return new Rule(name, limits, mode, failurePolicy, shadow, tiers.list(), isTierRule(), lockout, tierKeysAfter);
    }

    /** The lockout, or null when the rule has none. */
    public Lockout lockout() {
        return lockout;
    }

    /** The names of the shadow limits (empty: every limit is enforced). */
    public Set<String> shadow() {
        return shadow;
    }

    /** Whether the limit named {@code limitName} is a shadow limit. */
    public boolean isShadow(String limitName) {
        return shadow.contains(limitName);
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
        List<Tier> nextTiers = new ArrayList<>(tiers.list());
        for (int i = 0; i < nextTiers.size(); i++) {
            Tier t = nextTiers.get(i).withLimit(limit);
            replaced |= t != nextTiers.get(i);
            nextTiers.set(i, t);
        }
        if (!replaced) {
            next.add(limit);
        }
        return new Rule(name, next, mode, failurePolicy, shadow, nextTiers, isTierRule(), lockout, tierKeysAfter);
    }

    /**
     * A copy with these tiers in place of any it had (none: no tiers). The first tier whose keys match a key
     * decides it; see {@link Tier}. A tier of limits runs in the rule's mode, with the rule's failure policy,
     * and those of its limits whose names are shadow limits of the rule are shadow limits of the tier.
     *
     * @throws IllegalArgumentException for two tiers of one name, a tier no key can reach (after a tier that
     *                                  matches every key, or an exact key an earlier tier already matches), or a
     *                                  tier whose limits cannot run in the rule's mode
     */
    public Rule withTiers(Tier... tiers) {
        return withTiers(tiers == null ? null : java.util.Arrays.asList(tiers));
    }

    /** As {@link #withTiers(Tier...)}. */
    public Rule withTiers(List<Tier> tiers) {
        Checks.notNull(tiers, "tiers");
        if (isTierRule()) {
            throw new IllegalArgumentException("the rule of a tier cannot have tiers");
        }
        return new Rule(name, limits, mode, failurePolicy, shadow, new ArrayList<>(tiers), false, lockout,
                tierKeysAfter);
    }

    /** The tiers, in the order they are tried; empty for a rule without tiers. */
    public List<Tier> tiers() {
        return tiers.list();
    }

    /** Whether the rule has tiers. */
    public boolean hasTiers() {
        return !tiers.isEmpty();
    }

    /**
     * A copy whose tiers are matched on the part of each key after its first {@code separator} (on the whole key
     * when it holds none), while the state stays under the whole key. For a service that keeps tenants apart by
     * scoping each caller's key as {@code tenant + separator + key}: a tier names the keys callers send, whatever
     * their tenant, and two tenants' keys still never share state. {@code sluice serve} scopes a key sent with a
     * {@code domain} this way, with U+001F, which it refuses in domains and keys.
     *
     * <p>Default: tiers match the whole key. Only which tier applies changes; {@link #tierFor} and
     * {@link #ruleFor} take the whole key as before.
     */
    public Rule withTierKeysAfter(char separator) {
        return new Rule(name, limits, mode, failurePolicy, shadow, tiers.list(), isTierRule(), lockout, separator);
    }

    /** The separator {@link #withTierKeysAfter} set, or -1 when tiers match the whole key (the default). */
    public int tierKeysAfter() {
        return tierKeysAfter;
    }

    /** The first tier whose keys match {@code key}, or null when the rule's own limits decide it. */
    public Tier tierFor(String key) {
        if (tiers.isEmpty()) {
            return null;
        }
        int t = tiers.indexOf(tierKey(key));
        return t < 0 ? null : tiers.tier(t);
    }

    /** The part of {@code key} that tiers match: see {@link #withTierKeysAfter}. */
    private String tierKey(String key) {
        int at = tierKeysAfter < 0 ? -1 : key.indexOf(tierKeysAfter);
        return at < 0 ? key : key.substring(at + 1);
    }

    /**
     * The rule whose limits decide {@code key}: this rule when no tier matches, the tier's rule for a tier of
     * limits (named after this rule and the tier, holding the tier's state apart), null for an unlimited or
     * blocked tier, which no store is asked about.
     */
    public Rule ruleFor(String key) {
        if (tiers.isEmpty()) {
            return this;
        }
        int t = tiers.indexOf(tierKey(key));
        return t < 0 ? this : tiers.rule(t);
    }

    /**
     * The rule deciding the keys of the tier named {@code tierName} (as {@link #ruleFor} gives it for such a
     * key), or null when the rule has no tier of limits of that name. For a process that holds a tier's rule and
     * checks it against the rule that defines the tier (the server behind a remote store).
     */
    public Rule tierRule(String tierName) {
        for (int t = 0; t < tiers.list().size(); t++) {
            if (tiers.tier(t).name().equals(tierName)) {
                return tiers.rule(t);
            }
        }
        return null;
    }

    /**
     * The name of the rule whose tier this rule decides, and that tier's name; null for a rule that is not a
     * tier's ({@link #ruleFor}). Stores see tiers' rules only; this is how one names its tier on the wire.
     */
    public String[] tierOf() {
        int at = name.indexOf(Tiers.SEPARATOR);
        return at < 0 ? null : new String[] {name.substring(0, at), name.substring(at + 1)};
    }

    /**
     * Every rule that holds state for this rule's keys: this rule, then each tier of limits' rule. A
     * {@link RateLimiter#reset} forgets a key in all of them.
     */
    public List<Rule> stateRules() {
        if (tiers.isEmpty()) {
            return List.of(this);
        }
        List<Rule> all = new ArrayList<>();
        all.add(this);
        all.addAll(tiers.rules());
        return all;
    }

    private boolean isTierRule() {
        return name.indexOf(Tiers.SEPARATOR) >= 0;
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
                && r.failurePolicy.equals(failurePolicy) && r.shadow.equals(shadow)
                && r.tiers.list().equals(tiers.list()) && java.util.Objects.equals(r.lockout, lockout)
                && r.tierKeysAfter == tierKeysAfter;
    }

    @Override
    public int hashCode() {
        return (name.hashCode() * 31 + limits.hashCode()) * 31 + mode.hashCode() * 7 + failurePolicy.hashCode()
                + shadow.hashCode() * 13 + tiers.list().hashCode() * 17 + java.util.Objects.hashCode(lockout)
                + tierKeysAfter * 19;
    }

    @Override
    public String toString() {
        return "Rule{" + name + ", " + limits + (mode.kind() == Mode.Kind.EXACT ? "" : ", mode=" + mode)
                + (failurePolicy.kind() == FailurePolicy.Kind.RAISE ? "" : ", on_failure=" + failurePolicy)
                + (shadow.isEmpty() ? "" : ", shadow=" + new java.util.TreeSet<>(shadow))
                + (tiers.isEmpty() ? "" : ", tiers=" + tiers.list())
                + (tierKeysAfter < 0 ? "" : ", tier_keys_after=U+" + String.format("%04X", tierKeysAfter))
                + (lockout == null ? "" : ", " + lockout) + "}";
    }
}
