package io.sluice.internal.memory;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The slot of one key in its namespace's map: its current {@link Entry}, swapped by compare-and-set. It knows its
 * key so that the eviction cursor, which walks a namespace's holders (an iterator that allocates nothing per
 * element, unlike the map's entry iterator), can remove the one it picked without a second lookup.
 */
final class Holder extends AtomicReference<Entry> {
    private static final long serialVersionUID = 1L;

    final transient String key;

    /**
     * Set by the sweep when it finds the key's state expired, cleared by a decision that finds the key: the sweep
     * drops a key only on the second visit that finds it expired with no decision in between
     * ({@link KeyReclaimer#maybeSweep}). Plain reads and writes: a lost update only moves a drop by one lap,
     * earlier or later, and dropping an expired state is invisible either way. (A boolean fits in the padding:
     * the holder stays 24 bytes.)
     */
    private transient boolean sweptExpired;

    Holder(String key, Entry entry) {
        super(entry);
        this.key = key;
    }

    /** A decision found the key: the sweep starts counting its expired visits again. */
    void used() {
        if (sweptExpired) {     // read first: most decisions find it clear and leave the line unwritten
            sweptExpired = false;
        }
    }

    /**
     * The sweep found the key's state expired: true when it had found it so on its previous visit too, with no
     * decision in between (drop it now); else remembers this visit and returns false.
     */
    boolean expiredAgain() {
        if (sweptExpired) {
            return true;
        }
        sweptExpired = true;
        return false;
    }
}
