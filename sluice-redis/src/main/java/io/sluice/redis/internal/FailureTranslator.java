package io.sluice.redis.internal;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.sluice.redis.RedisStoreException;
import io.sluice.redis.RedisUnavailableException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Turns the Redis client's failures into the store's exceptions, naming the Redis they came from: a
 * {@link RedisUnavailableException} when Redis was out of reach or cannot serve now (what the circuit breaker
 * counts and the failure policies decide), a plain {@link RedisStoreException} when Redis answered with an error.
 * Also waits for store futures within the store's backstop bound. {@link RedisFailures} sorts the failures; this
 * class words them. Stateless after construction, so thread-safe.
 */
final class FailureTranslator {

    private final String where;
    private final Duration timeout;
    private final Duration awaitBound;

    /**
     * @param where      the Redis the store talks to, as error messages name it
     * @param timeout    the command timeout, as messages report it
     * @param awaitBound how long {@link #await} waits at most
     */
    FailureTranslator(String where, Duration timeout, Duration awaitBound) {
        this.where = where;
        this.timeout = timeout;
        this.awaitBound = awaitBound;
    }

    /** The Redis the store talks to, for messages. */
    String where() {
        return where;
    }

    /**
     * Passes a value through, or throws {@code error} as the store's exception. An error reply that is not an
     * outage is reported as a failure of {@code script}, its Lua line mapped back to the file it came from.
     */
    <T> T translate(T value, Throwable error, SluiceScript script, String scriptName) {
        if (error == null) {
            return value;
        }
        Throwable cause = RedisFailures.unwrap(error);
        if (cause instanceof RedisStoreException e) {
            throw e;
        }
        if (cause instanceof RedisCommandTimeoutException) {
            throw new RedisUnavailableException("Redis at " + where + " did not answer within " + timeout
                    + "; the request may or may not have been charged", cause);
        }
        if (cause instanceof RedisCommandExecutionException && RedisFailures.unavailableReply(cause.getMessage())) {
            throw new RedisUnavailableException("Redis at " + where + " cannot serve now: " + cause.getMessage(), cause);
        }
        if (cause instanceof RedisCommandExecutionException) {
            throw new RedisStoreException("Redis at " + where + " failed the " + scriptName + ": "
                    + script.explain(cause.getMessage()), cause);
        }
        if (cause instanceof IllegalArgumentException || cause instanceof IllegalStateException) {
            throw (RuntimeException) cause;
        }
        if (RedisFailures.unavailable(cause)) {
            throw new RedisUnavailableException("Redis at " + where + " is unavailable: " + cause, cause);
        }
        throw new RedisStoreException("Redis at " + where + " failed: " + cause, cause);
    }

    /** {@link #translate} for calls that run no script (DEL of reset, SCRIPT LOAD). */
    <T> T translate(T value, Throwable error) {
        return translate(value, error, SluiceScript.get(), "Sluice script");
    }

    /**
     * Waits for a store future: Lettuce completes it within the timeout (and a timer tick); the await bound
     * bounds the wait for calls that chain commands.
     */
    <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(awaitBound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = RedisFailures.unwrap(e);
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new RedisStoreException("Redis at " + where + " failed: " + cause, cause);
        } catch (TimeoutException e) {
            throw new RedisUnavailableException("Redis at " + where + " did not answer within " + timeout
                    + " (the wait gave up after " + awaitBound + "); the request may or may not have been "
                    + "charged", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisStoreException("interrupted while waiting for Redis at " + where, e);
        }
    }
}
