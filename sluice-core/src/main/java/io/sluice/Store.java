package io.sluice;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Where limit state lives and where decisions are made: in process memory ({@link #memory()}), inside
 * Redis ({@code sluice-redis}), or elsewhere. A store is shared by any number of {@link RateLimiter}s; keys
 * are namespaced by {@link Rule#name()}.
 *
 * <p>Every store runs the same algorithms with the same semantics and passes the contract suite in
 * {@code sluice-testkit}. Each store chooses its time source and documents it. Implementations are
 * thread-safe. Decisions never throw for a valid request; arguments were validated by the limiter.
 */
public interface Store extends AutoCloseable {

    /** Decides {@code request} for {@code key} under every limit of {@code rule}, all or nothing. */
    Decision decide(Rule rule, String key, Request request);

    /** As {@link #decide}, without blocking the caller. */
    CompletableFuture<Decision> decideAsync(Rule rule, String key, Request request);

    /**
     * Decides {@code request} under every limit of every (rule, key) target at once, all or nothing: it is
     * admitted only if every limit of every target admits, and then every target is charged; otherwise none is
     * (a {@code count_rejected} limit still records the attempt, as in {@link #decide}). A best-effort request
     * grants the smallest count every target can grant. The decision reports the targets' limits as one rule of
     * all their limits would (the tightest limit when admitted, the longest retry-after when rejected).
     *
     * <p>The in-memory store and the Redis store implement it (Redis Cluster: see its documentation for keys
     * that hash to different slots). The default decides a single target with {@link #decide} and refuses
     * several, for a store that cannot decide them together.
     *
     * @throws IllegalArgumentException for an empty or repeated target, or permits a target's rule can never grant
     * @throws UnsupportedOperationException when this store cannot decide several targets together
     */
    default Decision decideTogether(List<Target> targets, Request request) {
        Target.check(targets, request);
        if (targets.size() == 1) {
            return decide(targets.get(0).rule(), targets.get(0).key(), request);
        }
        throw new UnsupportedOperationException(getClass().getName() + " cannot decide several keys all or nothing");
    }

    /**
     * As {@link #decideTogether}, without blocking the caller on a store that decides elsewhere (Redis, a remote
     * server). The targets are checked before anything is sent: a bad list throws at once, as
     * {@link #decideTogether} does; a store failure completes the future exceptionally. The default decides on
     * the caller's thread, which is right for a store that decides in process.
     *
     * @throws IllegalArgumentException for an empty or repeated target, or permits a target's rule can never grant
     * @throws UnsupportedOperationException when this store cannot decide several targets together
     */
    default CompletableFuture<Decision> decideTogetherAsync(List<Target> targets, Request request) {
        Target.check(targets, request);
        if (targets.size() == 1) {
            return decideAsync(targets.get(0).rule(), targets.get(0).key(), request);
        }
        Decision d;
        try {
            d = decideTogether(targets, request);
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            throw e;
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return CompletableFuture.completedFuture(d);
    }

    /** Returns a concurrency lease; false when the lease is unknown or already expired. */
    boolean release(Rule rule, String key, long lease);

    /** As {@link #release}, without blocking the caller. */
    CompletableFuture<Boolean> releaseAsync(Rule rule, String key, long lease);

    /**
     * Charges {@code estimate} permits to {@code key} under every limit of {@code rule} as a {@code tryAcquire}
     * would, all or nothing, and when admitted keeps ticket {@code ticketId} for {@code lifetimeMicros}: what
     * {@link #settle} needs to charge the difference or refund into the windows or buckets charged
     * (docs/reference/settle.md). Arguments were checked by the limiter ({@link Ticket}).
     *
     * @throws UnsupportedOperationException when this store, or an algorithm of the rule, cannot settle tickets
     * @throws IllegalArgumentException      when ticket {@code ticketId} is still open for this rule and key
     *                                       (nothing is charged)
     */
    default Decision charge(Rule rule, String key, long estimate, String ticketId, long lifetimeMicros) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot charge an estimate to settle later");
    }

    /** As {@link #charge}, without blocking the caller. */
    default CompletableFuture<Decision> chargeAsync(Rule rule, String key, long estimate, String ticketId,
                                                    long lifetimeMicros) {
        return CompletableFuture.completedFuture(charge(rule, key, estimate, ticketId, lifetimeMicros));
    }

    /**
     * Settles ticket {@code ticketId} of {@code key} at {@code actual} and forgets it, atomically: more than the
     * estimate charges the difference unconditionally, less refunds it where the algorithm allows. A ticket not
     * held (settled already, expired, never charged) changes nothing and answers {@link Settlement#unknown()}.
     *
     * @throws UnsupportedOperationException when this store cannot settle tickets
     */
    default Settlement settle(Rule rule, String key, String ticketId, long actual) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot settle tickets");
    }

    /** As {@link #settle}, without blocking the caller. */
    default CompletableFuture<Settlement> settleAsync(Rule rule, String key, String ticketId, long actual) {
        return CompletableFuture.completedFuture(settle(rule, key, ticketId, actual));
    }

    /** Forgets all state of {@code key} under {@code rule}: the next request sees a fresh key. */
    void reset(Rule rule, String key);

    /** Releases the store's resources; the default does nothing. */
    @Override
    default void close() {
    }

    /** A builder for the in-memory store. */
    static MemoryStoreBuilder memory() {
        return new MemoryStoreBuilder();
    }

    /**
     * A rule applied to a key: one target of {@link #decideTogether}. Immutable.
     *
     * @param rule the rule whose every limit applies
     * @param key  the key, valid as {@link RateLimiter} requires
     */
    record Target(Rule rule, String key) {

        /** @throws IllegalArgumentException for a null rule or an invalid key */
        public Target {
            Checks.notNull(rule, "rule");
            Checks.key(key);
        }

        /**
         * Checks a list of targets for {@link #decideTogether}: at least one, no (rule name, key) pair twice, and
         * for an all-or-nothing request at most what each target's rule can ever grant.
         *
         * @throws IllegalArgumentException naming what is wrong
         */
        public static void check(List<Target> targets, Request request) {
            if (targets == null || targets.isEmpty()) {
                throw new IllegalArgumentException("targets must hold at least one (rule, key)");
            }
            Checks.notNull(request, "request");
            Set<List<String>> seen = new HashSet<>();
            for (Target t : targets) {
                Checks.notNull(t, "target");
                if (!seen.add(List.of(t.rule().name(), t.key()))) {
                    throw new IllegalArgumentException("targets must be distinct; rule '" + t.rule().name()
                            + "' on key '" + t.key() + "' appears twice");
                }
                if (request.op() != Request.Op.TRY_AT_MOST && request.permits() != 0) {
                    long max = Math.min(t.rule().maxPermits(), Limit.MAX_COUNT);
                    if (request.permits() > max) {
                        throw new IllegalArgumentException("permits must be in [1, " + max + "] for rule '"
                                + t.rule().name() + "', was " + request.permits());
                    }
                }
            }
        }
    }
}
