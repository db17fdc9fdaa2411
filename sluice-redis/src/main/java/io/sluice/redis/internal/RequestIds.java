package io.sluice.redis.internal;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Unique ids for script calls: 128 random bits chosen per store, then a counter. Another store (or another
 * process) never produces the same id, and one store never repeats one. Thread-safe.
 */
final class RequestIds {

    private final String storeId;
    private final AtomicLong counter = new AtomicLong();

    RequestIds() {
        byte[] bytes = new byte[16];
        new SecureRandom().nextBytes(bytes);
        this.storeId = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The next id, e.g. {@code q3VbA9...Xw.1k}. */
    String next() {
        return storeId + "." + Long.toString(counter.incrementAndGet(), 36);
    }
}
