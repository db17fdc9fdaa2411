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
import io.sluice.internal.algorithm.InPlaceStep;
import io.sluice.internal.algorithm.Step;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-memory store. Each key's state is one {@link Entry} in a {@link Holder}, replaced by compare-and-set
 * after a pure evaluation, so decisions on one key are linearizable and no lock is taken, with one exception:
 * a rule of one limit whose algorithm steps in place keeps its state in a {@link Cell} that decisions read
 * without a lock and write holding the cell's write, taken by a compare-and-set (below). See {@link io.sluice.MemoryStoreBuilder}
 * for the memory and eviction rules; {@link KeyReclaimer} counts the keys, sweeps expired ones and evicts past
 * {@code maxKeys}.
 *
 * <h2>The hot path: what a decision costs, and what was cut</h2>
 *
 * A {@code tryAcquire} on a rule of one token_bucket, gcra, fixed_window or sliding_window limit (the common case)
 * allocates one object, its {@link Decision} (56 bytes): the state is updated in place. Other algorithms allocate
 * their new state and an entry per change as well. Cut, each with why it is safe:
 * <ul>
 *   <li><b>A state and an entry per decision</b> ({@link #decideInPlace}): the key's entry holds a mutable
 *       {@link Cell}, and the algorithm's {@link InPlaceStep} overwrites it with the state the pure step would
 *       commit. The pure step stays the specification; a property test per algorithm holds the in-place step
 *       to it (TokenBucketInPlacePropertiesTest, GcraInPlacePropertiesTest, FixedWindowInPlacePropertiesTest,
 *       SlidingWindowInPlacePropertiesTest),
 *       InPlaceContentionTest races it against the paths that settle a cell, and SingleLimitPathPropertiesTest
 *       holds this path to the general one. The cell is taken out of its holder only holding its write, and then
 *       retired (see {@link Cell}), so an in-place decision never lands in a key that was swept, evicted,
 *       reset or rewritten by another path. Those other paths (several limits, decideTogether, release, a rule
 *       change) first {@link ImmutableStates#settle} a cell into an immutable entry; the next in-place decision
 *       makes a new cell. {@link InPlaceDecider} steps an uncontended cell's own integers holding its write (the
 *       clock read before), and a cell last seen rejecting or contended on a copy outside any lock: a decision
 *       that writes nothing (most rejections, peeks) takes no lock at all, and one that writes takes the write by
 *       a compare-and-set from the version it read (so only if nobody wrote the cell meanwhile) and holds it
 *       only to copy five integers back. No path takes a monitor. (Holding the cell's monitor for the whole step
 *       on every decision, clock included, made two threads on one key take 730–980 ns per call: the monitor
 *       inflated and parked; issue 13. Copying on every decision made one thread admitting on one key pay a
 *       thread-local lookup and two copies: 62.6 → 79.7 ns. An uncontended monitor around the in-place step
 *       cost two atomic instructions where the compare-and-set costs one: docs/memory-store.md.) InPlaceContentionTest and InPlaceDeciderTest
 *       count exact grants with threads racing on these paths.
 *   <li><b>Arrays and the evaluator's outcome</b> ({@link #decideOne}): a rule of one limit keeps its state in
 *       the entry itself, and the step goes straight to the decision, without the states array, the "live"
 *       copy, the {@code Outcome} or the one-element array of next states. It is {@link #decideSeveral} for
 *       n = 1 line by line, with the same {@link RuleEvaluator} helpers; an entry written under another rule
 *       version takes the general path, which migrates it. SingleLimitPathPropertiesTest holds it to the
 *       general path on random operation sequences of every algorithm (rule changes, resets, releases and a
 *       clock stepping back included); the contract suite and RedisMemoryEquivalenceIT run through it too.
 *   <li><b>A second {@code expiresAt} per decision</b>: whether the stored state has expired is read from the
 *       entry (or cell), whose {@code expiresAt} is that state's own expiry for a rule of one limit.
 *   <li><b>A shared counter written by every decision</b>: see {@link KeyReclaimer#maybeSweep}.
 *   <li><b>A new key per decision on a key that expires between its requests</b> (a generous bucket, full again
 *       by the next request): the sweep drops a key only when it finds it expired on two visits in a row with no
 *       decision in between ({@link Holder#used}, {@link KeyReclaimer#maybeSweep}); dropped at once, such a key
 *       came back each time as a new holder, entry and cell (191 bytes per decision instead of 56).
 *   <li><b>A map lookup and a rule comparison per decision</b>: the namespace of the last rule decided is kept
 *       in a field; it is used only when its compiled rule is the very {@link Rule} object passed in, which is
 *       exactly when the lookup and {@link #compiled} would have returned it.
 *   <li><b>Half the decision</b>: {@link Decision} keeps its rare fields (lease, shadow limit) apart, 56 bytes
 *       instead of 88.
 * </ul>
 */
public final class MemoryStore implements Store {

    private final Clock clock;
    private final boolean singleLimitPath;
    private final ConcurrentHashMap<String, Namespace> namespaces = new ConcurrentHashMap<>();
    private final KeyReclaimer reclaimer;
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
     * @param singleLimitPath whether rules of one limit take {@link #decideOne} (and {@link #decideInPlace});
     *                        false runs every rule through {@link #decideSeveral}, the reference the tests hold
     *                        the single-limit paths to
     */
    MemoryStore(Clock clock, long maxKeys, boolean singleLimitPath) {
        this.clock = clock;
        this.singleLimitPath = singleLimitPath;
        this.reclaimer = new KeyReclaimer(clock, maxKeys, namespaces);
        this.settling = new MemorySettling(this, maxKeys);
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
        reclaimer.maybeSweep();
        // inPlace() is null but for a rule of one limit without shadow: the common case is one test.
        InPlaceStep<Object> inPlace = compiled.inPlace();
        if (inPlace != null && singleLimitPath) {
            return decideInPlace(ns, compiled, inPlace, key, request);
        }
        if (!singleLimitPath || compiled.slots() != 1 || compiled.hasShadow()) {
            return decideSeveral(ns, compiled, key, request);
        }
        return decideOne(ns, compiled, key, request);
    }

    /**
     * {@link #decideOne} for an algorithm that steps in place: the state is the key's {@link Cell}, stepped by
     * {@link InPlaceDecider} (in place holding the cell's write, or on a copy for a contended or rejecting cell,
     * then without taking the write for a decision that writes nothing); nothing is allocated but the decision. A key
     * without a cell (a new key, or one whose state another path wrote) gets one, stepped before anyone else can
     * see it and committed as the entry. The clock is read once, first, so that no lock is ever held across it.
     */
    private Decision decideInPlace(Namespace ns, CompiledRule compiled, InPlaceStep<Object> inPlace, String key,
                                   Request request) {
        long now = now();
        for (;;) {
            Holder holder = ns.keys.get(key);
            Entry current = holder == null ? null : holder.get();
            if (Entry.busy(current)) {
                continue;
            }
            if (current != null && current.rule() != compiled) {
                return decideSeveral(ns, compiled, key, request);    // migrates the state to this rule version
            }
            Cell cell = current == null ? null : current.cell();
            if (cell != null) {
                holder.used();
                Decision decision = InPlaceDecider.decide(cell, inPlace, request, now);
                if (decision != null) {
                    return decision;
                }
                continue;   // retired: the entry has left the holder
            }
            cell = new Cell();
            if (current != null && current.one() != null) {
                inPlace.load(current.one(), cell);
            }
            Decision decision = InPlaceDecider.step(cell, inPlace, request, now);
            if (current == null && !cell.holdsState()) {
                return decision;    // as on the other paths, a request that writes nothing creates no key
            }
            if (commit(ns, key, holder, current, new Entry(compiled, null, cell, Long.MIN_VALUE))) {
                return decision;
            }
        }
    }

    /**
     * {@link #decideSeveral} for a rule of one limit, the common case, with nothing allocated but what the
     * decision needs: the limit's state sits in the entry itself (no array), its expiry is the entry's (no
     * second {@code expiresAt}), and the step goes straight to the decision (no {@link RuleEvaluator.Outcome}).
     * Each line is the general path's for n = 1: {@link CompiledRule#live} reads "expired" from the entry,
     * {@link RuleEvaluator#evaluate} is {@code permitsOfOne}, {@code step}, {@code decisionOfOne} and
     * {@code nextOfOne}, and {@link ImmutableStates#keepExpired} has nothing to keep (it acts only on a state the
     * request left alone, which is not written). An entry of another rule version goes the general way, which
     * migrates it.
     */
    private Decision decideOne(Namespace ns, CompiledRule compiled, String key, Request request) {
        Algorithm<Object> algorithm = compiled.algorithm(0);
        for (;;) {
            Holder holder = ns.keys.get(key);
            Entry current = holder == null ? null : holder.get();
            if (Entry.busy(current)) {
                continue;
            }
            if (current != null && current.rule() != compiled) {
                return decideSeveral(ns, compiled, key, request);
            }
            if (holder != null) {
                holder.used();
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
        return change(ns, compiled, key, (c, states, live, now) -> {
            RuleEvaluator.Outcome outcome = RuleEvaluator.evaluate(c, live, now, request);
            return new Changed<>(outcome.decision(), outcome.states());
        });
    }

    /**
     * Writes {@code entry} for {@code key} if its holder still holds {@code current} ({@code holder == null}: if
     * the key is still absent); false when another decision came first, to decide again. {@code current} is never
     * a cell's entry: the in-place path updates a cell without committing, the others
     * {@link ImmutableStates#settle} it first.
     */
    private boolean commit(Namespace ns, String key, Holder holder, Entry current, Entry entry) {
        if (holder == null) {
            // A key's holder is created only when there is state to keep: peeks and rejections of
            // unknown keys leave nothing behind.
            if (ns.keys.putIfAbsent(key, new Holder(key, entry)) == null) {
                reclaimer.inserted();
                return true;
            }
            return false;
        }
        return holder.compareAndSet(current, entry);
    }

    /** See {@link TogetherDecision}. */
    @Override
    public Decision decideTogether(List<Target> targets, Request request) {
        Target.check(targets, request);
        if (targets.size() == 1) {
            return decide(targets.get(0).rule(), targets.get(0).key(), request);
        }
        reclaimer.maybeSweep();
        int n = targets.size();
        Namespace[] spaces = new Namespace[n];
        CompiledRule[] rules = new CompiledRule[n];
        for (int i = 0; i < n; i++) {
            spaces[i] = namespace(targets.get(i).rule());
            rules[i] = compiled(spaces[i], targets.get(i).rule());
        }
        return new TogetherDecision(targets, spaces, rules, reclaimer).decide(request, this::now);
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
            Holder holder = ns.keys.get(key);
            if (holder == null) {
                return false;
            }
            Entry current = holder.get();
            if (Entry.busy(current) || ImmutableStates.settle(holder, current)) {
                continue;
            }
            long now = now();
            Object[] states = ImmutableStates.statesFor(current, compiled, now);
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
     * Applies {@code change} to the key's states atomically: the decisions of {@link #decideSeveral} and
     * {@link MemorySettling}'s charges and settlements all go through here.
     */
    <R> R change(Rule rule, String key, Change<R> change) {
        Namespace ns = namespace(rule);
        CompiledRule compiled = compiled(ns, rule);
        reclaimer.maybeSweep();
        return change(ns, compiled, key, change);
    }

    /** {@link #change(Rule, String, Change)} on a rule already compiled: the loop every immutable-state path runs. */
    private <R> R change(Namespace ns, CompiledRule compiled, String key, Change<R> change) {
        for (;;) {
            Holder holder = ns.keys.get(key);
            Entry current = holder == null ? null : holder.get();
            if (Entry.busy(current)) {
                continue;
            }
            if (ImmutableStates.settle(holder, current)) {
                continue;
            }
            if (holder != null) {
                holder.used();
            }
            long now = now();
            Object[] states = ImmutableStates.statesFor(current, compiled, now);
            Object[] live = compiled.live(states, now);
            Changed<R> changed = change.apply(compiled, states, live, now);
            if (changed.next() == null && (current == null || current.rule() == compiled)) {
                return changed.value();
            }
            Object[] next = changed.next() == null ? states
                    : ImmutableStates.keepExpired(compiled, changed.next(), live, states, now);
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
            Holder holder = ns.keys.get(key);
            if (holder != null) {
                kill(ns, holder);
            }
        }
    }

    /** The holder of {@code key} in the namespace {@code ruleName}, or null (for tests). */
    Holder holderOf(String ruleName, String key) {
        Namespace ns = namespaces.get(ruleName);
        return ns == null ? null : ns.keys.get(key);
    }

    /** Number of keys held, expired or not (for tests and metrics). */
    public long size() {
        return reclaimer.size();
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
     * Removes the holder's key, unless another removal came first. A reset waits for the targets decided
     * together to be written, and takes a cell out holding its write ({@link KeyReclaimer#drop}).
     */
    private void kill(Namespace ns, Holder holder) {
        for (;;) {
            Entry e = holder.get();
            if (e == Entry.DEAD) {
                return;
            }
            if (e != null && e.locked()) {
                Thread.onSpinWait();
                continue;
            }
            if (reclaimer.drop(ns.keys, holder, e, Long.MAX_VALUE)) {
                return;
            }
        }
    }
}
