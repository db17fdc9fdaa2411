package io.sluice.redis.internal;

import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Times out the commands a store sends through a client it did not create, as its own client's
 * {@code TimeoutOptions} would: the application's client keeps the application's options (its command timeout
 * may be a minute, or off), yet the store's guarantees rest on every command being completed, and so never
 * re-sent after a reconnect, within the store's timeout (docs/redis-script-protocol.md, "Replays"). A command
 * completed here with {@link RedisCommandTimeoutException} is skipped by Lettuce if it was not written yet, and
 * its late reply is discarded if it was: exactly what Lettuce's own expiry does. Runs on the client resources'
 * timer, so it adds no thread. Thread-safe.
 */
final class CommandDeadline {

    /** For a store's own client, whose {@code TimeoutOptions} already time commands out. */
    static final CommandDeadline NONE = new CommandDeadline(null, Duration.ZERO);

    private final Timer timer;
    private final long timeoutNanos;
    private final Duration timeout;

    CommandDeadline(Timer timer, Duration timeout) {
        this.timer = timer;
        this.timeout = timeout;
        this.timeoutNanos = timeout.toNanos();
    }

    /** The command's future, completed with a timeout error if Redis has not answered within the timeout. */
    <T> CompletableFuture<T> guard(RedisFuture<T> command) {
        CompletableFuture<T> future = command.toCompletableFuture();
        if (timer == null || future.isDone()) {
            return future;
        }
        Timeout expiry = timer.newTimeout(t -> future.completeExceptionally(
                new RedisCommandTimeoutException("Command timed out after " + timeout.toMillis() + " ms")),
                timeoutNanos, TimeUnit.NANOSECONDS);
        future.whenComplete((v, e) -> expiry.cancel());
        return future;
    }
}
