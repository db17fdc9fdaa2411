package io.sluice.cli;

import io.sluice.rules.Millis;
import java.util.Arrays;

/**
 * Requests admitted and rejected, and the longest wait, per time slice: what {@code --chart} draws.
 *
 * <p>Slices are aligned to the Unix epoch and their width comes from a ladder in which each width divides the
 * next (1 ms, 2 ms, 10 ms, 20 ms, 100 ms, ... 1 d, 7 d). While the trace streams by, the finest width that keeps
 * at most {@value #FINE_SLICES} slices is kept; at the end the slices are merged into the finest width that
 * gives at most {@code maxSlices} bars. Memory is therefore fixed, whatever the trace's length. With a fixed
 * width ({@code --slice}) the slices are kept as given, one per width of trace time.
 */
final class Timeline {

    static final long[] LADDER = {
            1_000L, 2_000L, 10_000L, 20_000L, 100_000L, 200_000L,                 // ms
            1_000_000L, 2_000_000L, 10_000_000L, 20_000_000L,                     // s
            60_000_000L, 120_000_000L, 600_000_000L, 1_200_000_000L,              // min
            3_600_000_000L, 7_200_000_000L, 21_600_000_000L, 43_200_000_000L,     // h
            86_400_000_000L, 604_800_000_000L};                                   // d
    private static final int FINE_SLICES = 4096;
    /** Most slices a fixed width may produce: a chart wider than this shows nothing more. */
    static final int MAX_FIXED_SLICES = 100_000;

    /** The slices to draw: {@code width} µs each, the first starting at {@code firstStart} µs since the epoch. */
    record Slices(long width, long firstStart, long[] admitted, long[] rejected, long[] longestWait) {
        int count() {
            return admitted.length;
        }
    }

    private final boolean fixed;
    private int rung;
    private long width;
    private long origin = -1;
    private int used;
    private long[] admitted = new long[64];
    private long[] rejected = new long[64];
    private long[] longestWait = new long[64];
    private boolean anyWait;

    private Timeline(boolean fixed, long width) {
        this.fixed = fixed;
        this.width = width;
    }

    /** Slice widths chosen from the ladder. */
    static Timeline adaptive() {
        return new Timeline(false, LADDER[0]);
    }

    /** Slices of exactly {@code widthMicros}. */
    static Timeline fixed(long widthMicros) {
        return new Timeline(true, widthMicros);
    }

    /** @throws UsageException when a fixed width would need more than {@value #MAX_FIXED_SLICES} slices */
    void record(long time, boolean allowed, long waitMicros) throws UsageException {
        if (origin < 0) {
            origin = time / width;
        }
        int i = index(time);
        if (fixed && i >= MAX_FIXED_SLICES) {
            throw new UsageException("--slice " + Millis.format(width) + " ms makes more than " + MAX_FIXED_SLICES
                    + " slices of this trace; choose a wider slice");
        }
        while (!fixed && i >= FINE_SLICES && rung + 1 < LADDER.length) {
            coarsen(LADDER[++rung]);
            i = index(time);
        }
        if (i >= admitted.length) {
            grow(Math.max(i + 1, admitted.length * 2));
        }
        used = Math.max(used, i + 1);
        if (allowed) {
            admitted[i]++;
        } else {
            rejected[i]++;
        }
        longestWait[i] = Math.max(longestWait[i], waitMicros);
        anyWait |= waitMicros > 0;
    }

    /** Whether any admitted request had to wait (then the chart draws waits too). */
    boolean anyWait() {
        return anyWait;
    }

    /** The slices, merged to at most {@code maxSlices} unless the width is fixed; empty when nothing was recorded. */
    Slices slices(int maxSlices) {
        if (origin < 0) {
            return new Slices(width, 0, new long[0], new long[0], new long[0]);
        }
        Timeline view = copy();
        while (!fixed && view.used > maxSlices && view.rung + 1 < LADDER.length) {
            view.coarsen(LADDER[++view.rung]);
        }
        return new Slices(view.width, view.origin * view.width, Arrays.copyOf(view.admitted, view.used),
                Arrays.copyOf(view.rejected, view.used), Arrays.copyOf(view.longestWait, view.used));
    }

    private int index(long time) {
        long i = time / width - origin;
        return i > Integer.MAX_VALUE - 8 ? Integer.MAX_VALUE - 8 : (int) i;
    }

    /** Merges the slices into wider ones; {@code wider} is a multiple of the width, so each lands in one. */
    private void coarsen(long wider) {
        long newOrigin = origin * width / wider;
        long[] a = new long[admitted.length];
        long[] r = new long[admitted.length];
        long[] w = new long[admitted.length];
        int newUsed = 0;
        for (int i = 0; i < used; i++) {
            int j = (int) ((origin + i) * width / wider - newOrigin);
            a[j] += admitted[i];
            r[j] += rejected[i];
            w[j] = Math.max(w[j], longestWait[i]);
            newUsed = j + 1;
        }
        admitted = a;
        rejected = r;
        longestWait = w;
        used = newUsed;
        origin = newOrigin;
        width = wider;
    }

    private void grow(int size) {
        admitted = Arrays.copyOf(admitted, size);
        rejected = Arrays.copyOf(rejected, size);
        longestWait = Arrays.copyOf(longestWait, size);
    }

    private Timeline copy() {
        Timeline t = new Timeline(fixed, width);
        t.rung = rung;
        t.origin = origin;
        t.used = used;
        t.admitted = admitted.clone();
        t.rejected = rejected.clone();
        t.longestWait = longestWait.clone();
        t.anyWait = anyWait;
        return t;
    }
}
