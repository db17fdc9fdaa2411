package io.sluice.redis.internal;

import io.sluice.Clock;
import io.sluice.Decision;
import io.sluice.FailurePolicy;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.internal.LimitShares;
import io.sluice.redis.BatchRequest;
import io.sluice.redis.RedisStoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * What a Redis store decides when Redis cannot: each rule's {@link FailurePolicy}, applied to a call that ended
 * {@linkplain RedisFailures#unavailable unavailable} (the breaker refused it, it timed out, the connection was
 * refused or lost). Any other failure is passed on unchanged, whatever the policy: a script error or a bug is
 * not an outage and must not be hidden by failing open.
 *
 * <ul>
 * <li>{@code raise}: the failure, as without a policy.</li>
 * <li>{@code fail_open}: allowed; granted = the permits asked (for {@code at_most} too, and 0 for a peek of 0),
 * remaining 0, no wait, no lease, limit = the rule's first limit.</li>
 * <li>{@code fail_closed}: rejected; retry-after = the time until the breaker may let a call through again
 * ({@link CircuitBreaker#retryAfterMicros}, at least 1 µs), reset-after the same, limit = the rule's first
 * limit.</li>
 * <li>{@code local_fallback(share)}: decided by one in-memory store owned by the Redis store, under the rule
 * with every limit scaled by {@code share} ({@link LimitShares#scale}). Its state starts empty at the first
 * fallback decision and is kept across outages; it is never written back to Redis.</li>
 * </ul>
 *
 * <p>Peeks follow the same policy. A lease granted by the local fallback carries {@link #FALLBACK_LEASE} so that
 * its release goes to the local store and never to Redis (local lease ids are microsecond timestamps, like
 * Redis's, and could name a Redis lease). Thread-safe.
 *
 * <p>Public for the remote store ({@code sluice-client}), which decides by the same policies behind the same
 * {@link CircuitBreaker} when {@code sluice serve} cannot be reached: its failures are
 * {@link io.sluice.redis.RedisUnavailableException}s too.
 */
public final class FailurePolicies implements AutoCloseable {

    /**
     * Set in the id of every lease the local fallback grants. Store lease ids are below 2^53 (they are
     * microsecond timestamps, exact in Lua's doubles), so the bit never names a Redis lease.
     */
    static final long FALLBACK_LEASE = 1L << 62;

    /** A rule and its scaled copy for the fallback, cached by rule name. */
    private record Scaled(Rule rule, Rule scaled) {}

    private final Store fallback;
    private final CircuitBreaker breaker;
    private final ConcurrentHashMap<String, Scaled> scaled = new ConcurrentHashMap<>();

    /** @param clock the store's client clock, or null for the system clock */
    public FailurePolicies(Clock clock, CircuitBreaker breaker) {
        this.fallback = Store.memory().clock(clock == null ? Clock.system() : clock).build();
        this.breaker = breaker;
    }

    /**
     * The decision of a call whose future is {@code decided}: unchanged when it succeeds or the rule's policy is
     * {@code raise}; decided by the policy when it ended unavailable.
     */
    public CompletableFuture<Decision> guard(Rule rule, String key, Request request, CompletableFuture<Decision> decided) {
        if (rule.failurePolicy().kind() == FailurePolicy.Kind.RAISE
                || (decided.isDone() && !decided.isCompletedExceptionally())) {
            return decided;
        }
        return decided.exceptionallyCompose(error -> RedisFailures.unavailable(error)
                ? CompletableFuture.completedFuture(decide(rule, key, request))
                : CompletableFuture.failedFuture(error));
    }

    /**
     * Waits (at most the store's await bound) for the unguarded {@code decided}, then applies the policy itself,
     * once: were the caller to wait for a {@link #guard}ed future and give up first, that future would still apply
     * the policy when the call times out, charging a local fallback twice.
     */
    Decision await(FailureTranslator failures, Rule rule, String key, Request request,
                   CompletableFuture<Decision> decided) {
        try {
            return failures.await(decided);
        } catch (RedisStoreException e) {
            if (applies(rule, e)) {
                return decide(rule, key, request);
            }
            throw e;
        }
    }

    /** Waits for a {@link #guardRelease}d release; false when Redis is unavailable and the policy applies. */
    boolean awaitRelease(FailureTranslator failures, Rule rule, CompletableFuture<Boolean> released) {
        try {
            return failures.await(released);
        } catch (RedisStoreException e) {
            if (applies(rule, e)) {
                return false;
            }
            throw e;
        }
    }

    /** Whether a call of {@code rule} that ended with {@code error} is decided by its policy. */
    public static boolean applies(Rule rule, Throwable error) {
        return rule.failurePolicy().kind() != FailurePolicy.Kind.RAISE && RedisFailures.unavailable(error);
    }

    /**
     * The decision of the rule's policy for a request Redis could not decide; only for policies other than
     * {@code raise}.
     */
    public Decision decide(Rule rule, String key, Request request) {
        FailurePolicy policy = rule.failurePolicy();
        String limit = rule.limits().get(0).name();
        return switch (policy.kind()) {
            case FAIL_OPEN -> new Decision(true, request.permits(), 0, 0, 0, 0, limit, Decision.NO_LEASE,
                    Decision.Source.FAIL_OPEN);
            case FAIL_CLOSED -> {
                long retry = breaker.retryAfterMicros();
                yield new Decision(false, 0, 0, retry, retry, 0, limit, Decision.NO_LEASE, Decision.Source.FAIL_CLOSED);
            }
            case LOCAL_FALLBACK -> {
                Decision d = fallback.decide(scaled(rule), key, request);
                yield d.lease() == Decision.NO_LEASE ? d.withSource(Decision.Source.LOCAL_FALLBACK)
                        : new Decision(d.allowed(), d.granted(), d.remaining(), d.retryAfterMicros(),
                        d.resetAfterMicros(), d.waitMicros(), d.limit(), d.lease() | FALLBACK_LEASE,
                        Decision.Source.LOCAL_FALLBACK);
            }
            case RAISE -> throw new IllegalStateException("the raise policy decides nothing; rule " + rule.name());
        };
    }

    /**
     * The decision of one batch request after its pipelined calls ended: {@code parts} are the futures of its
     * script calls (one for all targets, or one per target when they span Cluster slots), or null when none was
     * sent (the breaker refused the batch, or the wait gave up), in which case {@code error} is the failure of
     * all. A call that succeeded keeps its Redis decision; the targets of a call that failed unavailable are
     * each decided by their rule's policy; the target decisions are combined as for targets in different slots
     * ({@link BatchDecisions#combine}). So a multi-target request decided by policies is not atomic across
     * its targets: a local fallback that admits one target stays charged when another rejects.
     *
     * @throws RuntimeException the failure, when a failed call is not an outage or a target's rule has the
     *                          {@code raise} policy
     */
    public Decision decideBatch(BatchRequest request, List<CompletableFuture<Decision>> parts, Throwable error) {
        if (parts == null) {
            return BatchDecisions.combine(byPolicy(request.targets(), request.request(), error));
        }
        List<Decision> decisions = new ArrayList<>(request.targets().size());
        for (int i = 0; i < parts.size(); i++) {
            Throwable failure = failure(parts.get(i));
            if (failure == null) {
                decisions.add(parts.get(i).join());
            } else {
                decisions.addAll(byPolicy(parts.size() == 1 ? request.targets() : List.of(request.targets().get(i)),
                        request.request(), failure));
            }
        }
        return BatchDecisions.combine(decisions);
    }

    private List<Decision> byPolicy(List<BatchRequest.Target> targets, Request request, Throwable error) {
        List<Decision> decisions = new ArrayList<>(targets.size());
        for (BatchRequest.Target t : targets) {
            if (!applies(t.rule(), error)) {
                throw rethrow(error);
            }
            decisions.add(decide(t.rule(), t.key(), request));
        }
        return decisions;
    }

    /** The failure of a completed future, or null when it succeeded. */
    private static Throwable failure(CompletableFuture<?> done) {
        try {
            done.join();
            return null;
        } catch (CompletionException | CancellationException e) {
            return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        }
    }

    private static RuntimeException rethrow(Throwable error) {
        Throwable cause = RedisFailures.unwrap(error);
        return cause instanceof RuntimeException r ? r : new CompletionException(cause);
    }

    /** Whether {@code lease} was granted by the local fallback. */
    public static boolean fallbackLease(long lease) {
        return lease != Decision.NO_LEASE && (lease & FALLBACK_LEASE) != 0;
    }

    /**
     * Returns a lease: one the local fallback granted goes back to the local store, never to Redis; any other is
     * returned by {@code release}. When that fails because Redis is unavailable and the rule has a policy other
     * than {@code raise}, the answer is false: the lease holds its permits in Redis until its TTL ends.
     */
    public CompletableFuture<Boolean> guardRelease(Rule rule, String key, long lease,
                                                   Supplier<CompletableFuture<Boolean>> release) {
        if (fallbackLease(lease)) {
            try {
                return CompletableFuture.completedFuture(releaseFallback(rule, key, lease));
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        CompletableFuture<Boolean> released = release.get();
        if (rule.failurePolicy().kind() == FailurePolicy.Kind.RAISE) {
            return released;
        }
        return released.exceptionallyCompose(e -> applies(rule, e)
                ? CompletableFuture.completedFuture(false) : CompletableFuture.failedFuture(e));
    }

    /** Returns a lease the local fallback granted. */
    public boolean releaseFallback(Rule rule, String key, long lease) {
        return fallback.release(scaled(rule), key, lease & ~FALLBACK_LEASE);
    }

    /** Forgets the key in the local fallback too, so a reset key starts fresh wherever it is decided next. */
    public void reset(Rule rule, String key) {
        if (rule.failurePolicy().kind() == FailurePolicy.Kind.LOCAL_FALLBACK) {
            fallback.reset(scaled(rule), key);
        }
    }

    private Rule scaled(Rule rule) {
        Scaled s = scaled.get(rule.name());
        if (s != null && (s.rule() == rule || s.rule().equals(rule))) {
            return s.scaled();
        }
        Scaled next = new Scaled(rule, LimitShares.scale(rule, rule.failurePolicy().share()));
        scaled.put(rule.name(), next);
        return next.scaled();
    }

    @Override
    public void close() {
        fallback.close();
    }
}
