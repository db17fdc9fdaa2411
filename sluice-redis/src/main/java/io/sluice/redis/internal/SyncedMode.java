package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.internal.CompiledRule;
import io.sluice.internal.RuleEvaluator;
import io.sluice.internal.algorithm.Arith;
import io.sluice.internal.algorithm.SyncableAlgorithm;
import io.sluice.redis.RedisStoreException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The synced mode ({@link io.sluice.Mode#synced}) of the Redis store: each (rule, key) is decided in process
 * against the shared states this node last pulled from Redis plus the permits it admitted since, and once per sync
 * interval one pipelined round pushes every hot key's admissions and pulls fresh states (script
 * {@code sync.lua}). docs/synced-mode.md explains the design and derives the bound.
 *
 * <p><b>Per key</b> the node keeps the view (each limit's state as the last successful sync returned it) and
 * buckets: per limit, the permits it admitted in one window, filed under the time it began admitting there. A
 * bucket's total only grows; the sync script remembers, per node and key, the largest total it absorbed from each
 * bucket and absorbs only the difference, so a call that runs twice or is retried after a timeout never counts a
 * permit twice, and a failed push is simply carried by the next call. A bucket is dropped once its window is over
 * ({@link SyncableAlgorithm#absorbableUntil}): its permits could no longer change a decision.
 *
 * <p><b>Decisions</b> run the rule's transitions ({@link RuleEvaluator}) on the view with the permits not yet in it
 * absorbed, so a node admits {@code p} when what it admitted since the sync plus {@code p} fits in what the sync
 * left (all or nothing across the rule's limits); a window that ended since the sync starts afresh, counting the
 * node's own admissions in it. The decision says {@link Decision.Source#SYNC}. The first request on a key this node
 * has not synced in the last round (a new key, or one idle for {@value #ACTIVE_ROUNDS} rounds) syncs it first, in
 * one round trip, so a node never starts blind.
 *
 * <p><b>Rounds</b> run on one daemon thread per store, started by the first synced decision and stopped by
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
 * <p>With server time (the default) a node decides on Redis's clock as estimated from the sync replies: the
 * server's time in the reply minus the midpoint of the call on the local monotonic clock.
 */
final class SyncedMode implements StoreMode {

    /** Decisions on a key fail once no sync of it has succeeded for more than this many intervals. */
    static final int STALE_AFTER_INTERVALS = 3;
    /** A key stays in the rounds while it had a decision in this many rounds. */
    static final int ACTIVE_ROUNDS = 3;

    private static final Log log = Log.get(SyncedMode.class);
    /** How often the round thread looks at a client clock, which may be moved by hand (tests) or replayed. */
    private static final long CLIENT_CLOCK_POLL_MICROS = 5_000;
    private static final long CEILING = Limit.MAX_COUNT + 1;
    /** How many recent replies the server clock estimate chooses from (NTP's filter keeps eight). */
    private static final int OFFSET_SAMPLES = 16;

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
    private final ConcurrentHashMap<Target, Entry> entries = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Cadence> cadences = new ConcurrentHashMap<>();
    private final ReentrantLock roundLock = new ReentrantLock();
    private final Object threadLock = new Object();
    private volatile Thread thread; // written under threadLock
    private volatile boolean closed;
    /** Redis server time minus the local monotonic clock, in microseconds (server time only). */
    private volatile long serverOffsetMicros;
    /** Recent clock samples (round trip, offset), guarded by itself: the offset is the fastest one's. */
    private final long[][] offsetSamples = new long[OFFSET_SAMPLES][];
    private int nextSample;

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
            startThread();
            Target target = new Target(rule.name(), key);
            for (;;) {
                Entry e = entries.computeIfAbsent(target, t -> new Entry(t, cadence));
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

    private RedisStoreException stale(Entry e, long tick) {
        Duration since = Duration.ofNanos((tick - e.viewTick) * 1_000);
        return new RedisStoreException("no sync of rule '" + e.target.rule() + "' key '" + e.target.key()
                + "' with Redis has succeeded for " + since + ", more than " + STALE_AFTER_INTERVALS
                + " sync intervals; its admissions stay pending until Redis is back"
                + (e.lastError == null ? "" : "; the last sync failed: " + e.lastError.getMessage()), e.lastError);
    }

    /** Forgets what this node holds for {@code key} (RateLimiter.reset): pending admissions are not pushed. */
    @Override
    public void forget(Rule rule, String key) {
        Entry e = entries.remove(new Target(rule.name(), key));
        if (e != null) {
            synchronized (e) {
                e.removed = true;
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ syncs

    /** Starts a sync of one key now (one round trip), or joins the one in flight. Called holding e's lock. */
    private CompletableFuture<Void> syncNow(Entry e) {
        if (e.inFlight != null) {
            return e.inFlight.done;
        }
        Pending p = e.prepare(nowArgument(), tick(), e.cadence.started);
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
            List<Pending> pending = new ArrayList<>();
            for (Entry e : entries.values()) {
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
    private void send(List<Pending> pending) {
        long start = System.nanoTime();
        List<ScriptCall> calls = new ArrayList<>(pending.size());
        for (Pending p : pending) {
            calls.add(p.call);
        }
        List<CompletableFuture<List<Object>>> replies = new ArrayList<>();
        CompletableFuture<Void> all = gate.call("sync", () -> {
            try {
                replies.addAll(transport.pipelined(calls));
                for (int i = 0; i < replies.size(); i++) {
                    Pending p = pending.get(i);
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
            Pending p = pending.get(i);
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
    private void settle(Pending p, List<Object> reply, Throwable error, long startNanos) {
        Entry e = p.entry;
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
                        sampleServerClock(parsed.now(), startNanos, p.receivedNanos);
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

    /**
     * Redis read its clock ({@code serverNow}) somewhere within the round trip, so the midpoint is the estimate and
     * half the round trip its error; of the last {@value #OFFSET_SAMPLES} replies the one with the shortest round
     * trip wins, so one slow reply (a pause between its arrival and this code) does not move the clock.
     */
    private void sampleServerClock(long serverNow, long sentNanos, long receivedNanos) {
        long rtt = Math.max(0, receivedNanos - sentNanos);
        long offset = serverNow - (sentNanos / 2_000 + receivedNanos / 2_000);
        synchronized (offsetSamples) {
            offsetSamples[nextSample] = new long[] {rtt, offset};
            nextSample = (nextSample + 1) % OFFSET_SAMPLES;
            long[] best = null;
            for (long[] sample : offsetSamples) {
                if (sample != null && (best == null || sample[0] < best[0])) {
                    best = sample;
                }
            }
            serverOffsetMicros = best[1];
        }
    }

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
        return Math.max(0, Math.min(Arith.MAX_TIME, System.nanoTime() / 1_000 + serverOffsetMicros));
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

    // ------------------------------------------------------------------------------------------------ the thread

    private void startThread() {
        if (thread != null) {
            return;
        }
        synchronized (threadLock) {
            if (thread != null || closed) {
                return;
            }
            thread = new Thread(this::loop, "sluice-sync");
            thread.setDaemon(true);
            thread.start();
        }
    }

    private void loop() {
        while (!closed) {
            try {
                long tick = tick();
                long next = Long.MAX_VALUE;
                for (Cadence c : cadences.values()) {
                    next = Math.min(next, c.nextDue);
                }
                if (next <= tick) {
                    round(false, false);
                    continue;
                }
                long wait = Math.min(next - tick, 1_000_000);
                if (settings.clock() != null) {
                    wait = Math.min(wait, CLIENT_CLOCK_POLL_MICROS);
                }
                LockSupport.parkNanos(wait * 1_000);
            } catch (RuntimeException | Error e) {
                log.warn("sync round failed unexpectedly; the next one runs as usual", e);
                LockSupport.parkNanos(10_000_000);
            }
        }
    }

    /**
     * Stops the round thread, then pushes what is still pending in one last round (best effort: if Redis cannot
     * take it, those admissions are lost with this node).
     */
    @Override
    public void close() {
        Thread t;
        synchronized (threadLock) {
            closed = true;
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(settings.awaitBound().toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
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

    /** Permits this node admitted under one limit in one window, filed under when it began admitting there. */
    static final class Bucket {
        final long windowStart;
        final long admittedAt;
        /** Everything admitted here so far, saturated at the count ceiling. */
        long total;
        /** How much of {@link #total} the view already holds. */
        long inView;

        Bucket(long windowStart, long admittedAt) {
            this.windowStart = windowStart;
            this.admittedAt = admittedAt;
        }
    }

    /** One sync call in flight for a key: what it carries, for when its reply comes back. */
    static final class Pending {
        final Entry entry;
        final long seq;
        final long tick;
        final long round;
        final RedisRule compiled;
        final List<SyncableAlgorithm<Object>> algorithms;
        final Bucket[][] buckets;
        final long[][] totals;
        final ScriptCall call;
        final long pushed;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        /** When the reply arrived, on System.nanoTime. */
        volatile long receivedNanos;

        Pending(Entry entry, long seq, long tick, long round, RedisRule compiled,
                List<SyncableAlgorithm<Object>> algorithms, Bucket[][] buckets, long[][] totals, ScriptCall call,
                long pushed) {
            this.entry = entry;
            this.seq = seq;
            this.tick = tick;
            this.round = round;
            this.compiled = compiled;
            this.algorithms = algorithms;
            this.buckets = buckets;
            this.totals = totals;
            this.call = call;
            this.pushed = pushed;
        }
    }

    /** What this node holds for one key. Guarded by its own monitor. */
    final class Entry {
        final Target target;
        Cadence cadence;
        Rule rule;
        RedisRule compiled;
        CompiledRule evaluator;
        List<SyncableAlgorithm<Object>> algorithms;
        String[] stateKeys;
        String markerKey;
        List<Bucket>[] buckets;
        /** Each limit's state as the last accepted sync returned it; null before the first. */
        Object[] view;
        long viewTick;
        long viewRound = -1;
        long lastDecisionRound;
        long lastDecisionTick;
        boolean failing;
        Throwable lastError;
        long sentSeq;
        long acceptedSeq;
        Pending inFlight;
        boolean removed;

        Entry(Target target, Cadence cadence) {
            this.target = target;
            this.cadence = cadence;
        }

        /**
         * Adopts {@code rule} when it is not the one this entry was built for. A changed rule keeps the buckets of
         * each limit that keeps its name and algorithm and drops the view, so the next decision syncs first (the
         * script migrates the stored states as for any call).
         */
        @SuppressWarnings("unchecked")
        void use(Rule next, Cadence nextCadence) {
            if (rule == next || (rule != null && rule.equals(next))) {
                return;
            }
            RedisRule nextCompiled = compiler.apply(next);
            List<SyncableAlgorithm<Object>> nextAlgorithms = new ArrayList<>();
            CompiledRule nextEvaluator = new CompiledRule(next);
            for (int i = 0; i < nextEvaluator.size(); i++) {
                if (!(nextEvaluator.algorithm(i) instanceof SyncableAlgorithm<?> s)) {
                    throw new IllegalArgumentException("mode synced of rule '" + next.name() + "' supports "
                            + io.sluice.Mode.SYNCABLE.stream().sorted().toList() + "; limit '"
                            + next.limits().get(i).name() + "' is " + next.limits().get(i).algorithm());
                }
                nextAlgorithms.add((SyncableAlgorithm<Object>) s);
            }
            List<Bucket>[] nextBuckets = new List[next.limits().size()];
            for (int i = 0; i < nextBuckets.length; i++) {
                nextBuckets[i] = new ArrayList<>(2);
                Limit limit = next.limits().get(i);
                for (int j = 0; rule != null && j < rule.limits().size(); j++) {
                    Limit old = rule.limits().get(j);
                    if (old.name().equals(limit.name()) && old.algorithm().equals(limit.algorithm())) {
                        nextBuckets[i] = buckets[j];
                    }
                }
            }
            rule = next;
            compiled = nextCompiled;
            evaluator = nextEvaluator;
            algorithms = nextAlgorithms;
            buckets = nextBuckets;
            cadence = nextCadence;
            stateKeys = compiled.stateKeys(layout, target.key());
            markerKey = layout.requestKey(stateKeys[0], "s." + nodeId + "." + digest(layout.base(next.name(),
                    target.key())));
            view = null;
        }

        /** Decides on the view plus this node's admissions not yet in it, and files what the decision charged. */
        Decision decideLocally(long now, Request request) {
            prune(now);
            Object[] states = new Object[buckets.length];
            for (int i = 0; i < states.length; i++) {
                states[i] = local(i, now);
            }
            RuleEvaluator.Outcome out = RuleEvaluator.evaluate(evaluator, states, now, request);
            Decision d = out.decision();
            if (out.states() != null) {
                long charged = d.allowed() ? d.granted()
                        : request.op() == Request.Op.TRY_AT_MOST ? 1 : request.permits();
                for (int i = 0; i < states.length; i++) {
                    Object next = out.states()[i];
                    if (next != states[i] && next != null) {
                        file(i, algorithms.get(i).windowStart(next), now, charged);
                    }
                }
            }
            return d.withSource(Decision.Source.SYNC);
        }

        /** Limit i's state as this node sees it at now: the view with the permits it does not hold absorbed. */
        private Object local(int i, long now) {
            SyncableAlgorithm<Object> a = algorithms.get(i);
            Object s = view == null ? null : view[i];
            for (Bucket b : buckets[i]) {
                if (s != null && now >= a.expiresAt(s)) {
                    s = null; // as the script drops an expired state before absorbing
                }
                if (b.total > b.inView) {
                    s = a.absorb(s, now, b.total - b.inView, b.admittedAt);
                }
            }
            return s != null && now >= a.expiresAt(s) ? null : s;
        }

        /** Adds permits to limit i's bucket for the window starting at windowStart. */
        private void file(int i, long windowStart, long now, long permits) {
            List<Bucket> list = buckets[i];
            Bucket target = null;
            for (int b = list.size() - 1; b >= 0 && target == null; b--) {
                if (list.get(b).windowStart == windowStart) {
                    target = list.get(b);
                }
            }
            long admittedAt = Math.max(now, windowStart);
            for (int b = 0; b < list.size() && target == null; b++) {
                // Absorbing depends only on (admittedAt, permits): one bucket per instant is the same thing.
                if (list.get(b).admittedAt == admittedAt) {
                    target = list.get(b);
                }
            }
            if (target == null) {
                target = new Bucket(windowStart, admittedAt);
                list.add(target);
            }
            target.total = Math.min(CEILING, target.total + permits);
        }

        /** Drops buckets whose window is over: the script would drop their permits too. */
        void prune(long now) {
            for (int i = 0; i < buckets.length; i++) {
                SyncableAlgorithm<Object> a = algorithms.get(i);
                buckets[i].removeIf(b -> now >= a.absorbableUntil(b.admittedAt));
            }
        }

        boolean hasUnpushed() {
            for (List<Bucket> list : buckets) {
                for (Bucket b : list) {
                    if (b.total > b.inView) {
                        return true;
                    }
                }
            }
            return false;
        }

        boolean hasBuckets() {
            for (List<Bucket> list : buckets) {
                if (!list.isEmpty()) {
                    return true;
                }
            }
            return false;
        }

        /** How long a key must go without decisions before it leaves the map: two of its longest windows. */
        long idleAfter() {
            long longest = 0;
            for (Limit l : rule.limits()) {
                longest = Math.max(longest, Arith.micros(l instanceof io.sluice.FixedWindow f ? f.window()
                        : ((io.sluice.SlidingWindow) l).window()));
            }
            return Math.max(2 * longest, (ACTIVE_ROUNDS + 1) * cadence.interval);
        }

        /** A call carrying every bucket's total; the entry is in flight until it settles. */
        Pending prepare(String now, long tick, long round) {
            int n = buckets.length;
            Bucket[][] refs = new Bucket[n][];
            long[][] admittedAt = new long[n][];
            long[][] totals = new long[n][];
            long pushed = 0;
            for (int i = 0; i < n; i++) {
                refs[i] = buckets[i].toArray(new Bucket[0]);
                admittedAt[i] = new long[refs[i].length];
                totals[i] = new long[refs[i].length];
                for (int b = 0; b < refs[i].length; b++) {
                    admittedAt[i][b] = refs[i][b].admittedAt;
                    totals[i][b] = refs[i][b].total;
                    pushed += refs[i][b].total - refs[i][b].inView;
                }
            }
            ScriptCall call = SyncCall.build(compiled, stateKeys, markerKey, now, admittedAt, totals);
            Pending p = new Pending(this, ++sentSeq, tick, round, compiled, algorithms, refs, totals, call, pushed);
            inFlight = p;
            return p;
        }

        /** Takes a successful reply: the view, and how much of each bucket it holds. Stale replies are ignored. */
        void accept(Pending p, SyncCall.Reply reply) {
            if (p.seq <= acceptedSeq || p.compiled != compiled) {
                return;
            }
            view = reply.states();
            viewTick = p.tick;
            viewRound = p.round;
            acceptedSeq = p.seq;
            failing = false;
            lastError = null;
            for (int i = 0; i < p.buckets.length; i++) {
                for (int b = 0; b < p.buckets[i].length; b++) {
                    Bucket bucket = p.buckets[i][b];
                    bucket.inView = Math.max(bucket.inView, p.totals[i][b]);
                }
            }
        }
    }

    /** 96 bits of SHA-256 of a target's key base, base64url: tells this node's markers of one tag apart. */
    private static String digest(String base) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(base.getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(h, 12));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }
}
