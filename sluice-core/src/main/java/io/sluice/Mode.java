package io.sluice;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How a rule is enforced by a shared store such as Redis: every decision in the store ({@link #exact()}, the
 * default), several in-flight decisions sent together ({@link #coalesced()}), or decided in process and
 * reconciled with the store ({@link #leased()}, {@link #synced(Duration)}). The in-memory store decides every
 * mode exactly in its own memory: it has nothing to reconcile with.
 *
 * <table>
 * <caption>What each mode promises</caption>
 * <tr><th>mode</th><th>round trips</th><th>bound</th></tr>
 * <tr><td>exact</td><td>one per decision</td><td>exact</td></tr>
 * <tr><td>coalesced</td><td>one per batch of requests that queued while a call on the same key was in
 * flight</td><td>exact: decided inside Redis in arrival order</td></tr>
 * <tr><td>leased</td><td>one per lease: a batch of permits taken atomically and spent locally</td><td>never
 * admits more than the store granted; unused permits expire with their lease (bounded under-use)</td></tr>
 * <tr><td>synced</td><td>one pipelined round trip per sync interval for all hot keys</td><td>per window at most
 * limit + (nodes − 1) × per-node admission rate × (sync interval + one round trip), and never more than
 * nodes × limit</td></tr>
 * </table>
 *
 * <p>Immutable; validated on construction and, against its rule's limits, by {@link Rule#withMode}.
 */
public final class Mode {

    /** The four modes. */
    public enum Kind { EXACT, COALESCED, LEASED, SYNCED }

    /** Default {@link #leaseTtl()}: how long a node may spend leased permits. */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofMillis(500);
    /** Default {@link #syncInterval()}. */
    public static final Duration DEFAULT_SYNC_INTERVAL = Duration.ofMillis(100);
    /** Shortest lease or sync interval accepted. */
    public static final Duration MIN_INTERVAL = Duration.ofMillis(1);
    /** Longest lease or sync interval accepted. */
    public static final Duration MAX_INTERVAL = Duration.ofHours(1);

    /** Algorithms whose permits can be leased: those that grant now without reserving or handing out ids. */
    public static final Set<String> LEASABLE = names(AlgorithmName.FIXED_WINDOW,
            AlgorithmName.SLIDING_LOG, AlgorithmName.SLIDING_WINDOW, AlgorithmName.ROLLING_WINDOW,
            AlgorithmName.TOKEN_BUCKET, AlgorithmName.GCRA, AlgorithmName.REFRESH_PERIOD);
    /** Algorithms whose stored state can absorb a node's pushed increments: the window counters. */
    public static final Set<String> SYNCABLE = names(AlgorithmName.FIXED_WINDOW, AlgorithmName.SLIDING_WINDOW);

    private static final Mode EXACT = new Mode(Kind.EXACT, DEFAULT_LEASE_TTL, 0, DEFAULT_SYNC_INTERVAL);
    private static final Mode COALESCED = new Mode(Kind.COALESCED, DEFAULT_LEASE_TTL, 0, DEFAULT_SYNC_INTERVAL);

    private final Kind kind;
    private final Duration leaseTtl;
    private final long maxBatch;
    private final Duration syncInterval;

    private Mode(Kind kind, Duration leaseTtl, long maxBatch, Duration syncInterval) {
        this.kind = kind;
        this.leaseTtl = leaseTtl;
        this.maxBatch = maxBatch;
        this.syncInterval = syncInterval;
    }

    /** Every decision is one atomic script call in the store. The default. */
    public static Mode exact() {
        return EXACT;
    }

    /**
     * Exact, with fewer round trips under load: requests for the same key that arrive while a call for it is
     * in flight are sent together in the next call and decided inside Redis one after another, in arrival
     * order, as if each had been its own call.
     */
    public static Mode coalesced() {
        return COALESCED;
    }

    /**
     * Strict local-first: a node takes a batch of permits from the store in one atomic call and spends them
     * in process until they run out or {@link #leaseTtl()} passes; unspent permits expire with the lease. The
     * batch adapts to the node's observed rate, up to {@link #maxBatch()}. Default lease TTL 500 ms; max batch
     * automatic (see {@link #maxBatch()}).
     */
    public static Mode leased() {
        return new Mode(Kind.LEASED, DEFAULT_LEASE_TTL, 0, DEFAULT_SYNC_INTERVAL);
    }

    /**
     * Eventually consistent local-first: each node decides in process against the totals it last pulled from
     * the store, and every {@code interval} pushes its increments and pulls fresh totals for all its keys in
     * one pipelined round trip.
     *
     * <p><b>Bound.</b> Per window, a fleet of {@code nodes} admits at most
     * {@code limit + (nodes − 1) × r × (interval + one round trip)}, where {@code r} is a node's admission rate
     * ({@code r × span}: the most one node admits within that span), and never more than {@code nodes × limit}:
     * each node counts its own admissions against the limit. It holds while syncs succeed (docs/synced-mode.md
     * derives it). When no sync of a key has succeeded for more than three intervals, decisions on it fail with the
     * store's exception, so the rule's {@link FailurePolicy} applies; the node's admissions are pushed after
     * recovery while their window still matters. Only the window counters can be synced ({@link #SYNCABLE}).
     *
     * @throws IllegalArgumentException unless the interval is between 1 ms and 1 hour
     */
    public static Mode synced(Duration interval) {
        return new Mode(Kind.SYNCED, DEFAULT_LEASE_TTL, 0, checkInterval(interval, "sync_interval"));
    }

    /** A leased mode whose leases last {@code leaseTtl}. @throws IllegalArgumentException unless in [1 ms, 1 h] */
    public Mode withLeaseTtl(Duration leaseTtl) {
        requireKind(Kind.LEASED, "lease_ttl");
        return new Mode(kind, checkInterval(leaseTtl, "lease_ttl"), maxBatch, syncInterval);
    }

    /**
     * A leased mode that takes at most {@code maxBatch} permits per lease.
     *
     * @throws IllegalArgumentException unless in [1, 10^12]
     */
    public Mode withMaxBatch(long maxBatch) {
        requireKind(Kind.LEASED, "max_batch");
        return new Mode(kind, leaseTtl, Checks.count(maxBatch, "max_batch"), syncInterval);
    }

    public Kind kind() {
        return kind;
    }

    /** How long a node may spend the permits of one lease (leased mode). */
    public Duration leaseTtl() {
        return leaseTtl;
    }

    /**
     * The most permits one lease takes (leased mode); 0 means automatic: a sixteenth of the rule's smallest
     * limit, at least 1.
     */
    public long maxBatch() {
        return maxBatch;
    }

    /** How often a node pushes its increments and pulls totals (synced mode). */
    public Duration syncInterval() {
        return syncInterval;
    }

    /**
     * Checks that every limit of a rule can be enforced in this mode.
     *
     * @throws IllegalArgumentException naming the first limit whose algorithm the mode cannot run
     */
    void check(String ruleName, List<Limit> limits) {
        Set<String> supported = kind == Kind.LEASED ? LEASABLE : kind == Kind.SYNCED ? SYNCABLE : null;
        if (supported == null) {
            return;
        }
        for (Limit limit : limits) {
            if (!supported.contains(limit.algorithm())) {
                throw new IllegalArgumentException("mode " + name() + " of rule '" + ruleName + "' supports "
                        + supported.stream().sorted().toList() + "; limit '" + limit.name() + "' is "
                        + limit.algorithm());
            }
        }
    }

    /** The mode's name as in rule files: {@code exact}, {@code coalesced}, {@code leased}, {@code synced}. */
    public String name() {
        return kind.name().toLowerCase(java.util.Locale.ROOT);
    }

    private void requireKind(Kind required, String field) {
        if (kind != required) {
            throw new IllegalArgumentException(field + " applies to mode " + required.name().toLowerCase(
                    java.util.Locale.ROOT) + ", not " + name());
        }
    }

    private static Set<String> names(AlgorithmName... algorithms) {
        return Arrays.stream(algorithms).map(AlgorithmName::text).collect(Collectors.toUnmodifiableSet());
    }

    private static Duration checkInterval(Duration d, String field) {
        if (d == null || d.compareTo(MIN_INTERVAL) < 0 || d.compareTo(MAX_INTERVAL) > 0) {
            throw new IllegalArgumentException(field + " must be between 1ms and 1h, was " + d);
        }
        return d;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Mode m && m.kind == kind && m.leaseTtl.equals(leaseTtl) && m.maxBatch == maxBatch
                && m.syncInterval.equals(syncInterval);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, leaseTtl, maxBatch, syncInterval);
    }

    @Override
    public String toString() {
        return switch (kind) {
            case EXACT, COALESCED -> name();
            case LEASED -> "leased(ttl=" + leaseTtl + ", maxBatch=" + (maxBatch == 0 ? "auto" : maxBatch) + ")";
            case SYNCED -> "synced(" + syncInterval + ")";
        };
    }
}
