package io.sluice.server;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The heaviest hitters of a stream in a fixed number of counters: Metwally, Agrawal and El Abbadi's Space-Saving
 * ("Efficient Computation of Frequent and Top-k Elements in Data Streams", ICDT 2005), on their Stream-Summary
 * structure so that every {@link #offer} is O(1).
 *
 * <p><b>The model.</b> {@code capacity} counters, each a monitored item with a count and an error. An item
 * already monitored adds one to its count. A new item takes a free counter (error 0), or, when all are taken,
 * evicts the item with the smallest count {@code min} and inherits that count: it starts at {@code min + 1}
 * with error {@code min}, since it may have been seen up to {@code min} times while not monitored. Worked
 * example, capacity 2, stream {@code a a b c}: a=2; b=1; c evicts b (the minimum, 1) and becomes c=2 with
 * error 1. Its true count, 1, lies in [count - error, count].
 *
 * <p><b>Invariants</b> (N items offered so far): the counts sum to N; every monitored item's true count lies in
 * [count - error, count]; the minimum count is at most N / capacity, so any item seen more than N / capacity
 * times is monitored; an unmonitored item was seen at most {@link #min()} times.
 *
 * <p><b>Stream-Summary.</b> Counters of equal count share a bucket; buckets form a list in increasing count.
 * An increment moves a counter to the next bucket (creating it when the next holds a larger count); the
 * minimum is the first bucket. Memory: at most {@code capacity} counters and {@code capacity} buckets, and a
 * map of {@code capacity} entries, whatever the stream.
 *
 * <p>Not thread-safe: the caller serializes access.
 *
 * @param <K> the items; their {@code equals} and {@code hashCode} identify them
 */
final class SpaceSaving<K> {

    /** An item's estimate: its true count lies in [{@code count - error}, {@code count}]. */
    record Estimate<K>(K item, long count, long error) {}

    private static final class Bucket<K> {
        final long count;
        Bucket<K> prev;
        Bucket<K> next;
        Counter<K> first;

        Bucket(long count) {
            this.count = count;
        }
    }

    private static final class Counter<K> {
        K item;
        long error;
        Bucket<K> bucket;
        Counter<K> prev;
        Counter<K> next;
    }

    private final int capacity;
    private final Map<K, Counter<K>> counters;
    private Bucket<K> smallest;
    private long offered;

    /** @throws IllegalArgumentException unless {@code capacity} is at least 1 */
    SpaceSaving(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        this.capacity = capacity;
        this.counters = new HashMap<>(capacity * 4 / 3 + 1);
    }

    /** Counts one occurrence of {@code item}. */
    void offer(K item) {
        offered++;
        Counter<K> c = counters.get(item);
        if (c == null) {
            if (counters.size() < capacity) {
                c = new Counter<>();
                c.item = item;
                counters.put(item, c);
                moveTo(c, null, 1);
                return;
            }
            c = smallest.first;
            counters.remove(c.item);
            c.item = item;
            c.error = smallest.count;
            counters.put(item, c);
        }
        moveTo(c, c.bucket, c.bucket.count + 1);
    }

    /** Moves {@code c} from bucket {@code from} (null for a new counter) to the bucket of {@code count}. */
    private void moveTo(Counter<K> c, Bucket<K> from, long count) {
        Bucket<K> after = from;
        Bucket<K> next = from == null ? smallest : from.next;
        Bucket<K> to;
        if (next != null && next.count == count) {
            to = next;
        } else {
            to = new Bucket<>(count);
            to.prev = after;
            to.next = next;
            if (next != null) {
                next.prev = to;
            }
            if (after != null) {
                after.next = to;
            } else {
                smallest = to;
            }
        }
        if (from != null) {
            unlink(c, from);
        }
        c.bucket = to;
        c.prev = null;
        c.next = to.first;
        if (to.first != null) {
            to.first.prev = c;
        }
        to.first = c;
    }

    private void unlink(Counter<K> c, Bucket<K> b) {
        if (c.prev != null) {
            c.prev.next = c.next;
        } else {
            b.first = c.next;
        }
        if (c.next != null) {
            c.next.prev = c.prev;
        }
        if (b.first == null) {
            if (b.prev != null) {
                b.prev.next = b.next;
            } else {
                smallest = b.next;
            }
            if (b.next != null) {
                b.next.prev = b.prev;
            }
        }
    }

    /** Forgets everything, keeping the capacity. */
    void clear() {
        counters.clear();
        smallest = null;
        offered = 0;
    }

    /** Items offered since created or cleared. */
    long offered() {
        return offered;
    }

    /** The counters in use: at most the capacity. */
    int size() {
        return counters.size();
    }

    int capacity() {
        return capacity;
    }

    /**
     * The most an item that is not monitored can have been seen: the smallest count once every counter is in
     * use, else 0 (an unmonitored item was never seen).
     */
    long min() {
        return counters.size() < capacity || smallest == null ? 0 : smallest.count;
    }

    /** The estimate of a monitored item, or null. */
    Estimate<K> estimate(K item) {
        Counter<K> c = counters.get(item);
        return c == null ? null : new Estimate<>(c.item, c.bucket.count, c.error);
    }

    /** Every monitored item's estimate, in no particular order. */
    List<Estimate<K>> estimates() {
        List<Estimate<K>> out = new ArrayList<>(counters.size());
        for (Counter<K> c : counters.values()) {
            out.add(new Estimate<>(c.item, c.bucket.count, c.error));
        }
        return out;
    }
}
