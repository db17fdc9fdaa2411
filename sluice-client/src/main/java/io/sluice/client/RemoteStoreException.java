package io.sluice.client;

import io.sluice.redis.RedisStoreException;

/**
 * {@code sluice serve} answered a call with an error that is not an outage: it refused the request (a 400
 * naming the field, a 401 without the right token) or its store failed (a script error). Never decided by a
 * failure policy. The message is the server's.
 */
public class RemoteStoreException extends RedisStoreException {

    public RemoteStoreException(String message) {
        super(message);
    }
}
