package io.sluice.internal.memory;

import io.sluice.Clock;
import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.internal.CompiledRule;
import io.sluice.internal.RuleEvaluator;
import io.sluice.internal.algorithm.Algorithm;
import io.sluice.internal.algorithm.Arith;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The in-memory store: each key's state is one immutable {@link Entry} in an {@link AtomicReference}, replaced
 * by compare-and-set after a pure evaluation, so there is no lock at all and decisions on one key are
 * linearizable. See {@link io.sluice.MemoryStoreBuilder} for the memory and eviction rules.
 *
 * <p>Removal races are closed with a tombstone: a sweep first swaps a key's entry to {@link #DEAD} and only
 * then removes the key, and a decision that meets {@code DEAD} looks the key up again. So no decision is ever
 * committed into a holder that has left the map.
 */
public final class MemoryStore implements Store {

    /** The state of all limits of one rule on one key, and the rule version it was written under. */
    record Entry(CompiledRule rule, Object[] states, long expiresAt) {}

    private static final Entry DEAD = new Entry(null, new Object[0], Long.MIN_VALUE);
    private static final int MIN_SWEEP_INTERVAL = 4096;

    private final Clock clock;
    private final long maxKeys;
    private final ConcurrentHashMap<String, Namespace> namespaces = new ConcurrentHashMap<>();
    private final AtomicLong keys = new AtomicLong();
    private final AtomicLong decisionsSinceSweep = new AtomicLong();
    private final AtomicBoolean sweeping = new AtomicBoolean();

    public MemoryStore(Clock clock, long maxKeys) {
        this.clock = clock;
        this.maxKeys = maxKeys;
    }

    /** The keys of one rule name and the latest compiled version of that rule. */
    private static final class Namespace {
        final ConcurrentHashMap<String, AtomicReference<Entry>> keys = new ConcurrentHashMap<>();
        volatile CompiledRule compiled;

        Namespace(CompiledRule compiled) {
            this.compiled = compiled;
        }
    }

    @Override
    public Decision decide(Rule rule, String key, Request request) {
        Namespace ns = namespace(rule);
        CompiledRule compiled = compiled(ns, rule);
        maybeSweep();
        for (;;) {
            AtomicReference<Entry> holder = ns.keys.get(key);
            Entry current = holder == null ? null : holder.get();
            if (current == DEAD) {
                continue;
            }
            long now = now();
            Object[] states = statesFor(current, compiled, now);
            Object[] live = compiled.live(states, now);
            RuleEvaluator.Outcome outcome = RuleEvaluator.evaluate(compiled, live, now, request);
            if (outcome.states() == null && (current == null || current.rule() == compiled)) {
                return outcome.decision();
            }
            Object[] next = outcome.states() == null ? states : keepExpired(outcome.states(), live, states);
            Entry entry = new Entry(compiled, next, compiled.expiresAt(next));
            if (holder == null) {
                // A key's holder is created only when there is state to keep: peeks and rejections of
                // unknown keys leave nothing behind.
                if (ns.keys.putIfAbsent(key, new AtomicReference<>(entry)) == null) {
                    if (keys.incrementAndGet() > maxKeys) {
                        sweep(true);
                    }
                    return outcome.decision();
                }
            } else if (holder.compareAndSet(current, entry)) {
                return outcome.decision();
            }
        }
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
            if (current == DEAD) {
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
            }
            if (!released) {
                return false;
            }
            if (holder.compareAndSet(current, new Entry(compiled, next, compiled.expiresAt(next)))) {
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
    public void reset(Rule rule, String key) {
        Namespace ns = namespaces.get(rule.name());
        if (ns != null) {
            AtomicReference<Entry> holder = ns.keys.get(key);
            if (holder != null && kill(holder)) {
                ns.keys.remove(key, holder);
                keys.decrementAndGet();
            }
        }
    }

    /** Number of keys held, expired or not (for tests and metrics). */
    public long size() {
        return keys.get();
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
            return new Object[compiled.size()];
        }
        return entry.rule() == compiled ? entry.states() : compiled.migrateFrom(entry.rule(), entry.states(), now);
    }

    /**
     * A limit whose expired state the request left alone keeps it, as an expired entry is kept (and as the Redis
     * store leaves that limit's key to its TTL): a clock that steps back finds it again.
     */
    private static Object[] keepExpired(Object[] next, Object[] live, Object[] states) {
        if (live != states) {
            for (int i = 0; i < next.length; i++) {
                if (next[i] == live[i] && live[i] != states[i]) {
                    next[i] = states[i];
                }
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
            if (holder.compareAndSet(e, DEAD)) {
                return true;
            }
        }
    }

    private void maybeSweep() {
        long since = decisionsSinceSweep.incrementAndGet();
        if (since >= Math.max(MIN_SWEEP_INTERVAL, keys.get())) {
            sweep(false);
        }
    }

    /**
     * Drops every expired key; with {@code overCapacity}, then drops the keys closest to expiring until 90% of
     * {@code maxKeys} remain. One sweep runs at a time; others skip it.
     */
    private void sweep(boolean overCapacity) {
        if (!sweeping.compareAndSet(false, true)) {
            return;
        }
        try {
            decisionsSinceSweep.set(0);
            long now = clock.nowMicros();
            for (Namespace ns : namespaces.values()) {
                for (Iterator<Map.Entry<String, AtomicReference<Entry>>> it = ns.keys.entrySet().iterator(); it.hasNext(); ) {
                    Map.Entry<String, AtomicReference<Entry>> e = it.next();
                    Entry entry = e.getValue().get();
                    if (entry != DEAD && (entry == null || now >= entry.expiresAt()) && killIf(e.getValue(), entry)) {
                        ns.keys.remove(e.getKey(), e.getValue());
                        keys.decrementAndGet();
                    }
                }
            }
            long target = maxKeys - maxKeys / 10;
            if (overCapacity && keys.get() > target) {
                evictClosestToExpiry(keys.get() - target);
            }
        } finally {
            sweeping.set(false);
        }
    }

    private static boolean killIf(AtomicReference<Entry> holder, Entry expected) {
        return holder.compareAndSet(expected, DEAD);
    }

    private void evictClosestToExpiry(long count) {
        long[] expiries = new long[(int) Math.min(Integer.MAX_VALUE - 8, keys.get() + 1024)];
        int n = 0;
        for (Namespace ns : namespaces.values()) {
            for (AtomicReference<Entry> holder : ns.keys.values()) {
                Entry entry = holder.get();
                if (entry != null && entry != DEAD && n < expiries.length) {
                    expiries[n++] = entry.expiresAt();
                }
            }
        }
        if (n == 0) {
            return;
        }
        long[] sorted = Arrays.copyOf(expiries, n);
        Arrays.sort(sorted);
        long threshold = sorted[(int) Math.min(n - 1, count - 1)];
        long evicted = 0;
        for (Namespace ns : namespaces.values()) {
            for (Iterator<Map.Entry<String, AtomicReference<Entry>>> it = ns.keys.entrySet().iterator();
                 it.hasNext() && evicted < count; ) {
                Map.Entry<String, AtomicReference<Entry>> e = it.next();
                Entry entry = e.getValue().get();
                if (entry != null && entry != DEAD && entry.expiresAt() <= threshold && killIf(e.getValue(), entry)) {
                    ns.keys.remove(e.getKey(), e.getValue());
                    keys.decrementAndGet();
                    evicted++;
                }
            }
        }
    }
}
