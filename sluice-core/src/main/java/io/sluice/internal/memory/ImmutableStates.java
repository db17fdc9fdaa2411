package io.sluice.internal.memory;

import io.sluice.internal.CompiledRule;

/**
 * What the memory store's paths that work on immutable states share ({@code MemoryStore}'s change loop and
 * release, {@link TogetherDecision}): taking a key's state out of its {@link Cell} into an immutable entry first,
 * the states to decide with, and which of them to store after a request. Kept apart from the store so that the
 * store reads as its decision paths.
 */
final class ImmutableStates {

    private ImmutableStates() {}

    /**
     * When {@code current} holds a {@link Cell}, replaces it by the immutable entry of the same state (holding the
     * cell's write, retiring the cell) and returns true, for the caller to read the key again; else false. The
     * paths that work on immutable states call it first.
     */
    static boolean settle(Holder holder, Entry current) {
        Cell cell = current == null ? null : current.cell();
        if (cell == null) {
            return false;
        }
        int version = cell.beginWrite();
        if (Cell.retired(version)) {
            return true;
        }
        Object state = cell.holdsState() ? current.rule().inPlace().save(cell) : null;
        if (holder.compareAndSet(current, new Entry(current.rule(), null, state, cell.expiresAt()))) {
            cell.retireHeld();
        } else {
            cell.abandonWrite(version);
        }
        return true;
    }

    /**
     * The states to decide with. Expired states are handed on as they are: the store decides on
     * {@link CompiledRule#live} (expired states as no state, since smooth_bursty, refresh_period and a token
     * bucket below its initial tokens expire on purpose into something other than their state), and a limit
     * that writes nothing keeps its stale state for a clock that steps back, whatever the other limits write.
     * The Redis script does the same with its one key per limit.
     */
    static Object[] statesFor(Entry entry, CompiledRule compiled, long now) {
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
    static Object[] keepExpired(CompiledRule rule, Object[] next, Object[] live, Object[] states, long now) {
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
}
