package io.sluice.client;

import io.sluice.redis.RedisUnavailableException;

/**
 * {@code sluice serve} could not decide: it was unreachable, did not answer within the remote store's timeout,
 * answered that its own store is unavailable, or the remote store's circuit breaker is open. These are the
 * failures a rule's {@link io.sluice.FailurePolicy} decides and the breaker counts, as for the Redis store
 * (whose breaker and policies the remote store shares, hence the superclass).
 */
public class RemoteUnavailableException extends RedisUnavailableException {

    public RemoteUnavailableException(String message, Throwable cause) {
        super(message, cause, false);
    }
}
