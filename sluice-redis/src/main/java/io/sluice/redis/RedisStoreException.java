package io.sluice.redis;

/**
 * Redis could not decide: it is unreachable, did not answer within the store's timeout, or answered with an
 * error. The message says which. After a timeout or a lost connection the decision may or may not have been
 * charged in Redis; it is never charged twice (see {@link RedisStore}).
 *
 * <p>When Redis could not be reached or did not answer (as opposed to answering with an error) the exception is
 * a {@link RedisUnavailableException}; only that kind is decided by a rule's {@link io.sluice.FailurePolicy}
 * other than {@code raise}. Any other failure (a script error, a bug) always surfaces as an exception.
 */
public class RedisStoreException extends RuntimeException {

    public RedisStoreException(String message, Throwable cause) {
        super(message, cause);
    }

    public RedisStoreException(String message) {
        super(message);
    }

    /**
     * For subclasses that fail many calls at local speed (an open circuit breaker): without a stack trace and
     * without suppression when {@code writableStackTrace} is false.
     */
    protected RedisStoreException(String message, Throwable cause, boolean writableStackTrace) {
        super(message, cause, writableStackTrace, writableStackTrace);
    }
}
