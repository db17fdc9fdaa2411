package io.sluice.cli;

/**
 * The largest sum of amounts recorded within any window of a fixed length, exactly, over a stream of
 * (time, amount) in non-decreasing time. A window of length {@code W} ending at {@code t} holds what was
 * recorded in {@code (t − W, t]}, the same half-open window the sliding log enforces, so a sliding log's limit
 * is never exceeded here and a fixed window's double burst at a boundary shows in full.
 *
 * <p>Only what is still inside the window is kept (amounts at the same time are merged), so memory is bounded
 * by what one window holds, not by the length of the stream.
 */
final class SlidingSum {

    private final long window;
    private long[] times = new long[8];
    private long[] amounts = new long[8];
    private int head;
    private int size;
    private long sum;
    private long peak;

    SlidingSum(long windowMicros) {
        this.window = windowMicros;
    }

    void add(long time, long amount) {
        expire(time);
        if (size > 0 && times[slot(size - 1)] == time) {
            amounts[slot(size - 1)] += amount;
        } else {
            if (size == times.length) {
                grow();
            }
            times[slot(size)] = time;
            amounts[slot(size)] = amount;
            size++;
        }
        sum += amount;
        peak = Math.max(peak, sum);
    }

    /** The largest in-window sum so far. */
    long peak() {
        return peak;
    }

    /** Whether nothing recorded before {@code time} is still in a window ending at {@code time}. */
    boolean isIdleAt(long time) {
        return size == 0 || times[slot(size - 1)] <= time - window;
    }

    private void expire(long now) {
        while (size > 0 && times[head] <= now - window) {
            sum -= amounts[head];
            head = (head + 1) % times.length;
            size--;
        }
    }

    private int slot(int i) {
        return (head + i) % times.length;
    }

    private void grow() {
        long[] t = new long[times.length * 2];
        long[] a = new long[times.length * 2];
        for (int i = 0; i < size; i++) {
            t[i] = times[slot(i)];
            a[i] = amounts[slot(i)];
        }
        times = t;
        amounts = a;
        head = 0;
    }
}
