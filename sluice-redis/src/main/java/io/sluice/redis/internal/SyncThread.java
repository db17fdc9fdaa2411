package io.sluice.redis.internal;

import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * The daemon thread ({@code sluice-sync}) that runs synced mode's rounds: started by the first synced decision,
 * it sleeps until the next round is due on the store's clock, runs it, and stops on {@link #close}. A round that
 * throws is logged and the next one runs as usual. With a client clock, which may be moved by hand (tests) or
 * replayed, it looks at the clock every {@value #CLIENT_CLOCK_POLL_MICROS} µs instead of sleeping until the round
 * is due. Thread-safe.
 */
final class SyncThread implements AutoCloseable {

    /** How often the thread looks at a client clock. */
    static final long CLIENT_CLOCK_POLL_MICROS = 5_000;

    private static final Log log = Log.get(SyncThread.class);

    private final LongSupplier tick;
    private final LongSupplier nextDue;
    private final Runnable round;
    private final boolean clientClock;
    private final long joinMillis;
    private final Object lock = new Object();
    private volatile Thread thread; // written under lock
    private volatile boolean closed;

    /**
     * @param tick        the store's clock in microseconds
     * @param nextDue     when the next round is due on that clock ({@link Long#MAX_VALUE}: none)
     * @param round       runs the rounds that are due
     * @param clientClock whether {@code tick} is a client clock (polled, as it may jump)
     * @param joinMillis  how long {@link #close} waits for a round in progress
     */
    SyncThread(LongSupplier tick, LongSupplier nextDue, Runnable round, boolean clientClock, long joinMillis) {
        this.tick = tick;
        this.nextDue = nextDue;
        this.round = round;
        this.clientClock = clientClock;
        this.joinMillis = joinMillis;
    }

    /** Starts the thread unless it runs or was closed. */
    void start() {
        if (thread != null) {
            return;
        }
        synchronized (lock) {
            if (thread != null || closed) {
                return;
            }
            thread = new Thread(this::loop, "sluice-sync");
            thread.setDaemon(true);
            thread.start();
        }
    }

    private void loop() {
        while (!closed) {
            try {
                long now = tick.getAsLong();
                long next = nextDue.getAsLong();
                if (next <= now) {
                    round.run();
                    continue;
                }
                long wait = Math.min(next - now, 1_000_000);
                if (clientClock) {
                    wait = Math.min(wait, CLIENT_CLOCK_POLL_MICROS);
                }
                LockSupport.parkNanos(wait * 1_000);
            } catch (RuntimeException | Error e) {
                log.warn("sync round failed unexpectedly; the next one runs as usual", e);
                LockSupport.parkNanos(10_000_000);
            }
        }
    }

    /** Stops the thread, waiting for a round in progress at most the join bound. */
    @Override
    public void close() {
        Thread t;
        synchronized (lock) {
            closed = true;
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(joinMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether {@link #close} was called. */
    boolean closed() {
        return closed;
    }
}
