package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.internal.algorithm.Arith;
import io.sluice.internal.algorithm.SyncableAlgorithm;
import io.sluice.redis.RedisStoreException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The synced mode ({@link io.sluice.Mode#synced}) of the Redis store: each (rule, key) is decided in process
 * against the shared states this node last pulled from Redis plus the permits it admitted since, and once per sync
 * interval one pipelined round pushes every hot key's admissions and pulls fresh states (script
 * {@code sync.lua}). docs/synced-mode.md explains the design and derives the bound.
 *
 * <p><b>Per key</b> ({@link SyncedKey}) the node keeps the view (each limit's state as the last successful sync returned it) and
 * buckets: per limit, the permits it admitted in one window, filed under the time it began admitting there. A
 * bucket's total only grows; the sync script remembers, per node and key, the largest total it absorbed from each
 * bucket and absorbs only the difference, so a call that runs twice or is retried after a timeout never counts a
 * permit twice, and a failed push is simply carried by the next call. A bucket is dropped once its window is over
 * ({@link SyncableAlgorithm#absorbableUntil}): its permits could no longer change a decision.
 *
 * <p><b>Decisions</b> run the rule's transitions ({@link io.sluice.internal.RuleEvaluator}) on the view with the permits not yet in it
 * absorbed, so a node admits {@code p} when what it admitted since the sync plus {@code p} fits in what the sync
 * left (all or nothing across the rule's limits); a window that ended since the sync starts afresh, counting the
 * node's own admissions in it. The decision says {@link Decision.Source#SYNC}. The first request on a key this node
 * has not synced in the last round (a new key, or one idle for {@value #ACTIVE_ROUNDS} rounds) syncs it first, in
 * one round trip, so a node never starts blind.
 *
 * <p><b>Rounds</b> run on one daemon thread per store ({@link SyncThread}), started by the first synced decision and stopped by
 * {@link #close}, every sync interval measured on the store's clock (the client clock when the store has one,
 * else the JVM's monotonic clock); a round includes the keys with admissions not yet pushed or with a decision in
 * the last {@value #ACTIVE_ROUNDS} rounds, each as one script call, written together and flushed once, and goes
 * through the store's {@link RedisGate} as one {@code sync} call. {@link SluiceListener#onSync} hears of each round.
 * Keys idle for two windows (and {@value #ACTIVE_ROUNDS} rounds) with nothing left to push leave the map.
 *
 * <p><b>Failure:</b> while syncs of a key fail the node keeps deciding on its last view for at most
 * {@value #STALE_AFTER_INTERVALS} sync intervals after the last successful one; then its decisions fail with
 * {@link RedisStoreException}, so the rule's failure policy applies. Buckets are kept and pushed after recovery
 * while their window still matters.
 *
 * <p><b>Bound:</b> per window, the fleet admits at most {@code limit + (nodes − 1) × r × (interval + round trip)},
 * where {@code r × (interval + round trip)} is the most one node admits in that span (its admission rate r), and
 * never more than {@code nodes × limit}, as every node counts its own admissions against the limit. Derived in
 * docs/synced-mode.md; it holds while syncs succeed.
 *
 * <p>With server time (the default) a node decides on Redis's clock as estimated from the sync replies
 * ({@link ServerClock}).
 */
final class SyncedMode implements StoreMode {

    /** Decisions on a key fail once no sync of it has succeeded for more than this many intervals. */
    static final int STALE_AFTER_INTERVALS = 3;
    /** A key stays in the rounds while it had a decision in this many rounds. */
    static final int ACTIVE_ROUNDS = 3;

    private static final Log log = Log.get(SyncedMode.class);

    private final StoreSettings settings;
    private final KeyLayout layout;
    private final RedisGate gate;
    private final Function<Rule, RedisRule> compiler;
    /** The sync script: reloaded on NOSCRIPT; failures as RedisStoreException. */
    private final ScriptRunner transport;
    /** Decides releases (synced rules have no concurrency limit, but a release names any rule). */
    private final ExactMode exact;
    private final SluiceListener listener;
    private final String nodeId;
    private final ConcurrentHashMap<Target, SyncedKey> entries = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Cadence> cadences = new ConcurrentHashMap<>();
    private final ReentrantLock roundLock = new ReentrantLock();
    private final SyncThread thread;
    private volatile boolean closed;
    /** Redis's clock as estimated from the sync replies (server time only). */
    private final ServerClock serverClock = new ServerClock();

    SyncedMode(StoreSettings settings, KeyLayout layout, RedisGate gate, Function<Rule, RedisRule> compiler,
               ScriptRunner transport, ExactMode exact) {
        this.settings = settings;
        this.exact = exact;
        this.layout = layout;
        this.gate = gate;
        this.compiler = compiler;
        this.transport = transport;
        this.listener = settings.listener();
        byte[] bytes = new byte[16];
        new SecureRandom().nextBytes(bytes);
        this.nodeId = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        this.thread = new SyncThread(this::tick, this::nextDue, () -> round(false, false), settings.clock() != null,
                settings.awaitBound().toMillis());
    }

    // ------------------------------------------------------------------------------------------------ decisions

    /** Decides {@code request} for {@code key} under a synced rule. */
    @Override
    public CompletableFuture<Decision> decide(Rule rule, String key, Request request) {
        return decide(rule, key, request, false);
    }

    @Override
    public CompletableFuture<Boolean> release(Rule rule, String key, long lease) {
        return exact.release(rule, key, lease);
    }

    private CompletableFuture<Decision> decide(Rule rule, String key, Request request, boolean justSynced) {
        try {
            if (closed) {
                throw new IllegalStateException("the Redis store is closed");
            }
            Cadence cadence = cadence(rule.mode().syncInterval());
            thread.start();
            Target target = new Target(rule.name(), key);
            for (;;) {
                SyncedKey e = entries.computeIfAbsent(target, t -> new SyncedKey(t, cadence, compiler, layout, nodeId));
                CompletableFuture<Void> sync;
                synchronized (e) {
                    if (e.removed) {
                        continue;
                    }
                    e.use(rule, cadence);
                    long tick = tick();
                    e.lastDecisionRound = cadence.started;
                    e.lastDecisionTick = tick;
                    boolean current = justSynced || e.viewRound >= cadence.completed;
                    if (e.view != null && (current || e.failing)) {
                        if (e.failing && tick - e.viewTick > STALE_AFTER_INTERVALS * cadence.interval) {
                            throw stale(e, tick);
                        }
                        return CompletableFuture.completedFuture(e.decideLocally(now(), request));
                    }
                    sync = syncNow(e);
                }
                return sync.thenCompose(x -> decide(rule, key, request, true));
            }
        } catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    private RedisStoreException stale(SyncedKey e, long tick) {
        Duration since = Duration.ofNanos((tick - e.viewTick) * 1_000);
        return new RedisStoreException("no sync of rule '" + e.target.rule() + "' key '" + e.target.key()
                + "' with Redis has succeeded for " + since + ", more than " + STALE_AFTER_INTERVALS
                + " sync intervals; its admissions stay pending until Redis is back"
                + (e.lastError == null ? "" : "; the last sync failed: " + e.lastError.getMessage()), e.lastError);
    }

    /** Forgets what this node holds for {@code key} (RateLimiter.reset): pending admissions are not pushed. */
    @Override
    public void forget(Rule rule, String key) {
        SyncedKey e = entries.remove(new Target(rule.name(), key));
        if (e != null) {
            synchronized (e) {
                e.removed = true;
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ syncs

    /** Starts a sync of one key now (one round trip), or joins the one in flight. Called holding e's lock. */
    private CompletableFuture<Void> syncNow(SyncedKey e) {
        if (e.inFlight != null) {
            return e.inFlight.done;
        }
        SyncedKey.Pending p = e.prepare(nowArgument(), tick(), e.cadence.started);
        long start = System.nanoTime();
        CompletableFuture<List<Object>> reply = gate.call("sync", () -> {
            try {
                return transport.call(p.call);
            } catch (RuntimeException ex) {
                return CompletableFuture.failedFuture(ex);
            }
        });
        reply.whenComplete((r, error) -> {
            p.receivedNanos = System.nanoTime();
            settle(p, r, error, start);
            tellListener(1, p.pushed, start, error);
        });
        return p.done;
    }

    /** Runs one round now for every cadence, whether due or not (tests, and the final push of close). */
    void syncAll() {
        round(true, false);
    }

    /**
     * One round for the cadences due at the store's clock (all when {@code forced}): one pipelined flush of one
     * sync call per included key, awaited. Rounds never overlap.
     */
    private void round(boolean forced, boolean onlyPending) {
        roundLock.lock();
        try {
            long tick = tick();
            List<Cadence> due = new ArrayList<>();
            for (Cadence c : cadences.values()) {
                if (forced || c.nextDue <= tick) {
                    due.add(c);
                    c.started++;
                    while (c.nextDue <= tick) {
                        c.nextDue += c.interval;
                    }
                }
            }
            if (due.isEmpty()) {
                return;
            }
            String now = nowArgument();
            List<SyncedKey.Pending> pending = new ArrayList<>();
            for (SyncedKey e : entries.values()) {
                synchronized (e) {
                    if (e.removed || e.compiled == null || !due.contains(e.cadence) || e.inFlight != null) {
                        continue;
                    }
                    e.prune(now());
                    boolean unpushed = e.hasUnpushed();
                    boolean active = !onlyPending && e.cadence.started - e.lastDecisionRound <= ACTIVE_ROUNDS;
                    if (unpushed || active) {
                        pending.add(e.prepare(now, tick, e.cadence.started));
                    } else if (!e.hasBuckets() && tick - e.lastDecisionTick >= e.idleAfter()) {
                        e.removed = true;
                        entries.remove(e.target, e);
                    }
                }
            }
            if (!pending.isEmpty()) {
                send(pending);
            }
            for (Cadence c : due) {
                c.completed = c.started;
            }
        } finally {
            roundLock.unlock();
        }
    }

    /** Sends the round's calls through the gate as one "sync" call and settles each key. */
    private void send(List<SyncedKey.Pending> pending) {
        long start = System.nanoTime();
        List<ScriptCall> calls = new ArrayList<>(pending.size());
        for (SyncedKey.Pending p : pending) {
            calls.add(p.call);
        }
        List<CompletableFuture<List<Object>>> replies = new ArrayList<>();
        CompletableFuture<Void> all = gate.call("sync", () -> {
            try {
                replies.addAll(transport.pipelined(calls));
                for (int i = 0; i < replies.size(); i++) {
                    SyncedKey.Pending p = pending.get(i);
                    replies.get(i).whenComplete((r, error) -> p.receivedNanos = System.nanoTime());
                }
                return CompletableFuture.allOf(replies.toArray(new CompletableFuture<?>[0]));
            } catch (RuntimeException ex) {
                return CompletableFuture.failedFuture(ex);
            }
        });
        Throwable roundError = await(all);
        long pushed = 0;
        for (int i = 0; i < pending.size(); i++) {
            SyncedKey.Pending p = pending.get(i);
            pushed += p.pushed;
            CompletableFuture<List<Object>> reply = replies.size() == pending.size() ? replies.get(i) : null;
            if (reply != null && reply.isDone() && !reply.isCompletedExceptionally()) {
                settle(p, reply.join(), null, start);
            } else {
                // Refused by the gate, never sent, failed, or not answered within the backstop.
                Throwable error = reply != null && reply.isDone() ? reply.handle((x, t) -> t).join() : null;
                settle(p, null, error != null ? error : roundError, start);
            }
        }
        tellListener(pending.size(), pushed, start, roundError);
    }

    private void tellListener(int keys, long pushed, long startNanos, Throwable error) {
        if (listener == SluiceListener.NONE) {
            return;
        }
        try {
            listener.onSync(keys, pushed, System.nanoTime() - startNanos, unwrap(error));
        } catch (RuntimeException e) {
            log.warn("listener {} failed on a sync round; ignored", listener, e);
        }
    }

    private static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof java.util.concurrent.CompletionException || t instanceof ExecutionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** The failure of a future after waiting for it (the store's backstop bound), or null when it succeeded. */
    private Throwable await(CompletableFuture<?> f) {
        try {
            f.get(settings.awaitBound().toNanos(), TimeUnit.NANOSECONDS);
            return null;
        } catch (ExecutionException e) {
            return unwrap(e);
        } catch (TimeoutException e) {
            return new RedisStoreException("Redis did not answer a sync round within " + settings.awaitBound(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new RedisStoreException("interrupted while waiting for a sync round", e);
        }
    }

    /** Takes a call's reply into its key's view, or records the failure; then wakes whoever waits for it. */
    private void settle(SyncedKey.Pending p, List<Object> reply, Throwable error, long startNanos) {
        SyncedKey e = p.entry;
        Throwable failure = unwrap(error);
        synchronized (e) {
            if (e.inFlight == p) {
                e.inFlight = null;
            }
            if (failure == null) {
                try {
                    SyncCall.Reply parsed = SyncCall.parse(reply, p.algorithms);
                    e.accept(p, parsed);
                    if (settings.clock() == null) {
                        serverClock.sample(parsed.now(), startNanos, p.receivedNanos);
                    }
                } catch (RuntimeException ex) {
                    failure = new RedisStoreException("the Sluice sync script answered what this store cannot read: "
                            + ex.getMessage(), ex);
                }
            }
            if (failure != null && p.seq > e.acceptedSeq) {
                e.failing = true;
                e.lastError = failure;
                log.debug("sync of {} failed: {}", e.target, failure.toString());
            }
        }
        if (failure == null) {
            p.done.complete(null);
        } else {
            p.done.completeExceptionally(failure);
        }
    }

    // ------------------------------------------------------------------------------------------------ time

    /** The store's clock for intervals and staleness, in microseconds. */
    private long tick() {
        return settings.clock() != null ? settings.clock().nowMicros() : System.nanoTime() / 1_000;
    }

    /** The time decisions are made at: the client clock, or Redis server time as estimated from sync replies. */
    private long now() {
        if (settings.clock() != null) {
            long now = settings.clock().nowMicros();
            if (now < 0 || now > Arith.MAX_TIME) {
                throw new IllegalStateException("clock reading must be in [0, 2^53] microseconds since the epoch, was "
                        + now);
            }
            return now;
        }
        return serverClock.nowMicros();
    }

    /** The script's "now" argument: the client time ("now,slackMillis"), or "" for Redis server time. */
    private String nowArgument() {
        return settings.clock() == null ? "" : now() + "," + settings.clientTimeSlack().toMillis();
    }

    private Cadence cadence(Duration interval) {
        long micros = Arith.micros(interval);
        Cadence c = cadences.get(micros);
        return c != null ? c : cadences.computeIfAbsent(micros, m -> new Cadence(m, tick() + m));
    }

    /** When the next round of any cadence is due on the store's clock; {@link Long#MAX_VALUE} when none. */
    private long nextDue() {
        long next = Long.MAX_VALUE;
        for (Cadence c : cadences.values()) {
            next = Math.min(next, c.nextDue);
        }
        return next;
    }

    /**
     * Stops the round thread, then pushes what is still pending in one last round (best effort: if Redis cannot
     * take it, those admissions are lost with this node).
     */
    @Override
    public void close() {
        closed = true;
        thread.close();
        if (!entries.isEmpty()) {
            round(true, true);
        }
    }

    /** Keys this node holds synced state for (tests and metrics). */
    int keys() {
        return entries.size();
    }

    // ------------------------------------------------------------------------------------------------ state

    /** A (rule, key) pair. */
    record Target(String rule, String key) {}

    /** The rounds of one sync interval. Fields other than {@code interval} are guarded by the round lock. */
    static final class Cadence {
        final long interval;
        volatile long nextDue;
        /** Rounds started; read by decisions without the lock, hence volatile. */
        volatile long started;
        /** Rounds completed. */
        volatile long completed;

        Cadence(long interval, long nextDue) {
            this.interval = interval;
            this.nextDue = nextDue;
        }
    }
}
