package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.internal.CompiledRule;
import io.sluice.internal.RuleEvaluator;
import io.sluice.internal.algorithm.Arith;
import io.sluice.internal.algorithm.SyncableAlgorithm;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * What one node of synced mode holds for one (rule, key): the view (each limit's state as the last accepted sync
 * returned it) and the buckets of permits admitted since, per limit and window; it decides requests in process on
 * them ({@link #decideLocally}) and prepares and accepts the key's sync calls. {@link SyncedMode} explains the
 * design; this class is its per-key state machine. Guarded by its own monitor: every method is called holding it.
 */
final class SyncedKey {

    private static final long CEILING = Limit.MAX_COUNT + 1;

    final SyncedMode.Target target;
    private final Function<Rule, RedisRule> compiler;
    private final KeyLayout layout;
    private final String nodeId;
    SyncedMode.Cadence cadence;
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

    /**
     * @param compiler compiles a rule for the scripts (the store's cache)
     * @param nodeId   this node's id in the sync markers
     */
    SyncedKey(SyncedMode.Target target, SyncedMode.Cadence cadence, Function<Rule, RedisRule> compiler,
              KeyLayout layout, String nodeId) {
        this.target = target;
        this.cadence = cadence;
        this.compiler = compiler;
        this.layout = layout;
        this.nodeId = nodeId;
    }

    /**
     * Adopts {@code rule} when it is not the one this entry was built for. A changed rule keeps the buckets of
     * each limit that keeps its name and algorithm and drops the view, so the next decision syncs first (the
     * script migrates the stored states as for any call).
     */
    @SuppressWarnings("unchecked")
    void use(Rule next, SyncedMode.Cadence nextCadence) {
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
        return Math.max(2 * longest, (SyncedMode.ACTIVE_ROUNDS + 1) * cadence.interval);
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
        final SyncedKey entry;
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

        Pending(SyncedKey entry, long seq, long tick, long round, RedisRule compiled,
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
