package io.sluice.internal.memory;

import io.sluice.Clock;
import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Settlement;
import io.sluice.Store;
import io.sluice.internal.CompiledRule;
import io.sluice.internal.RuleEvaluator;
import io.sluice.internal.algorithm.Algorithm;
import io.sluice.internal.algorithm.Arith;
import io.sluice.internal.algorithm.Step;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The in-memory store: each key's state is one immutable {@link Entry} in an {@link AtomicReference}, replaced
 * by compare-and-set after a pure evaluation, so there is no lock at all and decisions on one key are
 * linearizable. See {@link io.sluice.MemoryStoreBuilder} for the memory and eviction rules.
 *
 * <p>No request pays for a whole-table pass: the sweep of expired keys and the eviction past {@code maxKeys}
 * both move one {@link EvictionCursor} a few keys at a time (see {@link #sweepStep} and {@link #evict}).
 *
 * <p>Removal races are closed with a tombstone: a sweep first swaps a key's entry to {@link #DEAD} and only
 * then removes the key, and a decision that meets {@code DEAD} looks the key up again. So no decision is ever
 * committed into a holder that has left the map.
 *
 * <h2>The hot path: what a decision costs, and what was cut</h2>
 *
 * A {@code tryAcquire} on a rule of one limit (the common case) allocates what an immutable-state CAS design
 * must: the limit's new state, the {@link Entry} that ties it to its rule version, and the {@link Decision}
 * (token_bucket 146 B, gcra 128 B per admitted call on the local benchmark, from 270 B and 208 B); a rejection
 * writes nothing and so allocates no entry (the algorithm's step may still allocate what it does not commit).
 * Cut, each with why it is safe:
 * <ul>
 *   <li><b>Arrays and the evaluator's outcome</b> ({@link #decideOne}): a rule of one limit keeps its state in
 *       the entry itself, and the step goes straight to the decision, without the states array, the "live"
 *       copy, the {@code Outcome} or the one-element array of next states. It is {@link #decideSeveral} for
 *       n = 1 line by line, with the same {@link RuleEvaluator} helpers; an entry written under another rule
 *       version takes the general path, which migrates it. SingleLimitPathPropertiesTest holds it to the
 *       general path on random operation sequences of every algorithm (rule changes, resets, releases and a
 *       clock stepping back included); the contract suite and RedisMemoryEquivalenceIT run through it too.
 *   <li><b>A second {@code expiresAt} per decision</b>: whether the stored state has expired is read from the
 *       entry, whose {@code expiresAt} is that state's own expiry for a rule of one limit (what
 *       {@link CompiledRule#live} computes again).
 *   <li><b>A shared counter written by every decision</b>: the sweep used to be paced by one
 *       {@code AtomicLong} incremented per decision, a cache line that two threads on distinct keys fought
 *       over. Each thread now counts in its own slot and adds to the shared count every 64 decisions (see
 *       {@link #maybeSweep}); the key count is a {@link LongAdder}. A lap of the sweep starts at most
 *       every {@code max(4096, keys)} decisions, to within 64.
 *   <li><b>A map lookup and a rule comparison per decision</b>: the namespace of the last rule decided is kept
 *       in a field; it is used only when its compiled rule is the very {@link Rule} object passed in, which is
 *       exactly when the lookup and {@link #compiled} would have returned it.
 * </ul>
 * The algorithms' own arithmetic was trimmed too (token_bucket: one state allocated instead of two, fewer
 * 64-bit divisions); see their derivation comments.
 */
public final class MemoryStore implements Store {

    /**
     * The state of all limits of one rule on one key, and the rule version it was written under. A rule of one
     * limit keeps its state in {@code one} ({@code many} is null), so the hot path allocates no array; a rule of
     * several keeps them in {@code many}. {@code expiresAt} is {@link CompiledRule#expiresAt} of the states:
     * for a rule of one limit, that state's own expiry.
     */
    record Entry(CompiledRule rule, Object[] many, Object one, long expiresAt) {

        static Entry of(CompiledRule rule, Object[] states, long expiresAt) {
            return rule.slots() == 1 ? new Entry(rule, null, states[0], expiresAt) : new Entry(rule, states, null,
                    expiresAt);
        }

        /** The states, one per limit of {@link #rule}; a fresh array for a rule of one limit. */
        Object[] states() {
            return many != null ? many : new Object[] {one};
        }
    }

    private static final Entry DEAD = new Entry(null, new Object[0], null, Long.MIN_VALUE);
    /**
     * The states array of a lock entry: {@link #decideTogether} swaps each target's entry for a fresh entry
     * holding it while it decides them, so that no other decision sees one target charged and not another.
     * Never expires, so neither sweep nor eviction drops it.
     */
    private static final Object[] LOCKED = new Object[0];
    private static final int MIN_SWEEP_INTERVAL = 4096;
    /** Keys looked at per eviction; see {@link #evict}. */
    static final int EVICTION_SAMPLE = 8;
    private static final int MAX_EVICTION_ROUNDS = 8;

    /*
     * Pacing the sweep without a shared counter per decision. Each thread counts its decisions in its own slot
     * (by thread id; slots 128 bytes apart, so two threads on distinct keys write distinct cache lines) and
     * adds them to decisionsSinceSweep by batches of SWEEP_BATCH. The increment is a plain one: two threads
     * that share a slot may lose a count now and then, which only delays a sweep by as much; a lone thread's
     * count is exact, so a sweep still comes within SWEEP_BATCH decisions of max(MIN_SWEEP_INTERVAL, keys).
     */
    private static final int COUNT_SLOTS = 16;
    private static final int SLOT_STRIDE = 16;
    private static final int SWEEP_BATCH = 64;

    private final Clock clock;
    private final long maxKeys;
    private final boolean singleLimitPath;
    private final ConcurrentHashMap<String, Namespace> namespaces = new ConcurrentHashMap<>();
    /** Keys held: a LongAdder, as threads that create and sweep keys on their own shares would contend on one cell. */
    private final LongAdder keys = new LongAdder();
    private final AtomicLong decisionsSinceSweep = new AtomicLong();
    /**
     * Held by the thread that sweeps or evicts: it alone moves {@link #cursor}. A sweep tries it and skips when
     * it is taken; an eviction waits for it, so that every insertion past {@code maxKeys} evicts (a flood from
     * many threads cannot outrun one evicting thread), and the wait is for a few samples, never a whole pass.
     */
    private final ReentrantLock sweeping = new ReentrantLock();
    private final EvictionCursor cursor = new EvictionCursor();
    /** Decisions per thread slot (see above); slot i is at index (i + 1) · SLOT_STRIDE, clear of the header. */
    private final long[] decisionsBySlot = new long[(COUNT_SLOTS + 2) * SLOT_STRIDE];
    /** The namespace of the last rule decided, so a limiter's rule finds it without a map lookup. */
    private volatile Namespace lastNamespace;
    private static final VarHandle LAST_NAMESPACE;

    static {
        try {
            LAST_NAMESPACE = MethodHandles.lookup().findVarHandle(MemoryStore.class, "lastNamespace", Namespace.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public MemoryStore(Clock clock, long maxKeys) {
        this(clock, maxKeys, true);
    }

    /** Charges and settlements of estimated costs, and their bounded ticket table (as many tickets as keys). */
    private final MemorySettling settling;

    /**
     * @param singleLimitPath whether rules of one limit take {@link #decideOne}; false runs every rule through
     *                        {@link #decideSeveral}, the reference the tests hold the single-limit path to
     */
    MemoryStore(Clock clock, long maxKeys, boolean singleLimitPath) {
        this.clock = clock;
        this.maxKeys = maxKeys;
        this.singleLimitPath = singleLimitPath;
        this.settling = new MemorySettling(this, maxKeys);
    }

    /** The keys of one rule name and the latest compiled version of that rule. */
    static final class Namespace {
        final ConcurrentHashMap<String, Holder> keys = new ConcurrentHashMap<>();
        volatile CompiledRule compiled;

        Namespace(CompiledRule compiled) {
            this.compiled = compiled;
        }
    }

    @Override
    public Decision decide(Rule rule, String key, Request request) {
        Namespace ns = lastNamespace;
        CompiledRule compiled;
        // The rule object a limiter passes on every call is the one compiled: no map lookup, no equals.
        if (ns == null || (compiled = ns.compiled).rule() != rule) {
            ns = namespace(rule);
            compiled = compiled(ns, rule);
            // A release store, not a volatile one: limiters of several rules taking turns on one store rewrite
            // the field on every call, and a full fence each time would cost more than the lookup saves.
            LAST_NAMESPACE.setRelease(this, ns);
        }
        maybeSweep();
        return compiled.slots() == 1 && singleLimitPath && !compiled.hasShadow() ? decideOne(ns, compiled, key, request)
                : decideSeveral(ns, compiled, key, request);
    }

    /**
     * {@link #decideSeveral} for a rule of one limit, the common case, with nothing allocated but what the
     * decision needs: the limit's state sits in the entry itself (no array), its expiry is the entry's (no
     * second {@code expiresAt}), and the step goes straight to the decision (no {@link RuleEvaluator.Outcome}).
     * Each line is the general path's for n = 1: {@link CompiledRule#live} reads "expired" from the entry,
     * {@link RuleEvaluator#evaluate} is {@code permitsOfOne}, {@code step}, {@code decisionOfOne} and
     * {@code nextOfOne}, and {@link #keepExpired} has nothing to keep (it acts only on a state the request left
     * alone, which is not written). An entry of another rule version goes the general way, which migrates it.
     */
    private Decision decideOne(Namespace ns, CompiledRule compiled, String key, Request request) {
        Algorithm<Object> algorithm = compiled.algorithm(0);
        for (;;) {
            AtomicReference<Entry> holder = ns.keys.get(key);
            Entry current = holder == null ? null : holder.get();
            if (busy(current)) {
                continue;
            }
            if (current != null && current.rule() != compiled) {
                return decideSeveral(ns, compiled, key, request);
            }
            long now = now();
            Object state = current == null || now >= current.expiresAt() ? null : current.one();
            long permits = RuleEvaluator.permitsOfOne(algorithm, state, now, request);
            Step<Object> step = algorithm.step(state, now, permits, RuleEvaluator.maxWaitOf(request));
            Object next = request.op() == Request.Op.PEEK ? state : RuleEvaluator.nextOfOne(step);
            if (next == state) {
                return RuleEvaluator.decisionOfOne(algorithm, step, request, permits);
            }
            if (next != null && now >= algorithm.expiresAt(next)) {
                // Written already expired: no state, as keepExpired explains.
                next = null;
                if (current == null) {
                    return RuleEvaluator.decisionOfOne(algorithm, step, request, permits);
                }
            }
            // The entry right after the step's state, before the decision: the two share cache lines, and a
            // later decision on the key reads both.
            Entry entry = new Entry(compiled, null, next, next == null ? Long.MIN_VALUE : algorithm.expiresAt(next));
            Decision decision = RuleEvaluator.decisionOfOne(algorithm, step, request, permits);
            if (commit(ns, key, holder, current, entry)) {
                return decision;
            }
        }
    }

    /** Any rule: every limit's state in an array, evaluated all or nothing by {@link RuleEvaluator}. */
    private Decision decideSeveral(Namespace ns, CompiledRule compiled, String key, Request request) {
        for (;;) {
            AtomicReference<Entry> holder = ns.keys.get(key);
            Entry current = holder == null ? null : holder.get();
            if (busy(current)) {
                continue;
            }
            long now = now();
            Object[] states = statesFor(current, compiled, now);
            Object[] live = compiled.live(states, now);
            RuleEvaluator.Outcome outcome = RuleEvaluator.evaluate(compiled, live, now, request);
            if (outcome.states() == null && (current == null || current.rule() == compiled)) {
                return outcome.decision();
            }
            Object[] next = outcome.states() == null ? states : keepExpired(compiled, outcome.states(), live, states, now);
            if (commit(ns, key, holder, current, Entry.of(compiled, next, compiled.expiresAt(next)))) {
                return outcome.decision();
            }
        }
    }

    /**
     * Writes {@code entry} for {@code key} if its holder still holds {@code current} ({@code holder == null}: if
     * the key is still absent); false when another decision came first, to decide again.
     */
    private boolean commit(Namespace ns, String key, AtomicReference<Entry> holder, Entry current, Entry entry) {
        if (holder == null) {
            // A key's holder is created only when there is state to keep: peeks and rejections of
            // unknown keys leave nothing behind.
            if (ns.keys.putIfAbsent(key, new Holder(key, entry)) == null) {
                keys.increment();
                if (keys.sum() > maxKeys) {
                    evict();
                }
                return true;
            }
            return false;
        }
        return holder.compareAndSet(current, entry);
    }

    /**
     * Several targets all or nothing: each target's holder is locked (its entry swapped for a lock entry, in
     * one order of (rule name, key) for every caller, so two such calls cannot deadlock), all their limits are
     * evaluated as one rule ({@link CompiledRule#concat}), and each holder gets its new entry, or its old one
     * back. A decision that meets a lock entry spins until it is gone: the lock is held for one pure
     * evaluation, never across a wait.
     */
    @Override
    public Decision decideTogether(List<Target> targets, Request request) {
        Target.check(targets, request);
        if (targets.size() == 1) {
            return decide(targets.get(0).rule(), targets.get(0).key(), request);
        }
        maybeSweep();
        int n = targets.size();
        Namespace[] spaces = new Namespace[n];
        CompiledRule[] rules = new CompiledRule[n];
        for (int i = 0; i < n; i++) {
            spaces[i] = namespace(targets.get(i).rule());
            rules[i] = compiled(spaces[i], targets.get(i).rule());
        }
        Integer[] order = new Integer[n];
        Arrays.setAll(order, i -> i);
        Arrays.sort(order, Comparator.comparing((Integer i) -> targets.get(i).rule().name())
                .thenComparing(i -> targets.get(i).key()));
        Entry lock = new Entry(null, LOCKED, null, Long.MAX_VALUE);
        Holder[] holders = new Holder[n];
        Entry[] before = new Entry[n];
        Entry[] after = null;
        boolean inserted = false;
        try {
            for (int i : order) {
                inserted |= lock(spaces[i], targets.get(i).key(), lock, holders, before, i);
            }
            long now = now();
            Object[][] states = new Object[n][];
            Object[][] live = new Object[n][];
            List<Object> flat = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                states[i] = statesFor(before[i], rules[i], now);
                live[i] = rules[i].live(states[i], now);
                flat.addAll(Arrays.asList(live[i]));
            }
            RuleEvaluator.Outcome outcome = RuleEvaluator.evaluate(CompiledRule.concat(Arrays.asList(rules)),
                    flat.toArray(), now, request);
            Entry[] next = new Entry[n];
            int at = 0;
            for (int i = 0; i < n; i++) {
                int size = rules[i].size();
                Object[] mine = outcome.states() == null ? null
                        : Arrays.copyOfRange(outcome.states(), at, at + size);
                at += size;
                Object[] kept = mine == null ? states[i] : keepExpired(rules[i], mine, live[i], states[i], now);
                next[i] = sameStates(kept, states[i]) && (before[i] == null || before[i].rule() == rules[i])
                        ? before[i] : Entry.of(rules[i], kept, rules[i].expiresAt(kept));
            }
            after = next;
            return outcome.decision();
        } finally {
            unlock(spaces, holders, after != null ? after : before);
            if (inserted && keys.sum() > maxKeys) {
                evict();
            }
        }
    }

    /**
     * Swaps the entry of {@code key} for {@code lock}, creating its holder if the key is absent; records the
     * holder and the entry it held at {@code i}. True when it created the holder.
     */
    private boolean lock(Namespace ns, String key, Entry lock, Holder[] holders, Entry[] before, int i) {
        for (;;) {
            Holder holder = ns.keys.get(key);
            if (holder == null) {
                Holder fresh = new Holder(key, lock);
                if (ns.keys.putIfAbsent(key, fresh) == null) {
                    keys.increment();
                    holders[i] = fresh;
                    return true;
                }
                continue;
            }
            Entry current = holder.get();
            if (busy(current)) {
                continue;
            }
            if (holder.compareAndSet(current, lock)) {
                holders[i] = holder;
                before[i] = current;
                return false;
            }
        }
    }

    /** Gives each locked holder its entry; a holder created for the lock that has nothing to keep leaves. */
    private void unlock(Namespace[] spaces, Holder[] holders, Entry[] entries) {
        for (int i = 0; i < holders.length; i++) {
            Holder holder = holders[i];
            if (holder == null) {
                continue;
            }
            if (entries[i] == null) {
                holder.set(DEAD);
                spaces[i].keys.remove(holder.key, holder);
                keys.decrement();
            } else {
                holder.set(entries[i]);
            }
        }
    }

    /** Whether {@code a} holds the very states of {@code b}: then there is nothing to write. */
    private static boolean sameStates(Object[] a, Object[] b) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        return true;
    }

    /** True (after a spin hint) when {@code e} is a tombstone or a lock: the caller looks the key up again. */
    private static boolean busy(Entry e) {
        if (e == DEAD || locked(e)) {
            Thread.onSpinWait();
            return true;
        }
        return false;
    }

    private static boolean locked(Entry e) {
        return e != null && e.many() == LOCKED;
    }

    @Override
    public CompletableFuture<Decision> decideAsync(Rule rule, String key, Request request) {
        try {
            return CompletableFuture.completedFuture(decide(rule, key, request));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public boolean release(Rule rule, String key, long lease) {
        Namespace ns = namespace(rule);
        CompiledRule compiled = compiled(ns, rule);
        for (;;) {
            AtomicReference<Entry> holder = ns.keys.get(key);
            if (holder == null) {
                return false;
            }
            Entry current = holder.get();
            if (busy(current)) {
                continue;
            }
            long now = now();
            Object[] states = statesFor(current, compiled, now);
            Object[] next = states.clone();
            boolean released = false;
            for (int i = 0; i < compiled.size(); i++) {
                Algorithm.Release<Object> r = compiled.algorithm(i).release(states[i], now, lease);
                released |= r.released();
                next[i] = r.state();
                if (next[i] != states[i] && next[i] != null && now >= compiled.algorithm(i).expiresAt(next[i])) {
                    next[i] = null;     // written already expired: no state (keepExpired)
                }
            }
            if (!released) {
                return false;
            }
            if (holder.compareAndSet(current, Entry.of(compiled, next, compiled.expiresAt(next)))) {
                return true;
            }
        }
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(Rule rule, String key, long lease) {
        try {
            return CompletableFuture.completedFuture(release(rule, key, lease));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public Decision charge(Rule rule, String key, long estimate, String ticketId, long lifetimeMicros) {
        return settling.charge(rule, key, estimate, ticketId, lifetimeMicros);
    }

    @Override
    public Settlement settle(Rule rule, String key, String ticketId, long actual) {
        return settling.settle(rule, key, ticketId, actual);
    }

    /** A pure change of one key's states: what {@link #change} commits, and what it answers. */
    interface Change<R> {
        /**
         * @param states the stored states (migrated to {@code rule}), one per slot
         * @param live   the same with states expired at {@code now} as null ({@link CompiledRule#live})
         * @return what to answer and the states to write ({@code next} null: write nothing)
         */
        Changed<R> apply(CompiledRule rule, Object[] states, Object[] live, long now);
    }

    record Changed<R>(R value, Object[] next) {}

    /**
     * Applies {@code change} to the key's states atomically, as {@link #decideSeveral} applies a decision: the
     * other operations on a key ({@link MemorySettling}'s charge and settlement) go through here.
     */
    <R> R change(Rule rule, String key, Change<R> change) {
        Namespace ns = namespace(rule);
        CompiledRule compiled = compiled(ns, rule);
        maybeSweep();
        for (;;) {
            AtomicReference<Entry> holder = ns.keys.get(key);
            Entry current = holder == null ? null : holder.get();
            if (busy(current)) {
                continue;
            }
            long now = now();
            Object[] states = statesFor(current, compiled, now);
            Object[] live = compiled.live(states, now);
            Changed<R> changed = change.apply(compiled, states, live, now);
            if (changed.next() == null && (current == null || current.rule() == compiled)) {
                return changed.value();
            }
            Object[] next = changed.next() == null ? states : keepExpired(compiled, changed.next(), live, states, now);
            if (commit(ns, key, holder, current, Entry.of(compiled, next, compiled.expiresAt(next)))) {
                return changed.value();
            }
        }
    }

    long clockNow() {
        return now();
    }

    @Override
    public void reset(Rule rule, String key) {
        Namespace ns = namespaces.get(rule.name());
        if (ns != null) {
            AtomicReference<Entry> holder = ns.keys.get(key);
            if (holder != null && kill(holder)) {
                ns.keys.remove(key, holder);
                keys.decrement();
            }
        }
    }

    /** Number of keys held, expired or not (for tests and metrics). */
    public long size() {
        return keys.sum();
    }

    private long now() {
        long now = clock.nowMicros();
        if (now < 0 || now > Arith.MAX_TIME) {
            throw new IllegalStateException("clock reading must be in [0, 2^53] microseconds since the epoch, was "
                    + now);
        }
        return now;
    }

    private Namespace namespace(Rule rule) {
        Namespace ns = namespaces.get(rule.name());
        if (ns == null) {
            ns = namespaces.computeIfAbsent(rule.name(), n -> new Namespace(new CompiledRule(rule)));
        }
        return ns;
    }

    /** The compiled form of {@code rule}; a rule that differs from the namespace's latest becomes the latest. */
    private static CompiledRule compiled(Namespace ns, Rule rule) {
        CompiledRule c = ns.compiled;
        if (c.rule() == rule) {
            return c;
        }
        if (c.rule().equals(rule)) {
            return c;
        }
        CompiledRule fresh = new CompiledRule(rule);
        ns.compiled = fresh;
        return fresh;
    }

    /**
     * The states to decide with. Expired states are handed on as they are: the store decides on
     * {@link CompiledRule#live} (expired states as no state, since smooth_bursty, refresh_period and a token
     * bucket below its initial tokens expire on purpose into something other than their state), and a limit
     * that writes nothing keeps its stale state for a clock that steps back, whatever the other limits write.
     * The Redis script does the same with its one key per limit.
     */
    private static Object[] statesFor(Entry entry, CompiledRule compiled, long now) {
        if (entry == null) {
            return new Object[compiled.slots()];
        }
        return entry.rule() == compiled ? entry.states() : compiled.migrateFrom(entry.rule(), entry.states(), now);
    }

    /**
     * The states to store after a request, as the Redis script stores them. A limit whose expired state the
     * request left alone keeps it, as an expired entry is kept (and as the Redis store leaves that limit's key to
     * its TTL): a clock that steps back finds it again. A limit the request wrote with a state that has already
     * expired at {@code now} (a smooth_bursty ticket clamped at the end of the clock, for instance) stores no
     * state, as the script deletes such a key ({@code sluice.store_limit}): kept, that state would come back for
     * a clock that steps back, where the script finds none. (The lockout's slot, after the limits', expires
     * by {@link CompiledRule#live}.)
     */
    private static Object[] keepExpired(CompiledRule rule, Object[] next, Object[] live, Object[] states, long now) {
        for (int i = 0; i < next.length; i++) {
            if (next[i] == live[i]) {
                if (live[i] != states[i]) {
                    next[i] = states[i];
                }
            } else if (i < rule.size() && next[i] != null && now >= rule.algorithm(i).expiresAt(next[i])) {
                next[i] = null;
            }
        }
        return next;
    }

    /** Swaps the holder's entry to {@link #DEAD}; true when this call did it. */
    private static boolean kill(AtomicReference<Entry> holder) {
        for (;;) {
            Entry e = holder.get();
            if (e == DEAD) {
                return false;
            }
            if (locked(e)) {
                Thread.onSpinWait();    // a reset waits for the targets decided together to be written
                continue;
            }
            if (holder.compareAndSet(e, DEAD)) {
                return true;
            }
        }
    }

    private void maybeSweep() {
        int slot = (1 + (int) (Thread.currentThread().getId() & (COUNT_SLOTS - 1))) * SLOT_STRIDE;
        long counted = ++decisionsBySlot[slot];
        if ((counted & (SWEEP_BATCH - 1)) == 0) {
            long since = decisionsSinceSweep.addAndGet(SWEEP_BATCH);
            // A lap that is under way goes on by one batch; a new lap waits for max(4096, keys) decisions since
            // the last one began, so a small store is not walked (and its iterators allocated) every batch.
            // midLap() is read without the lock: a stale answer only moves a step by one batch.
            if (cursor.midLap() || since >= Math.max(MIN_SWEEP_INTERVAL, keys.sum())) {
                sweepStep();
            }
        }
    }

    /** Examines the next {@link #SWEEP_BATCH} keys of the cursor's lap and drops those that have expired. */
    private void sweepStep() {
        if (!sweeping.tryLock()) {
            return;
        }
        try {
            if (!cursor.midLap()) {
                decisionsSinceSweep.set(0);
            }
            long now = clock.nowMicros();
            for (int i = 0; i < SWEEP_BATCH; i++) {
                Holder holder = cursor.next(namespaces.values());
                if (holder == null) {
                    break;
                }
                Entry entry = holder.get();
                if (entry != DEAD && (entry == null || now >= entry.expiresAt())) {
                    drop(cursor.map(), holder, entry);
                }
            }
        } finally {
            sweeping.unlock();
        }
    }

    /**
     * Called after an insertion took the store past {@code maxKeys}: evicts until {@code maxKeys} keys remain.
     * Each eviction looks at the next {@link #EVICTION_SAMPLE} keys of the cursor and drops every expired one
     * among them or, if none had expired, the one whose state expires first (Redis's {@code volatile-ttl}
     * policy samples the same way). Every insertion past {@code maxKeys} waits its turn for the cursor, so the
     * store exceeds {@code maxKeys} by no more than the insertions racing one another; a turn lasts at most
     * {@link #MAX_EVICTION_ROUNDS} rounds (it may evict for a racing insertion too), so no request examines more
     * than {@code EVICTION_SAMPLE · MAX_EVICTION_ROUNDS} keys.
     */
    private void evict() {
        sweeping.lock();
        try {
            long now = clock.nowMicros();
            for (int round = 0; round < MAX_EVICTION_ROUNDS && keys.sum() > maxKeys; round++) {
                Holder earliest = null;
                Entry earliestEntry = null;
                ConcurrentHashMap<String, Holder> earliestMap = null;
                boolean droppedExpired = false;
                int lapEnds = 0;
                for (int seen = 0; seen < EVICTION_SAMPLE && lapEnds < 2; ) {
                    Holder holder = cursor.next(namespaces.values());
                    if (holder == null) {
                        lapEnds++; // two in one sample: the store holds fewer keys than a sample
                        continue;
                    }
                    seen++;
                    Entry entry = holder.get();
                    if (entry == DEAD || locked(entry)) {
                        continue;
                    }
                    if (entry == null || now >= entry.expiresAt()) {
                        droppedExpired |= drop(cursor.map(), holder, entry);
                    } else if (earliestEntry == null || entry.expiresAt() < earliestEntry.expiresAt()) {
                        earliest = holder;
                        earliestEntry = entry;
                        earliestMap = cursor.map();
                    }
                }
                if (!droppedExpired && earliest != null) {
                    drop(earliestMap, earliest, earliestEntry);
                }
            }
        } finally {
            sweeping.unlock();
        }
    }

    /**
     * Removes the holder's key if the holder still holds {@code expected}; true when this call removed it. The
     * holder is swapped to {@link #DEAD} first, so a decision that read it before cannot commit into it.
     */
    private boolean drop(ConcurrentHashMap<String, Holder> map, Holder holder, Entry expected) {
        if (holder.compareAndSet(expected, DEAD)) {
            map.remove(holder.key, holder);
            keys.decrement();
            return true;
        }
        return false;
    }
}
