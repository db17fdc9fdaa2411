package io.sluice.redis;

/**
 * Redis could not decide: it is unreachable, did not answer within the store's timeout, or answered with an
 * error. The message says which. After a timeout or a lost connection the decision may or may not have been
 * charged in Redis; it is never charged twice (see {@link RedisStore}).
 *
 * <p>The store never turns this into an "allowed" or "rejected" decision on its own: what to do when Redis is
 * down is the caller's policy.
 */
public class RedisStoreException extends RuntimeException {

    public RedisStoreException(String message, Throwable cause) {
        super(message, cause);
    }

    public RedisStoreException(String message) {
        super(message);
    }
}
