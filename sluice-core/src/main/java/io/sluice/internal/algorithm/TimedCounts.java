package io.sluice.internal.algorithm;

import java.util.Arrays;

/**
 * Operations on a list of timed counts, the state of {@code sliding_log} (one entry per admission time) and
 * {@code rolling_window} (one entry per bucket): a flat array of pairs {@code (time, count)}, oldest first, times
 * strictly increasing, counts at least 1. Each operation returns a new array (or the argument itself when nothing
 * changes), never writing into its argument, so states built on these arrays stay immutable.
 *
 * <p>What an entry means, and when a charge joins the newest entry rather than opening one, belongs to each
 * algorithm and is derived in its essay; these are only the array manipulations both share. The reads the Lua ports
 * name alike ({@code total}, {@code newest}) stay in each algorithm, beside the port that mirrors them.
 */
final class TimedCounts {

    static final long[] EMPTY = {};

    private TimedCounts() {}

    /** The entries with {@code time > cutoff}: a suffix, since times increase. */
    static long[] after(long[] pairs, long cutoff) {
        int first = 0;
        while (first < pairs.length && pairs[first] <= cutoff) {
            first += 2;
        }
        return first == 0 ? pairs : Arrays.copyOfRange(pairs, first, pairs.length);
    }

    /** {@code pairs} with {@code count} added to the newest entry; {@code pairs} is not empty. */
    static long[] addedToNewest(long[] pairs, long count) {
        long[] joined = pairs.clone();
        joined[pairs.length - 1] += count;
        return joined;
    }

    /** {@code pairs} with a new newest entry {@code (time, count)}; {@code time} is after every entry's. */
    static long[] appended(long[] pairs, long time, long count) {
        int n = pairs.length;
        long[] longer = Arrays.copyOf(pairs, n + 2);
        longer[n] = time;
        longer[n + 1] = count;
        return longer;
    }

    /** The index of the entry at {@code time}, or -1 when there is none. */
    static int indexOf(long[] pairs, long time) {
        for (int i = 0; i < pairs.length; i += 2) {
            if (pairs[i] == time) {
                return i;
            }
        }
        return -1;
    }

    /** {@code pairs} with the count of the entry at index {@code i} lowered by {@code count}; at 0 the entry leaves. */
    static long[] lowered(long[] pairs, int i, long count) {
        long left = pairs[i + 1] - count;
        if (left > 0) {
            long[] after = pairs.clone();
            after[i + 1] = left;
            return after;
        }
        long[] after = new long[pairs.length - 2];
        System.arraycopy(pairs, 0, after, 0, i);
        System.arraycopy(pairs, i + 2, after, i, pairs.length - i - 2);
        return after;
    }
}
