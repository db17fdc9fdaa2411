package io.sluice.server;

import io.sluice.Clock;
import java.util.function.Supplier;

/**
 * The clock of a server started with {@code --clock client}: a store call made inside {@link #at} reads the
 * time the remote store sent, any other reads the system clock. The store reads its clock on the calling
 * thread when a call starts (the memory store, and the Redis store in its exact mode), so a thread-local
 * reading set around that call is the one the decision uses.
 *
 * <p>For tests and replays of recorded traffic only: a client that sends its own time decides where a window
 * starts, so a server that serves clients it does not trust keeps its own clock (the default).
 */
final class RequestClock implements Clock {

    private static final long UNSET = Long.MIN_VALUE;

    /** One slot per thread, reused, so a call allocates nothing. */
    private static final ThreadLocal<long[]> READING = ThreadLocal.withInitial(() -> new long[] {UNSET});

    @Override
    public long nowMicros() {
        long now = READING.get()[0];
        return now == UNSET ? Clock.system().nowMicros() : now;
    }

    /** Runs {@code call} with this clock reading {@code nowMicros} on this thread. */
    static <T> T at(long nowMicros, Supplier<T> call) {
        long[] slot = READING.get();
        long before = slot[0];
        slot[0] = nowMicros;
        try {
            return call.get();
        } finally {
            slot[0] = before;
        }
    }
}
