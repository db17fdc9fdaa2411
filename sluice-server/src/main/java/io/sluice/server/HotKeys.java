package io.sluice.server;

import io.sluice.Clock;
import io.sluice.Decision;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The keys decided most often, and rejected most often, in the last minute, in a fixed amount of memory: what
 * {@code GET /v1/admin/top} reports. Every limiter of the server reports its decisions here
 * ({@link SluiceListener#onDecision(Rule, String, Decision)}), and so do the remote store's calls.
 *
 * <p><b>Why a Space-Saving sketch over time slots.</b> Keys are as many as clients send: an exact count per key
 * over a minute grows with the traffic, which an attacker chooses (one new key per request). A Space-Saving
 * sketch ({@link SpaceSaving}) keeps {@code capacity} counters whatever the stream and finds every key seen
 * more than N / capacity times among N, with counts over-estimated by at most a known error — exactly the
 * question "who is hammering us". A sketch cannot forget one old occurrence, so the minute is cut into
 * {@value #SLOTS} slots of {@value #SLOT_SECONDS} s, each with its own pair of sketches (decisions,
 * rejections); a report merges the current slot and the {@value #SLOTS} - 1 before it, i.e. the last 55 to 60
 * seconds, and a slot is cleared when its time comes round again. (A bounded top-k with exact counts would
 * need the counts of the keys outside it to know when one enters; a decaying sketch has no "last minute".)
 *
 * <p><b>Memory bound.</b> At most {@code 2 × SLOTS × capacity} counters ({@link #counters()}; 3,072 with the
 * default capacity of {@value #DEFAULT_CAPACITY}), each holding a reference to its rule's name and its key
 * (at most 512 characters): about 1.2 KB per counter with the longest keys, so under 4 MB in all, and under
 * 1 MB for keys of tens of characters.
 *
 * <p><b>Accuracy.</b> A reported count is an upper bound and {@code count - error} a lower bound of the key's
 * true number in the window; a key absent from a slot's sketch is counted there at that sketch's minimum (the
 * most it can have had). Any key with more than a {@code 1 / capacity} share of a slot's decisions is in that
 * slot's sketch.
 *
 * <p>Thread-safe: one lock, held for two hash-map operations per decision (three when rejected); a report copies
 * the sketches under it. Time comes from the given {@link Clock}, so tests move it.
 */
final class HotKeys implements SluiceListener {

    /** Counters per sketch, unless told otherwise. */
    static final int DEFAULT_CAPACITY = 128;
    /** Slots in the window. */
    static final int SLOTS = 12;
    /** Seconds per slot: {@code SLOTS × SLOT_SECONDS} is the minute. */
    static final int SLOT_SECONDS = 5;

    private static final long SLOT_MICROS = SLOT_SECONDS * 1_000_000L;

    /** What is counted: a key under a rule (the rule's name on the store, the key as the limiter was given it). */
    record Item(String rule, String key) {}

    /**
     * One line of a report.
     *
     * @param count an upper bound of the key's decisions (or rejections) in the window
     * @param error how far {@code count} may be above the true number
     */
    record Entry(String rule, String key, long count, long error) {}

    /**
     * A report.
     *
     * @param decisions    decisions counted in the window
     * @param rejections   rejections counted in the window
     * @param hottest      the keys decided most often, the most first
     * @param mostRejected the keys rejected most often, the most first
     */
    record Report(long decisions, long rejections, List<Entry> hottest, List<Entry> mostRejected) {}

    private static final class Slot {
        long index = Long.MIN_VALUE;
        final SpaceSaving<Item> decisions;
        final SpaceSaving<Item> rejections;

        Slot(int capacity) {
            decisions = new SpaceSaving<>(capacity);
            rejections = new SpaceSaving<>(capacity);
        }
    }

    private final Clock clock;
    private final int capacity;
    private final Slot[] slots = new Slot[SLOTS];

    /** @throws IllegalArgumentException unless {@code capacity} is at least 1 */
    HotKeys(Clock clock, int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("hot keys capacity must be at least 1, was " + capacity);
        }
        this.clock = clock;
        this.capacity = capacity;
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = new Slot(capacity);
        }
    }

    int capacity() {
        return capacity;
    }

    @Override
    public void onDecision(Rule rule, String key, Decision decision) {
        record(rule.name(), key, !decision.allowed());
    }

    /** Counts one decision for {@code key} under the rule named {@code rule}. */
    void record(String rule, String key, boolean rejected) {
        Item item = new Item(rule, key);
        long index = Math.floorDiv(clock.nowMicros(), SLOT_MICROS);
        synchronized (this) {
            Slot slot = slots[(int) Math.floorMod(index, (long) SLOTS)];
            if (slot.index != index) {
                // The slot last held a window that has passed: start it afresh for this one.
                slot.decisions.clear();
                slot.rejections.clear();
                slot.index = index;
            }
            slot.decisions.offer(item);
            if (rejected) {
                slot.rejections.offer(item);
            }
        }
    }

    /** Counters in use in every sketch: at most {@code 2 × SLOTS × capacity}. */
    synchronized int counters() {
        int n = 0;
        for (Slot s : slots) {
            n += s.decisions.size() + s.rejections.size();
        }
        return n;
    }

    /** The {@code n} hottest and most rejected keys of the last minute. */
    Report report(int n) {
        long now = Math.floorDiv(clock.nowMicros(), SLOT_MICROS);
        List<List<SpaceSaving.Estimate<Item>>> decided = new ArrayList<>();
        List<List<SpaceSaving.Estimate<Item>>> rejected = new ArrayList<>();
        long[] decidedMin = new long[SLOTS];
        long[] rejectedMin = new long[SLOTS];
        long decisions = 0;
        long rejections = 0;
        synchronized (this) {
            for (Slot s : slots) {
                if (s.index > now - SLOTS && s.index <= now) {
                    decidedMin[decided.size()] = s.decisions.min();
                    rejectedMin[rejected.size()] = s.rejections.min();
                    decided.add(s.decisions.estimates());
                    rejected.add(s.rejections.estimates());
                    decisions += s.decisions.offered();
                    rejections += s.rejections.offered();
                }
            }
        }
        return new Report(decisions, rejections, top(decided, decidedMin, n), top(rejected, rejectedMin, n));
    }

    /**
     * Merges the slots' estimates: a key's count is the sum of its counts where it is monitored and of the
     * sketch's minimum where it is not (the most it can have had there); its error grows alike.
     */
    private static List<Entry> top(List<List<SpaceSaving.Estimate<Item>>> slots, long[] mins, int n) {
        Map<Item, long[]> merged = new HashMap<>();
        long base = 0;
        for (int i = 0; i < slots.size(); i++) {
            base += mins[i];
        }
        long unmonitored = base;
        for (int i = 0; i < slots.size(); i++) {
            for (SpaceSaving.Estimate<Item> e : slots.get(i)) {
                // Start every key at the sum of all minimums, then swap this slot's minimum for its own figures.
                long[] ce = merged.computeIfAbsent(e.item(), k -> new long[] {unmonitored, unmonitored});
                ce[0] += e.count() - mins[i];
                ce[1] += e.error() - mins[i];
            }
        }
        List<Entry> out = new ArrayList<>(merged.size());
        for (Map.Entry<Item, long[]> m : merged.entrySet()) {
            out.add(new Entry(m.getKey().rule(), m.getKey().key(), m.getValue()[0], m.getValue()[1]));
        }
        out.sort(Comparator.comparingLong(Entry::count).reversed()
                .thenComparingLong(e -> e.error())
                .thenComparing(Entry::rule).thenComparing(Entry::key));
        return out.size() > n ? List.copyOf(out.subList(0, n)) : out;
    }
}
