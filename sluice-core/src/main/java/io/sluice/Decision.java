package io.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * What a limiter decided for one request, and why: enough for {@code Retry-After} and the IETF
 * {@code RateLimit} / {@code RateLimit-Policy} header fields.
 *
 * <p>For a rule of several limits, {@link #remaining()} is the smallest across its limits, {@link #limit()}
 * names the limit that rejected (the one with the longest retry-after when several did) or, when admitted,
 * the tightest one (fewest remaining), and the wait is the longest any limit asked for. Immutable.
 *
 * <p>Shadow limits ({@link Rule#withShadow}) never decide: the fields above come from the enforced limits (from
 * the shadow ones, allowed and without a wait, when the rule has no other), and {@link #shadowLimit()} names the
 * shadow limit that would have rejected the request, with the retry-after it would have given.
 *
 * <p>A rule's {@link Lockout} rejects on its own: {@link #lockedOut()} is true, {@link #limit()} is
 * {@link Lockout#NAME}, and the retry-after (and reset-after) is the time left until the lockout ends.
 */
public final class Decision {

    /** {@link #lease()} when no lease was granted. */
    public static final long NO_LEASE = -1;

    /**
     * Who made a decision. A store deciding in its own state says {@link #STORE}; a Redis-backed limiter in a
     * local-first {@link Mode} says {@link #LEASE} or {@link #SYNC}; a Redis store repeating a denial it has just
     * learned says {@link #CACHED}; a decision taken by the rule's
     * {@link FailurePolicy} because the store failed or its circuit breaker was open says which policy.
     */
    public enum Source {
        /** The store decided in its state: the in-memory store, or the Redis script (plain or coalesced). */
        STORE,
        /** Spent locally from permits leased from Redis ({@link Mode#leased}). */
        LEASE,
        /** Decided locally against the totals last synced with Redis ({@link Mode#synced}). */
        SYNC,
        /** Admitted by {@link FailurePolicy#failOpen()}: the store could not decide. */
        FAIL_OPEN,
        /** Rejected by {@link FailurePolicy#failClosed()}: the store could not decide. */
        FAIL_CLOSED,
        /** Decided by the local fallback limiter of {@link FailurePolicy#localFallback(double)}. */
        LOCAL_FALLBACK,
        /**
         * Rejected by a Redis store without a round trip, from a denial Redis gave moments before for the same
         * key and at most as many permits, while Redis would still deny (exact mode; docs/cached-denials.md).
         */
        CACHED;

        /** Whether the decision was made by a failure policy rather than in the shared state. */
        public boolean degraded() {
            return this == FAIL_OPEN || this == FAIL_CLOSED || this == LOCAL_FALLBACK;
        }
    }

    private final boolean allowed;
    private final long granted;
    private final long remaining;
    private final long retryAfterMicros;
    private final long resetAfterMicros;
    private final long waitMicros;
    private final String limit;
    private final long lease;
    private final Source source;
    private final String shadowLimit;
    private final long shadowRetryAfterMicros;
    private final String tier;
    private final boolean lockedOut;

    /**
     * Creates a decision; stores build these, users read them.
     *
     * @throws IllegalArgumentException when a count or duration is negative, or {@code limit} is null
     */
    public Decision(boolean allowed, long granted, long remaining, long retryAfterMicros, long resetAfterMicros,
                    long waitMicros, String limit, long lease) {
        this(allowed, granted, remaining, retryAfterMicros, resetAfterMicros, waitMicros, limit, lease, Source.STORE);
    }

    /**
     * Creates a decision made by {@code source}.
     *
     * @throws IllegalArgumentException when a count or duration is negative, or {@code limit} or {@code source}
     *                                  is null
     */
    public Decision(boolean allowed, long granted, long remaining, long retryAfterMicros, long resetAfterMicros,
                    long waitMicros, String limit, long lease, Source source) {
        this(allowed, granted, remaining, retryAfterMicros, resetAfterMicros, waitMicros, limit, lease, source, null,
                0);
    }

    /**
     * Creates a decision made by {@code source} in which the shadow limit {@code shadowLimit} (null: none) would
     * have rejected the request, with a retry-after of {@code shadowRetryAfterMicros}.
     *
     * @throws IllegalArgumentException when a count or duration is negative, {@code limit} or {@code source} is
     *                                  null, or a shadow retry-after is given without a shadow limit
     */
    public Decision(boolean allowed, long granted, long remaining, long retryAfterMicros, long resetAfterMicros,
                    long waitMicros, String limit, long lease, Source source, String shadowLimit,
                    long shadowRetryAfterMicros) {
        this(allowed, granted, remaining, retryAfterMicros, resetAfterMicros, waitMicros, limit, lease, source,
                shadowLimit, shadowRetryAfterMicros, false);
    }

    private Decision(boolean allowed, long granted, long remaining, long retryAfterMicros, long resetAfterMicros,
                     long waitMicros, String limit, long lease, Source source, String shadowLimit,
                     long shadowRetryAfterMicros, boolean lockedOut) {
        if (shadowRetryAfterMicros < 0 || (shadowLimit == null && shadowRetryAfterMicros != 0)) {
            throw new IllegalArgumentException("shadowRetryAfterMicros must be non-negative, and 0 without a"
                    + " shadow limit; was " + shadowRetryAfterMicros + " for shadow limit " + shadowLimit);
        }
        if (granted < 0 || remaining < 0 || retryAfterMicros < 0 || resetAfterMicros < 0 || waitMicros < 0) {
            throw new IllegalArgumentException("decision fields must be non-negative: granted=" + granted
                    + ", remaining=" + remaining + ", retryAfterMicros=" + retryAfterMicros + ", resetAfterMicros="
                    + resetAfterMicros + ", waitMicros=" + waitMicros);
        }
        this.allowed = allowed;
        this.granted = granted;
        this.remaining = remaining;
        this.retryAfterMicros = retryAfterMicros;
        this.resetAfterMicros = resetAfterMicros;
        this.waitMicros = waitMicros;
        this.limit = Checks.notNull(limit, "limit");
        this.lease = lease;
        this.source = Checks.notNull(source, "source");
        this.shadowLimit = shadowLimit;
        this.shadowRetryAfterMicros = shadowRetryAfterMicros;
        this.tier = null;
        this.lockedOut = lockedOut;
    }

    private Decision(Decision d, Source source, String tier) {
        this.allowed = d.allowed;
        this.granted = d.granted;
        this.remaining = d.remaining;
        this.retryAfterMicros = d.retryAfterMicros;
        this.resetAfterMicros = d.resetAfterMicros;
        this.waitMicros = d.waitMicros;
        this.limit = d.limit;
        this.lease = d.lease;
        this.source = source;
        this.shadowLimit = d.shadowLimit;
        this.shadowRetryAfterMicros = d.shadowRetryAfterMicros;
        this.tier = tier;
        this.lockedOut = d.lockedOut;
    }

    /**
     * This decision as taken under the {@link Tier} named {@code tier} (null: under the rule's own limits).
     *
     * @throws IllegalArgumentException when {@code tier} is not a valid tier name
     */
    public Decision withTier(String tier) {
        if (tier != null) {
            Checks.name(tier, "tier");
        }
        return Objects.equals(tier, this.tier) ? this : new Decision(this, source, tier);
    }

    /**
     * A rejection by the rule's {@link Lockout}, made by {@code source}: nothing granted or remaining, limit
     * {@link Lockout#NAME}, retry-after and reset-after {@code retryAfterMicros}, the time left in the lockout.
     *
     * @throws IllegalArgumentException when {@code retryAfterMicros} is not positive, or {@code source} is null
     */
    public static Decision lockout(long retryAfterMicros, Source source) {
        if (retryAfterMicros <= 0) {
            throw new IllegalArgumentException("a lockout's retryAfterMicros must be positive, was "
                    + retryAfterMicros);
        }
        return new Decision(false, 0, 0, retryAfterMicros, retryAfterMicros, 0, Lockout.NAME, NO_LEASE, source, null,
                0, true);
    }

    /** This decision as made by {@code source}. */
    public Decision withSource(Source source) {
        return source == this.source ? this : new Decision(this, Checks.notNull(source, "source"), tier);
    }

    /** Whether the request was admitted (for a partial grant: whether at least one permit was granted). */
    public boolean allowed() {
        return allowed;
    }

    /** Permits granted: the requested count, fewer for a partial grant, 0 when rejected or peeked. */
    public long granted() {
        return granted;
    }

    /** Permits still available after this decision, the smallest across the rule's limits. */
    public long remaining() {
        return remaining;
    }

    /**
     * When rejected, how long until the same request could pass if nothing else happened, in microseconds
     * (0 when allowed). {@link Long#MAX_VALUE} when no amount of waiting alone would do.
     */
    public long retryAfterMicros() {
        return retryAfterMicros;
    }

    /** {@link #retryAfterMicros()} as a duration. */
    public Duration retryAfter() {
        return toDuration(retryAfterMicros);
    }

    /** Whole seconds for a {@code Retry-After} header: rounded up, never down. */
    public long retryAfterSeconds() {
        return retryAfterMicros == Long.MAX_VALUE ? Long.MAX_VALUE : (retryAfterMicros + 999_999) / 1_000_000;
    }

    /** Microseconds until every limit of the rule is back to its full (empty) state. */
    public long resetAfterMicros() {
        return resetAfterMicros;
    }

    /** {@link #resetAfterMicros()} as a duration. */
    public Duration resetAfter() {
        return toDuration(resetAfterMicros);
    }

    /**
     * For an admitted reservation, how long the caller must wait before using the permits, in microseconds
     * ({@link RateLimiter#acquire} has already slept it); 0 otherwise.
     */
    public long waitMicros() {
        return waitMicros;
    }

    /** {@link #waitMicros()} as a duration. */
    public Duration waitTime() {
        return toDuration(waitMicros);
    }

    /** The name of the limit that decided. */
    public String limit() {
        return limit;
    }

    /** The lease granted by a {@code concurrency} limit, to pass to {@link RateLimiter#release}; else {@link #NO_LEASE}. */
    public long lease() {
        return lease;
    }

    /** Who decided: the store, a local-first mode, or a failure policy. */
    public Source source() {
        return source;
    }

    /**
     * The shadow limit that would have rejected this request had it been in force (the one with the longest
     * retry-after when several would have), or null when none would have (or the rule has no shadow limit).
     */
    public String shadowLimit() {
        return shadowLimit;
    }

    /** Whether a shadow limit would have rejected this request: {@code shadowLimit() != null}. */
    public boolean shadowRejected() {
        return shadowLimit != null;
    }

    /** The retry-after {@link #shadowLimit()} would have given, in microseconds; 0 when none would have rejected. */
    public long shadowRetryAfterMicros() {
        return shadowRetryAfterMicros;
    }

    /**
     * The {@link Tier} of the rule that applied to the key, or null when no tier matched and the rule's own limits
     * decided. For an unlimited or blocked tier, {@link #limit()} is the tier's name too.
     */
    public String tier() {
        return tier;
    }

    /**
     * Whether the rule's {@link Lockout} rejected this request: the key is locked out (this rejection may be the
     * one that locked it). Then {@link #limit()} is {@link Lockout#NAME} and {@link #retryAfterMicros()} the time
     * left in the lockout.
     */
    public boolean lockedOut() {
        return lockedOut;
    }

    private static Duration toDuration(long micros) {
        return micros == Long.MAX_VALUE ? ChronoUnitHolder.FOREVER
                : Duration.ofSeconds(micros / 1_000_000, (micros % 1_000_000) * 1_000);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Decision d)) {
            return false;
        }
        return allowed == d.allowed && granted == d.granted && remaining == d.remaining
                && retryAfterMicros == d.retryAfterMicros && resetAfterMicros == d.resetAfterMicros
                && waitMicros == d.waitMicros && lease == d.lease && limit.equals(d.limit) && source == d.source
                && Objects.equals(shadowLimit, d.shadowLimit) && shadowRetryAfterMicros == d.shadowRetryAfterMicros
                && Objects.equals(tier, d.tier) && lockedOut == d.lockedOut;
    }

    @Override
    public int hashCode() {
        return Objects.hash(allowed, granted, remaining, retryAfterMicros, resetAfterMicros, waitMicros, limit, lease,
                source, shadowLimit, shadowRetryAfterMicros, tier, lockedOut);
    }

    @Override
    public String toString() {
        return "Decision{" + (allowed ? "allowed" : "rejected") + ", granted=" + granted + ", remaining=" + remaining
                + ", retryAfterMicros=" + retryAfterMicros + ", resetAfterMicros=" + resetAfterMicros
                + ", waitMicros=" + waitMicros + ", limit=" + limit + (lease == NO_LEASE ? "" : ", lease=" + lease)
                + (source == Source.STORE ? "" : ", source=" + source)
                + (shadowLimit == null ? "" : ", shadowLimit=" + shadowLimit + ", shadowRetryAfterMicros="
                        + shadowRetryAfterMicros) + (tier == null ? "" : ", tier=" + tier)
                + (lockedOut ? ", lockedOut" : "") + "}";
    }

    private static final class ChronoUnitHolder {
        static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE / 1_000_000);
    }
}
