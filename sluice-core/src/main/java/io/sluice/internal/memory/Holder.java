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

    Holder(String key, Entry entry) {
        super(entry);
        this.key = key;
    }
}
