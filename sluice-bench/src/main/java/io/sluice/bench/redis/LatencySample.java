package io.sluice.bench.redis;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Latencies of one measured run, in nanoseconds, recorded from any thread without locks. Beyond its capacity
 * further latencies are dropped, which only happens past a million decisions in one run.
 */
public final class LatencySample {
    private final long[] nanos;
    private final AtomicInteger size = new AtomicInteger();

    LatencySample(int capacity) {
        this.nanos = new long[capacity];
    }

    void record(long latencyNanos) {
        int i = size.getAndIncrement();
        if (i < nanos.length) {
            nanos[i] = latencyNanos;
        }
    }

    void clear() {
        size.set(0);
    }

    /** The {@code q}-quantile (0 to 1) in microseconds, nearest rank; NaN when empty. */
    public double quantileMicros(double q, long[] sorted) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank))] / 1000.0;
    }

    /** The recorded latencies, sorted. */
    long[] sorted() {
        long[] copy = Arrays.copyOf(nanos, Math.min(size.get(), nanos.length));
        Arrays.sort(copy);
        return copy;
    }
}
