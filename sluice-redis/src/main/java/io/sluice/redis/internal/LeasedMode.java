package io.sluice.redis.internal;

import io.sluice.Clock;
import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.internal.algorithm.Arith;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link Mode#leased() Leased mode} in the Redis store: strict local-first. Per (rule, key) a node holds a
 * <em>lease</em>, permits it took from Redis in one atomic script call and has not spent yet, and decides
 * requests by spending from it in process; it never admits more than Redis granted.
 *
 * <h2>Taking a lease</h2>
 *
 * A lease is the store's best-effort decision ({@code at_most}, {@link Request#tryAcquireAtMost}) for a batch
 * of permits: one script call that charges every limit of the rule the largest count all of them can grant,
 * up to the batch, atomically with every other node's calls. No script change is needed, and what Redis
 * charged is exactly what the node may spend. One lease call per key is in flight at a time. A request the lease
 * cannot cover joins the key's queue and gets a future (asynchronously; a synchronous caller blocks on its own
 * future only, as in exact mode); the first one starts the call, sized for the whole queue. When the call lands
 * the queue is decided in arrival order: each request the lease covers is spent; when Redis granted less than
 * asked it has nothing more now, so the others are rejected, as exact calls would have been; otherwise (more
 * requests arrived during the call than it asked for) the next call is sent for those still queued. So a
 * request waits for at most two calls. (Chaining each waiter on the in-flight future instead lets later
 * requests overtake earlier ones call after call: under a saturated, refilling limit a synchronous caller was
 * measured starving past its four-second await bound.)
 *
 * <h2>Deciding a request</h2>
 *
 * <ul>
 *   <li>{@code tryAcquire(p)} (and a {@code reserve} that may not wait): spent locally when the lease holds at
 *       least {@code p} (source {@link Decision.Source#LEASE}, granted {@code p}, remaining what the lease
 *       still holds, the limit the lease call reported, no retry-after or wait). Otherwise a lease of
 *       {@code max(p − held, batch)} is taken (more when other requests are queued for it) and {@code p}
 *       spent from both. When Redis grants fewer than that
 *       needs, the request is rejected and the partial lease is kept for later, smaller requests; the
 *       retry-after reported is the lease call's {@code resetAfter}, the time until every limit of the rule is
 *       full again, after which any admissible request passes unless others take the permits first (an upper
 *       bound: the reply of a best-effort call does not say when the missing permits come back). When Redis
 *       grants nothing, the request is rejected with Redis's retry-after, and the rejection is remembered until
 *       {@code min(retry-after, lease TTL)}: meanwhile requests the lease cannot cover are rejected locally
 *       (source LEASE, the retry-after counting down) instead of calling Redis each.
 *   <li>{@code tryAcquireAtMost(p)}: grants what the lease holds, up to {@code p}; with an empty lease, takes
 *       one of {@code max(p, batch)} first.
 *   <li>Requests that wait or reserve ({@code reserve}/{@code acquire} with a wait), peeks and releases are not
 *       leased: {@link ExactMode} decides them exactly, in Redis. A peek therefore reports Redis's
 *       state, in which every node's unspent leases are already charged. {@code reset} forgets the node's
 *       lease of the key too.
 * </ul>
 *
 * <h2>Guarantee</h2>
 *
 * Every permit admitted was charged in Redis, once, by a lease call, so across all nodes no limit admits more
 * than Redis granted. What changes is when a permit is used: up to the lease's lifetime after it was charged.
 * {@link LeasePlan} bounds that lifetime by {@link Mode#leaseTtl()} and, for {@code fixed_window} and
 * {@code refresh_period}, by the end of the window (cycle) the permits were charged in, so those two keep their
 * guarantee exactly (at most the limit used per window, per cycle). For the others, counted by the moment of
 * use: {@code token_bucket} admits at most {@code capacity + rate × (t + ttl)} in any interval {@code t},
 * {@code gcra} {@code burst + rate × (t + ttl)}, {@code sliding_log} at most its limit in every interval of
 * {@code window − ttl}, {@code rolling_window} in every interval of {@code window − bucket − ttl}, and
 * {@code sliding_window}'s counters count permits by the window they were charged in. Requests queued when a
 * lease call was sent are decided on its reply, as an exact decision would be, even if the lease ended while
 * the call was in flight (Redis decided them before it ended); requests that arrived later are local spends and
 * respect the lease's end (else one arriving after a window ended could spend a permit of that window).
 *
 * <h2>Under-use</h2>
 *
 * Permits still held when a lease expires are lost (Redis charged them): at most one batch ({@link #batch},
 * at most {@link LeasePlan#maxBatch()}) per node and key per lease lifetime, which is the TTL or, for the
 * windowed algorithms, what remains of the window. {@link #expiredPermits()} counts them.
 *
 * <h2>Batch</h2>
 *
 * The node measures its own spending on the key: at each lease call, the permits spent since the previous one
 * over the time since then, averaged over lease calls (an exponentially weighted average with weight 1/2). The
 * batch is that rate × the lease TTL, what the node expects to spend during one lease, clamped to
 * [{@code p}, {@link LeasePlan#maxBatch()}] and to at most twice the previous batch. A cold key (no
 * measurement yet) asks for just what the request needs; a hot one doubles its batch per lease up to the cap,
 * within a dozen calls for any cap up to 4,096.
 *
 * <h2>Failure</h2>
 *
 * A lease call that fails (through {@link RedisGate}, which may also refuse it) fails the requests queued for it
 * that the lease cannot cover (one failing call for all of them, not one each), with its
 * {@link io.sluice.redis.RedisStoreException}; the rule's failure policy applies above this class. Permits
 * already leased stay spendable until they expire, also while Redis is down. A lease call that timed out may
 * have been charged: those permits are lost, never spent twice.
 *
 * <h2>Memory and time</h2>
 *
 * An entry per (rule, key) the node decided recently. Entries whose lease expired, with nothing in flight and
 * no remembered rejection, idle for a lease TTL, are dropped by a sweep at most once a second (or once a TTL
 * when longer), run by the next lease call. A changed rule (e.g. {@code updateLimit}) drops the leases taken
 * under the previous one. Time is the store's clock when it has one (it then also decides the lease calls),
 * else {@link System#nanoTime()}.
 */
final class LeasedMode implements StoreMode {

    private static final Log log = Log.get(LeasedMode.class);
    private static final long MIN_SWEEP_INTERVAL_MICROS = 1_000_000;

    /** Takes the leases, and decides what this mode does not lease. */
    private final ExactMode exact;
    private final Clock clock;
    private final SluiceListener listener;
    private final long nanoOrigin = System.nanoTime();
    private final ConcurrentHashMap<String, RuleLeases> rules = new ConcurrentHashMap<>();
    private final Set<String> reportedNotLeased = ConcurrentHashMap.newKeySet();
    private final AtomicLong nextSweep = new AtomicLong();
    private final AtomicLong expiredPermits = new AtomicLong();
    private final AtomicLong leaseCalls = new AtomicLong();

    /**
     * @param clock the store's clock, or null for Redis server time (local time is then {@code System.nanoTime})
     */
    LeasedMode(ExactMode exact, Clock clock, SluiceListener listener) {
        this.exact = exact;
        this.clock = clock;
        this.listener = listener;
    }

    /**
     * Tries and best-effort tries are decided from the node's lease of the key; waits, reservations and peeks go
     * to Redis exactly, as do rules whose leases could not be bounded by their windows (see {@link LeasePlan}).
     */
    @Override
    public CompletableFuture<Decision> decide(Rule rule, String key, Request request) {
        try {
            return leases(rule, request) ? acquire(leasesOf(rule), key, request) : exact.decide(rule, key, request);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Releases are not leased: Redis holds the concurrency leases. */
    @Override
    public CompletableFuture<Boolean> release(Rule rule, String key, long lease) {
        return exact.release(rule, key, lease);
    }

    /**
     * Whether this request is decided from a lease: a try, a best-effort try or a reserve that may not wait, on a
     * rule whose leases can be bounded (see {@link LeasePlan}).
     */
    private boolean leases(Rule rule, Request request) {
        Request.Op op = request.op();
        boolean immediate = op == Request.Op.TRY || op == Request.Op.TRY_AT_MOST
                || (op == Request.Op.RESERVE && request.maxWaitMicros() == 0);
        return immediate && leasesOf(rule).plan.leased();
    }

    /** Drops the node's lease and remembered rejection of the key ({@code reset}). */
    @Override
    public void forget(Rule rule, String key) {
        RuleLeases r = rules.get(rule.name());
        if (r != null) {
            LeasedKey e = r.keys.remove(key);
            if (e != null) {
                synchronized (e) {
                    e.drop(expiredPermits);
                }
            }
        }
    }

    /** Permits leased and never spent: expired, dropped by reset or a rule change (the under-use). */
    long expiredPermits() {
        return expiredPermits.get();
    }

    /** Lease calls made (for tests and metrics). */
    long leaseCalls() {
        return leaseCalls.get();
    }

    /** The (rule, key) entries held now (for tests). */
    int entries() {
        return rules.values().stream().mapToInt(r -> r.keys.size()).sum();
    }

    // ------------------------------------------------------------------------------------------------ deciding

    private CompletableFuture<Decision> acquire(RuleLeases r, String key, Request request) {
        for (;;) {
            LeasedKey e = r.keys.computeIfAbsent(key, k -> new LeasedKey());
            LeasedKey.Waiter waiter;
            long requested = 0;
            long sentAt = 0;
            synchronized (e) {
                if (e.removed) {
                    continue; // swept between the lookup and the lock: take the key's new entry
                }
                long now = now();
                e.lastUsed = now;
                Decision local = e.decideLocally(request, now, expiredPermits);
                if (local != null) {
                    return CompletableFuture.completedFuture(local);
                }
                waiter = new LeasedKey.Waiter(request, now, new CompletableFuture<>());
                e.waiting.add(waiter);
                if (!e.calling) {
                    requested = e.startLease(now, r.plan);
                    sentAt = now;
                }
            }
            if (requested > 0) {
                sweepIfDue(sentAt);
                lease(r, key, e, requested, sentAt);
            }
            return waiter.decision();
        }
    }

    /** Sends a lease call; its outcome is handled by {@link #landed}. */
    private void lease(RuleLeases r, String key, LeasedKey e, long requested, long sentAt) {
        leaseCalls.incrementAndGet();
        CompletableFuture<Decision> reply;
        try {
            reply = exact.lease(r.plan.rule(), key, requested, clock == null, sentAt);
        } catch (RuntimeException ex) {
            reply = CompletableFuture.failedFuture(ex);
        }
        reply.whenComplete((d, error) -> {
            try {
                landed(r, key, e, requested, sentAt, d, unwrap(error));
            } catch (RuntimeException bug) {
                // Never leave the key's queue waiting on a call that will not land again.
                log.error("leased mode failed to handle a lease call's outcome for rule '{}'", r.plan.rule().name(),
                        bug);
                failQueue(e, bug);
            }
        });
    }

    /** Fails every queued request and ends the call, so the key is usable again. */
    private static void failQueue(LeasedKey e, Throwable failure) {
        List<LeasedKey.Waiter> failed;
        synchronized (e) {
            failed = new ArrayList<>(e.waiting);
            e.waiting.clear();
            e.calling = false;
        }
        failed.forEach(w -> w.decision().completeExceptionally(failure));
    }

    /**
     * A lease call's outcome: the reply joins the entry, then the queued requests are decided in arrival order
     * (their futures completed outside the entry's lock), and when some are still waiting for permits Redis may
     * still have, the next call is sent for them.
     */
    private void landed(RuleLeases r, String key, LeasedKey e, long requested, long sentAt, Decision reply,
                        Throwable error) {
        List<LeasedKey.Waiter> decided = new ArrayList<>();
        List<Decision> decisions = new ArrayList<>();
        long nextRequested = 0;
        long nextSentAt = 0;
        synchronized (e) {
            e.calling = false;
            long now = now();
            if (error == null) {
                e.absorb(reply, sentAt, now, r.plan, expiredPermits);
            }
            // Redis granted less than asked: it has nothing more now, so those it could not cover are rejected,
            // as exact calls would have been.
            boolean ranOut = error == null && (!reply.allowed() || reply.granted() < requested);
            for (Iterator<LeasedKey.Waiter> it = e.waiting.iterator(); it.hasNext(); ) {
                LeasedKey.Waiter w = it.next();
                // A request queued when the call was sent is decided on its reply, as an exact call would be,
                // even if the lease ended in flight. One that came later is a local spend like any other: were
                // it served from a lease whose window ended meanwhile, it would spend permits of that window in
                // the next one.
                Decision d = e.serve(w.request(), now, w.arrivedAt() <= sentAt);
                if (d == null && ranOut) {
                    d = e.rejectedAfterLease(w.request(), reply, now);
                }
                if (d != null || error != null) {
                    it.remove();
                    decided.add(w);
                    decisions.add(d);
                }
            }
            e.expire(now, expiredPermits);
            if (e.removed) {
                e.drop(expiredPermits); // reset or superseded while the call was in flight
            }
            if (!e.waiting.isEmpty()) {
                nextRequested = e.startLease(now, r.plan);
                nextSentAt = now;
            }
        }
        if (error == null) {
            tellLease(r.plan.rule(), requested, reply.allowed() ? reply.granted() : 0);
        }
        for (int i = 0; i < decided.size(); i++) {
            Decision d = decisions.get(i);
            if (d != null) {
                decided.get(i).decision().complete(d);
            } else {
                // The call failed and nothing leased covers the request.
                decided.get(i).decision().completeExceptionally(error);
            }
        }
        if (nextRequested > 0) {
            lease(r, key, e, nextRequested, nextSentAt);
        }
    }

    private void tellLease(Rule rule, long requested, long granted) {
        if (listener == SluiceListener.NONE) {
            return;
        }
        try {
            listener.onLease(rule, requested, granted);
        } catch (RuntimeException ex) {
            log.warn("listener {} failed on a lease; ignored", listener, ex);
        }
    }

    // ------------------------------------------------------------------------------------------------ upkeep

    private RuleLeases leasesOf(Rule rule) {
        RuleLeases r = rules.get(rule.name());
        if (r != null && (r.plan.rule() == rule || r.plan.rule().equals(rule))) {
            return r;
        }
        return rules.compute(rule.name(), (name, current) -> {
            if (current != null && current.plan.rule().equals(rule)) {
                return current;
            }
            if (current != null) {
                // A new version of the rule: permits leased under the old one are not spent under the new one.
                current.keys.values().forEach(e -> {
                    synchronized (e) {
                        e.drop(expiredPermits);
                    }
                });
            }
            LeasePlan plan = LeasePlan.of(rule, clock != null);
            if (!plan.leased() && reportedNotLeased.add(rule.name())) {
                log.warn("rule '{}' is in mode leased but is decided exactly, one Redis call per request: {}",
                        rule.name(), plan.notLeasedBecause());
            }
            return new RuleLeases(plan);
        });
    }

    /** Drops idle entries whose lease expired; at most once per sweep interval, by one caller. */
    private void sweepIfDue(long now) {
        long due = nextSweep.get();
        if (now < due || !nextSweep.compareAndSet(due, Long.MAX_VALUE)) {
            return;
        }
        long longestTtl = 0;
        for (RuleLeases r : rules.values()) {
            longestTtl = Math.max(longestTtl, r.plan.ttlMicros());
            for (Map.Entry<String, LeasedKey> k : r.keys.entrySet()) {
                if (k.getValue().dropIfIdle(now, r.plan.ttlMicros(), expiredPermits)) {
                    r.keys.remove(k.getKey(), k.getValue());
                }
            }
        }
        nextSweep.set(now + Math.max(MIN_SWEEP_INTERVAL_MICROS, longestTtl));
    }

    /** Local time in microseconds: the store's clock, or a monotonic count from this object's creation. */
    private long now() {
        return clock != null ? clock.nowMicros() : (System.nanoTime() - nanoOrigin) / 1_000;
    }

    private static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** One rule version's plan and its keys' entries. */
    private static final class RuleLeases {
        final LeasePlan plan;
        final ConcurrentHashMap<String, LeasedKey> keys = new ConcurrentHashMap<>();

        RuleLeases(LeasePlan plan) {
            this.plan = plan;
        }
    }
}
