package io.sluice.internal.memory;

import io.sluice.Clock;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Counts the memory store's keys and drops those it no longer needs: the sweep of expired keys, paced by
 * decisions, and the eviction past {@code maxKeys}. Neither is a whole-table pass: both move one
 * {@link EvictionCursor} a few keys at a time (see {@link #maybeSweep} and {@link #evict}).
 *
 * <p>A key is removed by swapping its entry to {@link Entry#DEAD} first and only then removing it from its map,
 * and a decision that meets {@code DEAD} looks the key up again; an entry whose state is a {@link Cell} is
 * swapped holding the cell's write and the cell retired. So no decision is ever committed into a holder, or a
 * cell, that has left the map.
 */
final class KeyReclaimer {

    private static final int MIN_SWEEP_INTERVAL = 4096;
    /** Keys looked at per eviction; see {@link #evict}. */
    static final int EVICTION_SAMPLE = 8;
    private static final int MAX_EVICTION_ROUNDS = 8;

    /*
     * Pacing the sweep without a shared counter per decision. Each thread counts its decisions in its own slot
     * (by thread id; slots 128 bytes apart, so two threads on distinct keys write distinct cache lines) and
     * adds them to decisionsSinceSweep by batches of SWEEP_BATCH. The increment is a plain one: two threads
     * that share a slot may lose a count now and then, which only delays a sweep by as much; a lone thread's
     * count is exact, so a sweep still comes within SWEEP_BATCH decisions of max(MIN_SWEEP_INTERVAL, keys).
     * (It replaced one AtomicLong incremented per decision, a cache line that threads on distinct keys fought
     * over.)
     */
    private static final int COUNT_SLOTS = 16;
    private static final int SLOT_STRIDE = 16;
    private static final int SWEEP_BATCH = 64;

    private final Clock clock;
    private final long maxKeys;
    private final ConcurrentHashMap<String, Namespace> namespaces;
    /** Keys held: a LongAdder, as threads that create and sweep keys on their own shares would contend on one cell. */
    private final LongAdder keys = new LongAdder();
    private final AtomicLong decisionsSinceSweep = new AtomicLong();
    /**
     * Held by the thread that sweeps or evicts: it alone moves {@link #cursor}. A sweep tries it and skips when
     * it is taken; an eviction waits for it, so that every insertion past {@code maxKeys} evicts (a flood from
     * many threads cannot outrun one evicting thread), and the wait is for a few samples, never a whole pass.
     */
    private final ReentrantLock sweeping = new ReentrantLock();
    private final EvictionCursor cursor = new EvictionCursor();
    /** Decisions per thread slot (see above); slot i is at index (i + 1) · SLOT_STRIDE, clear of the header. */
    private final long[] decisionsBySlot = new long[(COUNT_SLOTS + 2) * SLOT_STRIDE];

    KeyReclaimer(Clock clock, long maxKeys, ConcurrentHashMap<String, Namespace> namespaces) {
        this.clock = clock;
        this.maxKeys = maxKeys;
        this.namespaces = namespaces;
    }

    /** Number of keys held, expired or not. */
    long size() {
        return keys.sum();
    }

    /** Counts a key just inserted; evicts when that took the store past {@code maxKeys}. */
    void inserted() {
        keys.increment();
        evictIfFull();
    }

    /** Counts a key inserted by a caller that evicts later, with {@link #evictIfFull}, outside its own locks. */
    void insertedWithoutEviction() {
        keys.increment();
    }

    /** Counts a key just removed from its map. */
    void removed() {
        keys.decrement();
    }

    void evictIfFull() {
        if (keys.sum() > maxKeys) {
            evict();
        }
    }

    /**
     * Counts one decision; every {@link #SWEEP_BATCH} decisions of a thread, maybe sweeps a step.
     *
     * <p>The sweep drops a key the second time in a row it finds it expired, not the first: a key that is asked
     * for again between two visits (its {@link Holder#used}) stays. A bucket that refills to full between two
     * requests has expired by then (a full bucket is the same as no state); dropped at the first visit, it came
     * back on its next request as a new holder, entry and cell, 136 bytes of garbage per decision on 10,000 keys
     * with a generous limit. Keeping it is invisible too, since an expired state decides as no state. The price is
     * one lap: an idle key leaves within about {@code 3 · max(4096, keys)} decisions instead of 2. Eviction past
     * {@code maxKeys} drops expired keys at once, as before.
     */
    void maybeSweep() {
        int slot = (1 + (int) (Thread.currentThread().getId() & (COUNT_SLOTS - 1))) * SLOT_STRIDE;
        long counted = ++decisionsBySlot[slot];
        if ((counted & (SWEEP_BATCH - 1)) == 0) {
            long since = decisionsSinceSweep.addAndGet(SWEEP_BATCH);
            // A lap that is under way goes on by one batch; a new lap waits for max(4096, keys) decisions since
            // the last one began, so a small store is not walked (and its iterators allocated) every batch.
            // midLap() is read without the lock: a stale answer only moves a step by one batch.
            if (cursor.midLap() || since >= Math.max(MIN_SWEEP_INTERVAL, keys.sum())) {
                sweepStep();
            }
        }
    }

    /** Examines the next {@link #SWEEP_BATCH} keys of the cursor's lap and drops those that have expired. */
    private void sweepStep() {
        if (!sweeping.tryLock()) {
            return;
        }
        try {
            if (!cursor.midLap()) {
                decisionsSinceSweep.set(0);
            }
            long now = clock.nowMicros();
            for (int i = 0; i < SWEEP_BATCH; i++) {
                Holder holder = cursor.next(namespaces.values());
                if (holder == null) {
                    break;
                }
                Entry entry = holder.get();
                if (entry != Entry.DEAD && (entry == null || now >= entry.expiresAt()) && holder.expiredAgain()) {
                    drop(cursor.map(), holder, entry, now);
                }
            }
        } finally {
            sweeping.unlock();
        }
    }

    /**
     * Called after an insertion took the store past {@code maxKeys}: evicts until {@code maxKeys} keys remain.
     * Each eviction looks at the next {@link #EVICTION_SAMPLE} keys of the cursor and drops every expired one
     * among them or, if none had expired, the one whose state expires first (Redis's {@code volatile-ttl}
     * policy samples the same way). Every insertion past {@code maxKeys} waits its turn for the cursor, so the
     * store exceeds {@code maxKeys} by no more than the insertions racing one another; a turn lasts at most
     * {@link #MAX_EVICTION_ROUNDS} rounds (it may evict for a racing insertion too), so no request examines more
     * than {@code EVICTION_SAMPLE · MAX_EVICTION_ROUNDS} keys.
     */
    private void evict() {
        sweeping.lock();
        try {
            long now = clock.nowMicros();
            for (int round = 0; round < MAX_EVICTION_ROUNDS && keys.sum() > maxKeys; round++) {
                Holder earliest = null;
                Entry earliestEntry = null;
                long earliestExpiry = 0;
                ConcurrentHashMap<String, Holder> earliestMap = null;
                boolean droppedExpired = false;
                int lapEnds = 0;
                for (int seen = 0; seen < EVICTION_SAMPLE && lapEnds < 2; ) {
                    Holder holder = cursor.next(namespaces.values());
                    if (holder == null) {
                        lapEnds++; // two in one sample: the store holds fewer keys than a sample
                        continue;
                    }
                    seen++;
                    Entry entry = holder.get();
                    if (entry == Entry.DEAD || (entry != null && entry.locked())) {
                        continue;
                    }
                    long expiresAt = entry == null ? Long.MIN_VALUE : entry.expiresAt();
                    if (now >= expiresAt) {
                        droppedExpired |= drop(cursor.map(), holder, entry, now);
                    } else if (earliestEntry == null || expiresAt < earliestExpiry) {
                        earliest = holder;
                        earliestEntry = entry;
                        earliestExpiry = expiresAt;
                        earliestMap = cursor.map();
                    }
                }
                if (!droppedExpired && earliest != null) {
                    drop(earliestMap, earliest, earliestEntry, Long.MAX_VALUE);
                }
            }
        } finally {
            sweeping.unlock();
        }
    }

    /**
     * Removes the holder's key if the holder still holds {@code expected} and its state has expired at
     * {@code now} ({@link Long#MAX_VALUE}: whatever its expiry); true when this call removed it. The holder is
     * swapped to {@link Entry#DEAD} first, so a decision that read it before cannot commit into it; a cell is
     * checked again and retired holding its write, as an in-place decision may have renewed it since it was read.
     */
    boolean drop(ConcurrentHashMap<String, Holder> map, Holder holder, Entry expected, long now) {
        Cell cell = expected == null ? null : expected.cell();
        if (cell == null) {
            if (!holder.compareAndSet(expected, Entry.DEAD)) {
                return false;
            }
        } else {
            int version = cell.beginWrite();
            if (Cell.retired(version)) {
                return false;
            }
            if (now < cell.expiresAt() || !holder.compareAndSet(expected, Entry.DEAD)) {
                cell.abandonWrite(version);
                return false;
            }
            cell.retireHeld();
        }
        map.remove(holder.key, holder);
        keys.decrement();
        return true;
    }
}
