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

    /*
     * The layout is chosen for the in-process hot path, where a decision is the one object allocated (56 bytes,
     * from 88): the fields every decision has are inline, the rare ones in {@link Extras} (null for nearly every
     * decision), and a decision's wait and retry-after share one field, since an admitted decision has no
     * retry-after and a rejected one no wait (when a caller gives both, the other one goes to the extras).
     * {@code allowed} and the source's ordinal share one byte.
     */
    private final long granted;
    private final long remaining;
    private final long resetAfterMicros;
    /** The wait when allowed, the retry-after when rejected. */
    private final long micros;
    private final String limit;
    private final Extras extras;
    /** Bit 7: allowed; bit 6: locked out; bits 0-5: the source's ordinal. */
    private final byte flags;

    private static final int ALLOWED = 0x80;
    private static final int LOCKED_OUT = 0x40;
    private static final int SOURCE_BITS = 0x3f;
    private static final Source[] SOURCES = Source.values();

    /**
     * What few decisions carry: a lease, a shadow limit's verdict, a retry-after when allowed or a wait when not,
     * the tier that applied.
     */
    private record Extras(long lease, String shadowLimit, long shadowRetryAfterMicros, long otherMicros,
                          String tier) {

        static Extras of(long lease, String shadowLimit, long shadowRetryAfterMicros, long otherMicros, String tier) {
            return lease == NO_LEASE && shadowLimit == null && otherMicros == 0 && tier == null ? null
                    : new Extras(lease, shadowLimit, shadowRetryAfterMicros, otherMicros, tier);
        }
    }

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
        Checks.notNull(limit, "limit");
        Checks.notNull(source, "source");
        this.granted = granted;
        this.remaining = remaining;
        this.resetAfterMicros = resetAfterMicros;
        this.micros = allowed ? waitMicros : retryAfterMicros;
        long otherMicros = allowed ? retryAfterMicros : waitMicros;
        this.limit = limit;
        this.extras = Extras.of(lease, shadowLimit, shadowRetryAfterMicros, otherMicros, null);
        this.flags = (byte) ((allowed ? ALLOWED : 0) | (lockedOut ? LOCKED_OUT : 0) | source.ordinal());
    }

    private Decision(Decision d, Source source, Extras extras) {
        this.granted = d.granted;
        this.remaining = d.remaining;
        this.resetAfterMicros = d.resetAfterMicros;
        this.micros = d.micros;
        this.limit = d.limit;
        this.extras = extras;
        this.flags = (byte) ((d.flags & ~SOURCE_BITS) | source.ordinal());
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
        return Objects.equals(tier, tier()) ? this : new Decision(this, source(),
                Extras.of(lease(), shadowLimit(), shadowRetryAfterMicros(), other(), tier));
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
        return source == source() ? this : new Decision(this, Checks.notNull(source, "source"), extras);
    }

    /** Whether the request was admitted (for a partial grant: whether at least one permit was granted). */
    public boolean allowed() {
        return (flags & ALLOWED) != 0;
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
        return allowed() ? other() : micros;
    }

    /** {@link #retryAfterMicros()} as a duration. */
    public Duration retryAfter() {
        return toDuration(retryAfterMicros());
    }

    /** Whole seconds for a {@code Retry-After} header: rounded up, never down. */
    public long retryAfterSeconds() {
        long retryAfterMicros = retryAfterMicros();
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
        return allowed() ? micros : other();
    }

    /** {@link #waitMicros()} as a duration. */
    public Duration waitTime() {
        return toDuration(waitMicros());
    }

    /** The name of the limit that decided. */
    public String limit() {
        return limit;
    }

    /** The lease granted by a {@code concurrency} limit, to pass to {@link RateLimiter#release}; else {@link #NO_LEASE}. */
    public long lease() {
        return extras == null ? NO_LEASE : extras.lease();
    }

    /** Who decided: the store, a local-first mode, or a failure policy. */
    public Source source() {
        return SOURCES[flags & SOURCE_BITS];
    }

    /**
     * The shadow limit that would have rejected this request had it been in force (the one with the longest
     * retry-after when several would have), or null when none would have (or the rule has no shadow limit).
     */
    public String shadowLimit() {
        return extras == null ? null : extras.shadowLimit();
    }

    /** Whether a shadow limit would have rejected this request: {@code shadowLimit() != null}. */
    public boolean shadowRejected() {
        return shadowLimit() != null;
    }

    /** The retry-after {@link #shadowLimit()} would have given, in microseconds; 0 when none would have rejected. */
    public long shadowRetryAfterMicros() {
        return extras == null ? 0 : extras.shadowRetryAfterMicros();
    }

    /**
     * The {@link Tier} of the rule that applied to the key, or null when no tier matched and the rule's own limits
     * decided. For an unlimited or blocked tier, {@link #limit()} is the tier's name too.
     */
    public String tier() {
        return extras == null ? null : extras.tier();
    }

    /**
     * Whether the rule's {@link Lockout} rejected this request: the key is locked out (this rejection may be the
     * one that locked it). Then {@link #limit()} is {@link Lockout#NAME} and {@link #retryAfterMicros()} the time
     * left in the lockout.
     */
    public boolean lockedOut() {
        return (flags & LOCKED_OUT) != 0;
    }

    /** The retry-after of an admitted decision or the wait of a rejected one: 0 but for a caller's own. */
    private long other() {
        return extras == null ? 0 : extras.otherMicros();
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
        return flags == d.flags && granted == d.granted && remaining == d.remaining && micros == d.micros
                && resetAfterMicros == d.resetAfterMicros && limit.equals(d.limit) && Objects.equals(extras, d.extras);
    }

    @Override
    public int hashCode() {
        return Objects.hash(allowed(), granted, remaining, retryAfterMicros(), resetAfterMicros, waitMicros(), limit,
                lease(), source(), shadowLimit(), shadowRetryAfterMicros(), tier(), lockedOut());
    }

    @Override
    public String toString() {
        long lease = lease();
        String shadowLimit = shadowLimit();
        return "Decision{" + (allowed() ? "allowed" : "rejected") + ", granted=" + granted + ", remaining="
                + remaining + ", retryAfterMicros=" + retryAfterMicros() + ", resetAfterMicros=" + resetAfterMicros
                + ", waitMicros=" + waitMicros() + ", limit=" + limit + (lease == NO_LEASE ? "" : ", lease=" + lease)
                + (source() == Source.STORE ? "" : ", source=" + source())
                + (shadowLimit == null ? "" : ", shadowLimit=" + shadowLimit + ", shadowRetryAfterMicros="
                        + shadowRetryAfterMicros()) + (tier() == null ? "" : ", tier=" + tier())
                + (lockedOut() ? ", lockedOut" : "") + "}";
    }

    private static final class ChronoUnitHolder {
        static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE / 1_000_000);
    }
}
