package io.sluice.spring.boot.web;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Whether a failure of a decision is the store being out of reach (Redis, or a central {@code sluice serve}),
 * which the filters answer with 503 rather than the container's 500. Such failures reach a filter only under
 * the {@code raise} policy; the other policies decide instead. {@code sluice-redis} is optional here, so its
 * exception type is looked up by name.
 */
final class StoreUnavailable {

    private static final Class<?> UNAVAILABLE = load("io.sluice.redis.RedisUnavailableException");

    private StoreUnavailable() {}

    /** {@code e}, or what it wraps, is the store's "unavailable" failure. */
    static boolean is(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return UNAVAILABLE != null && UNAVAILABLE.isInstance(t);
    }

    /**
     * The problem+json body of the 503. It names neither the store nor its address: those are the operator's, not
     * the client's.
     */
    static String problem(String instance) {
        return RateLimitResponse.problemJson(503, "Service Unavailable",
                "the rate limit could not be decided: its store is unavailable", instance);
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name, false, StoreUnavailable.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }
}
