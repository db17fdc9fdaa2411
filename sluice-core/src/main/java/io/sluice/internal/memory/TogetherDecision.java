package io.sluice.internal.memory;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Store.Target;
import io.sluice.internal.CompiledRule;
import io.sluice.internal.RuleEvaluator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * One {@code MemoryStore.decideTogether}: several targets all or nothing. Each target's holder is locked (its
 * entry swapped for a lock entry, in the order of rule name and key, so two such decisions cannot deadlock),
 * all their limits are evaluated as one rule ({@link CompiledRule#concat}), and each holder gets its new entry,
 * or its old one back. A decision that meets a lock entry spins until it is gone: the lock is held for one pure
 * evaluation, never across a wait. A target whose state is a {@link Cell} is settled into an immutable entry
 * first ({@link ImmutableStates#settle}).
 */
final class TogetherDecision {

    private final List<Target> targets;
    private final Namespace[] spaces;
    private final CompiledRule[] rules;
    private final KeyReclaimer reclaimer;
    private final int n;
    private final Holder[] holders;
    private final Entry[] before;

    TogetherDecision(List<Target> targets, Namespace[] spaces, CompiledRule[] rules, KeyReclaimer reclaimer) {
        this.targets = targets;
        this.spaces = spaces;
        this.rules = rules;
        this.reclaimer = reclaimer;
        this.n = targets.size();
        this.holders = new Holder[n];
        this.before = new Entry[n];
    }

    /** Decides {@code request} for every target at once, reading the time from {@code clock} once locked. */
    Decision decide(Request request, LongSupplier clock) {
        Integer[] order = new Integer[n];
        Arrays.setAll(order, i -> i);
        Arrays.sort(order, Comparator.comparing((Integer i) -> targets.get(i).rule().name())
                .thenComparing(i -> targets.get(i).key()));
        Entry lock = Entry.lock();
        Entry[] after = null;
        boolean inserted = false;
        try {
            for (int i : order) {
                inserted |= lock(spaces[i], targets.get(i).key(), lock, i);
            }
            long now = clock.getAsLong();
            Object[][] states = new Object[n][];
            Object[][] live = new Object[n][];
            List<Object> flat = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                states[i] = ImmutableStates.statesFor(before[i], rules[i], now);
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
                Object[] kept = mine == null ? states[i]
                        : ImmutableStates.keepExpired(rules[i], mine, live[i], states[i], now);
                next[i] = sameStates(kept, states[i]) && (before[i] == null || before[i].rule() == rules[i])
                        ? before[i] : Entry.of(rules[i], kept, rules[i].expiresAt(kept));
            }
            after = next;
            return outcome.decision();
        } finally {
            unlock(after != null ? after : before);
            if (inserted) {
                reclaimer.evictIfFull();
            }
        }
    }

    /**
     * Swaps the entry of {@code key} for {@code lock}, creating its holder if the key is absent; records the
     * holder and the entry it held at {@code i}. True when it created the holder.
     */
    private boolean lock(Namespace ns, String key, Entry lock, int i) {
        for (;;) {
            Holder holder = ns.keys.get(key);
            if (holder == null) {
                Holder fresh = new Holder(key, lock);
                if (ns.keys.putIfAbsent(key, fresh) == null) {
                    reclaimer.insertedWithoutEviction();
                    holders[i] = fresh;
                    return true;
                }
                continue;
            }
            Entry current = holder.get();
            if (Entry.busy(current) || ImmutableStates.settle(holder, current)) {
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
    private void unlock(Entry[] entries) {
        for (int i = 0; i < n; i++) {
            Holder holder = holders[i];
            if (holder == null) {
                continue;
            }
            if (entries[i] == null) {
                holder.set(Entry.DEAD);
                spaces[i].keys.remove(holder.key, holder);
                reclaimer.removed();
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
}
