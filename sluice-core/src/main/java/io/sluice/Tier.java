package io.sluice;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Keys of a {@link Rule} that get their own treatment: their own limits (a premium tenant with a larger limit),
 * no limit at all ({@link Kind#UNLIMITED}, an internal caller) or no admission at all ({@link Kind#BLOCKED}, a
 * blocked caller). A rule's tiers are tried in order and the <b>first</b> whose keys match applies; a key no
 * tier matches is decided by the rule's own limits. Decisions name the tier that applied
 * ({@link Decision#tier()}).
 *
 * <pre>{@code
 * Rule api = Rule.of("api", SlidingLog.of(100, Duration.ofMinutes(1)))
 *     .withTiers(
 *         Tier.named("premium").keys("tenant-acme", "tenant-big-*").limits(SlidingLog.of(1000, Duration.ofMinutes(1))),
 *         Tier.named("internal").keys("svc-*").unlimited(),
 *         Tier.named("blocked").keys("tenant-evil").blocked());
 * }</pre>
 *
 * <p>Keys are exact keys or globs: {@code *} matches any run of characters, {@code \*} a literal star, {@code \\}
 * a backslash. A tier's limits keep their state apart from the rule's and from every other tier's: state is
 * per (rule, tier, limit name), so a key that moves to another tier starts there with that tier's state for it
 * (fresh, unless it was in that tier before and its state has not expired), and finds its old state again if it
 * moves back before that state expires. Immutable.
 */
public final class Tier {

    /** What a tier does with the keys it matches. */
    public enum Kind {
        /** Decided by the tier's own limits, in place of the rule's. */
        LIMITS,
        /** Always admitted, nothing counted, no store asked. */
        UNLIMITED,
        /** Always rejected, with a retry-after of "never" ({@link Long#MAX_VALUE}), no store asked. */
        BLOCKED
    }

    private final String name;
    private final List<KeyPattern> keys;
    private final Kind kind;
    private final List<Limit> limits;

    private Tier(String name, List<KeyPattern> keys, Kind kind, List<Limit> limits) {
        this.name = name;
        this.keys = keys;
        this.kind = kind;
        this.limits = limits;
    }

    /**
     * Starts a tier of this name: give its keys, then what it does.
     *
     * @throws IllegalArgumentException if the name is null, empty, longer than 128 characters or not well-formed
     */
    public static Builder named(String name) {
        return new Builder(Checks.name(name, "tier name"));
    }

    public String name() {
        return name;
    }

    /** The keys and patterns, as written, in order. */
    public List<String> keys() {
        return keys.stream().map(KeyPattern::text).toList();
    }

    public Kind kind() {
        return kind;
    }

    /** The tier's limits ({@link Kind#LIMITS}); empty for the other kinds. */
    public List<Limit> limits() {
        return limits;
    }

    /** Whether {@code key} matches one of the tier's keys or patterns. */
    public boolean matches(String key) {
        for (KeyPattern p : keys) {
            if (p.matches(key)) {
                return true;
            }
        }
        return false;
    }

    /**
     * What an unlimited or blocked tier decides for {@code request}, without a store: an unlimited tier admits
     * every permit asked for (none for a peek) and reports {@link Limit#MAX_COUNT} remaining; a blocked tier
     * rejects with a retry-after of "never" ({@link Long#MAX_VALUE}). Both name the tier as the decision's
     * {@link Decision#limit()} and {@link Decision#tier()}.
     *
     * @throws IllegalStateException for a tier of limits, whose rule decides
     */
    public Decision decide(Request request) {
        Checks.notNull(request, "request");
        return switch (kind) {
            case UNLIMITED -> new Decision(true, request.op() == Request.Op.PEEK ? 0 : request.permits(),
                    Limit.MAX_COUNT, 0, 0, 0, name, Decision.NO_LEASE).withTier(name);
            case BLOCKED -> new Decision(false, 0, 0, Long.MAX_VALUE, 0, 0, name, Decision.NO_LEASE).withTier(name);
            case LIMITS -> throw new IllegalStateException("tier '" + name + "' has limits: its rule decides, not"
                    + " the tier");
        };
    }

    List<KeyPattern> patterns() {
        return keys;
    }

    /** A copy whose limit of the same name is {@code limit}; this tier itself when it holds none of that name. */
    Tier withLimit(Limit limit) {
        List<Limit> next = new ArrayList<>(limits);
        boolean replaced = false;
        for (int i = 0; i < next.size(); i++) {
            if (next.get(i).name().equals(limit.name())) {
                next.set(i, limit);
                replaced = true;
            }
        }
        return replaced ? new Tier(name, keys, kind, Collections.unmodifiableList(next)) : this;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Tier t && t.name.equals(name) && t.keys.equals(keys) && t.kind == kind
                && t.limits.equals(limits);
    }

    @Override
    public int hashCode() {
        return ((name.hashCode() * 31 + keys.hashCode()) * 31 + kind.hashCode()) * 31 + limits.hashCode();
    }

    @Override
    public String toString() {
        return "Tier{" + name + ", keys=" + keys + ", " + (kind == Kind.LIMITS ? limits.toString()
                : kind.name().toLowerCase(java.util.Locale.ROOT)) + "}";
    }

    /** Names a tier's keys, then what it does; each terminal method returns the tier. */
    public static final class Builder {
        private final String name;
        private List<KeyPattern> keys;

        private Builder(String name) {
            this.name = name;
        }

        /**
         * The exact keys and glob patterns the tier matches (at least one).
         *
         * @throws IllegalArgumentException for no key, an empty or ill-formed one, a backslash that escapes
         *                                  neither {@code *} nor {@code \}, a pattern no key can match, or the same
         *                                  pattern twice
         */
        public Builder keys(String... keys) {
            return keys(keys == null ? null : Arrays.asList(keys));
        }

        /** As {@link #keys(String...)}. */
        public Builder keys(List<String> keys) {
            if (keys == null || keys.isEmpty()) {
                throw new IllegalArgumentException("keys of tier '" + name + "' must hold at least one key or"
                        + " pattern");
            }
            List<KeyPattern> parsed = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                KeyPattern p = KeyPattern.parse(keys.get(i), "keys[" + i + "] of tier '" + name + "'");
                if (parsed.contains(p)) {
                    throw new IllegalArgumentException("keys[" + i + "] of tier '" + name + "' repeats '"
                            + p.text() + "'");
                }
                parsed.add(p);
            }
            this.keys = List.copyOf(parsed);
            return this;
        }

        /**
         * A tier decided by these limits in place of the rule's (at least one; names unique, at most one
         * {@link Concurrency} limit, as in a rule).
         *
         * @throws IllegalArgumentException when no keys were given, or the limits are not a valid rule's
         */
        public Tier limits(Limit... limits) {
            return limits(limits == null ? null : Arrays.asList(limits));
        }

        /** As {@link #limits(Limit...)}. */
        public Tier limits(List<? extends Limit> limits) {
            if (limits == null || limits.isEmpty()) {
                throw new IllegalArgumentException("limits of tier '" + name + "' must hold at least one limit"
                        + " (or make the tier unlimited or blocked)");
            }
            try {
                Rule.of(name, limits); // checks names and concurrency limits as a rule does
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("limits of tier '" + name + "': " + e.getMessage(), e);
            }
            return new Tier(name, requireKeys(), Kind.LIMITS, List.copyOf(limits));
        }

        /** A tier whose keys are always admitted, without asking the store. */
        public Tier unlimited() {
            return new Tier(name, requireKeys(), Kind.UNLIMITED, List.of());
        }

        /** A tier whose keys are always rejected, without asking the store. */
        public Tier blocked() {
            return new Tier(name, requireKeys(), Kind.BLOCKED, List.of());
        }

        private List<KeyPattern> requireKeys() {
            if (keys == null) {
                throw new IllegalArgumentException("keys of tier '" + name + "' must be given before what the tier"
                        + " does (Tier.named(name).keys(...).limits(...))");
            }
            return keys;
        }
    }
}
