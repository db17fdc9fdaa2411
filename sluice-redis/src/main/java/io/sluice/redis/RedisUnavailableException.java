package io.sluice.redis;

/**
 * Redis could not decide because it was out of reach: the call timed out, the connection was refused or lost,
 * Redis answered that it cannot serve now ({@code LOADING}, {@code BUSY}, {@code CLUSTERDOWN},
 * {@code MASTERDOWN}, {@code TRYAGAIN}, {@code READONLY} after a failover, {@code OOM}), or the store's circuit
 * breaker is open and the call was refused without reaching Redis.
 *
 * <p>These are the failures a rule's {@link io.sluice.FailurePolicy} decides: with {@code fail_open},
 * {@code fail_closed} or {@code local_fallback} the caller gets a decision instead of this exception; with
 * {@code raise} (the default) it gets this exception. They are also the failures the circuit breaker counts.
 * After a timeout or a lost connection the call may still run in Redis, once at most (see
 * {@link RedisStore}).
 */
public class RedisUnavailableException extends RedisStoreException {

    public RedisUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Without a stack trace when {@code writableStackTrace} is false: for failing many calls fast. */
    protected RedisUnavailableException(String message, Throwable cause, boolean writableStackTrace) {
        super(message, cause, writableStackTrace);
    }
}
