package io.sluice.internal.memory;

import java.util.Collection;
import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where the memory store's sweep and eviction are in their walk over all keys, kept between calls so that each
 * call examines a few keys and goes on from there: a lap visits every namespace's keys once, in the maps' own
 * (hash) order, and the next lap starts over. This is what lets no request pay for a whole-table pass.
 *
 * <p>Not thread-safe: the store lets one thread at a time use it. The maps' iterators are weakly consistent, so
 * keys added or removed during a lap may or may not be visited in it; none is visited twice in one lap.
 */
final class EvictionCursor {
    private Iterator<Namespace> namespaces;
    private Iterator<Holder> holders;
    private ConcurrentHashMap<String, Holder> map;

    /** Whether a lap is under way (false before the first call and right after a lap ended). */
    boolean midLap() {
        return namespaces != null;
    }

    /**
     * The next holder of the lap, or null when the lap has just ended (the call after that starts a new one);
     * {@link #map()} is then its namespace's map.
     */
    Holder next(Collection<Namespace> all) {
        if (namespaces == null) {
            namespaces = all.iterator();
            holders = null;
        }
        while (holders == null || !holders.hasNext()) {
            if (!namespaces.hasNext()) {
                namespaces = null;
                holders = null;
                map = null;
                return null;
            }
            map = namespaces.next().keys;
            holders = map.values().iterator();
        }
        return holders.next();
    }

    /** The map of the holder {@link #next} returned last. */
    ConcurrentHashMap<String, Holder> map() {
        return map;
    }
}
