package io.sluice.redis.internal;

import io.sluice.internal.algorithm.Arith;

/**
 * Redis's clock as this process estimates it from the replies of calls that report Redis's time (the sync
 * script's), for a mode that decides in process at Redis time (synced mode without a client clock).
 *
 * <p>Redis read its clock somewhere within the round trip, so the midpoint of the call on the local monotonic
 * clock is the estimate and half the round trip its error; of the last {@value #SAMPLES} replies the one with the
 * shortest round trip wins, so one slow reply (a pause between its arrival and this code) does not move the clock.
 * Until the first sample the estimate is the local monotonic clock itself. Thread-safe.
 */
final class ServerClock {

    /** How many recent replies the estimate chooses from (NTP's filter keeps eight). */
    static final int SAMPLES = 16;

    /** Redis server time minus the local monotonic clock, in microseconds. */
    private volatile long offsetMicros;
    /** Recent samples (round trip, offset), guarded by itself. */
    private final long[][] samples = new long[SAMPLES][];
    private int next;

    /**
     * Takes one reply's reading.
     *
     * @param serverNow     Redis's time in the reply, in microseconds since the epoch
     * @param sentNanos     when the call was sent, on {@link System#nanoTime()}
     * @param receivedNanos when its reply arrived, on {@link System#nanoTime()}
     */
    void sample(long serverNow, long sentNanos, long receivedNanos) {
        long rtt = Math.max(0, receivedNanos - sentNanos);
        long offset = serverNow - (sentNanos / 2_000 + receivedNanos / 2_000);
        synchronized (samples) {
            samples[next] = new long[] {rtt, offset};
            next = (next + 1) % SAMPLES;
            long[] best = null;
            for (long[] sample : samples) {
                if (sample != null && (best == null || sample[0] < best[0])) {
                    best = sample;
                }
            }
            offsetMicros = best[1];
        }
    }

    /** Redis's time now, as estimated, in microseconds since the epoch, within [0, 2^53]. */
    long nowMicros() {
        return Math.max(0, Math.min(Arith.MAX_TIME, System.nanoTime() / 1_000 + offsetMicros));
    }
}
