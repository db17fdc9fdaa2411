package io.sluice.internal.memory;

import io.sluice.internal.CompiledRule;

/**
 * The state of all limits of one rule on one key, and the rule version it was written under. A rule of one
 * limit keeps its state in {@code one} ({@code many} is null), so the hot path allocates no array; a rule of
 * several keeps them in {@code many}. {@code expiresAt} is {@link CompiledRule#expiresAt} of the states:
 * for a rule of one limit, that state's own expiry.
 *
 * <p>Immutable, but for one case: for a rule of one limit that steps in place, {@code one} is a {@link Cell}
 * that decisions update in place (see {@link Cell}), and the expiry is the cell's (read without the cell's write it is
 * a hint, which whoever acts on it checks again holding the write).
 */
record Entry(CompiledRule rule, Object[] many, Object one, long expiresAt) {

    /** A tombstone: the key is being removed; a decision that meets it looks the key up again. */
    static final Entry DEAD = new Entry(null, new Object[0], null, Long.MIN_VALUE);
    /**
     * The states array of a lock entry: {@code decideTogether} swaps each target's entry for a fresh entry
     * holding it while it decides them, so that no other decision sees one target charged and not another.
     * Never expires, so neither sweep nor eviction drops it.
     */
    static final Object[] LOCKED = new Object[0];

    static Entry of(CompiledRule rule, Object[] states, long expiresAt) {
        return rule.slots() == 1 ? new Entry(rule, null, states[0], expiresAt) : new Entry(rule, states, null,
                expiresAt);
    }

    /** A lock entry (see {@link #LOCKED}). */
    static Entry lock() {
        return new Entry(null, LOCKED, null, Long.MAX_VALUE);
    }

    @Override
    public long expiresAt() {
        return one instanceof Cell c ? c.expiresAt() : expiresAt;
    }

    /** The cell of an entry that steps in place, else null. */
    Cell cell() {
        return one instanceof Cell c ? c : null;
    }

    /** The states, one per limit of {@link #rule}; a fresh array for a rule of one limit. Not for a cell's. */
    Object[] states() {
        return many != null ? many : new Object[] {one};
    }

    boolean locked() {
        return many == LOCKED;
    }

    /** True (after a spin hint) when {@code e} is a tombstone or a lock: the caller looks the key up again. */
    static boolean busy(Entry e) {
        if (e == DEAD || (e != null && e.locked())) {
            Thread.onSpinWait();
            return true;
        }
        return false;
    }
}
