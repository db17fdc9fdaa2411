package io.sluice;

import java.util.concurrent.TimeUnit;

/**
 * How {@link RateLimiter#acquire} waits. The default sleeps the calling thread; tests inject one that
 * advances a manual clock instead, so waits are asserted exactly and run instantly.
 */
@FunctionalInterface
public interface Sleeper {

    /**
     * Waits {@code micros} microseconds (nothing when {@code micros <= 0}).
     *
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    void sleepMicros(long micros) throws InterruptedException;

    /** Sleeps the calling thread with {@link TimeUnit#sleep}; honours interruption. */
    static Sleeper system() {
        return micros -> {
            if (micros > 0) {
                TimeUnit.MICROSECONDS.sleep(micros);
            }
        };
    }
}
