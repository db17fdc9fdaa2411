package io.sluice.redis.internal;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisException;
import io.sluice.redis.RedisStoreException;
import io.sluice.redis.RedisUnavailableException;
import java.io.IOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * Sorts the failures of Redis calls into the three kinds the circuit breaker and the failure policies need:
 * Redis was out of reach, Redis answered (if only with an error), or the call never got that far.
 */
final class RedisFailures {

    /** How a call ended, as far as Redis's availability is concerned. */
    enum Outcome {
        /** Redis answered: a reply, or an error reply such as a script error. Proof that Redis is there. */
        ANSWERED,
        /** Redis was out of reach or said it cannot serve now: what opens the breaker and what policies decide. */
        UNAVAILABLE,
        /** The call failed before reaching Redis (bad input, a closed store, a bug): says nothing about Redis. */
        NEUTRAL
    }

    /**
     * Error replies by which Redis says it cannot serve now rather than that the call is wrong: still loading
     * its data set, busy in a script, a cluster or replica set without a usable master, a replica after a
     * failover, out of memory.
     */
    private static final String[] UNAVAILABLE_REPLIES = {"LOADING", "BUSY", "CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN",
            "READONLY", "NOREPLICAS", "OOM"};

    private RedisFailures() {}

    /** The failure inside completion wrappers. */
    static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** How a call that ended with {@code error} (null: success) ended. */
    static Outcome outcome(Throwable error) {
        if (error == null) {
            return Outcome.ANSWERED;
        }
        Throwable t = unwrap(error);
        if (t instanceof RedisUnavailableException) {
            return Outcome.UNAVAILABLE;
        }
        if (t instanceof RedisStoreException && t.getCause() != null) {
            t = unwrap(t.getCause());
        }
        if (t instanceof RedisCommandExecutionException e) {
            return unavailableReply(e.getMessage()) ? Outcome.UNAVAILABLE : Outcome.ANSWERED;
        }
        if (t instanceof RedisCommandInterruptedException) {
            return Outcome.NEUTRAL;
        }
        if (t instanceof RedisException || t instanceof IOException || t instanceof TimeoutException) {
            // Lettuce's timeouts, refused or lost connections ("Connection closed", "Currently not connected"),
            // a full request queue; socket errors; a wait that gave up.
            return Outcome.UNAVAILABLE;
        }
        return Outcome.NEUTRAL;
    }

    /** Whether {@code error} means Redis was out of reach: the failures a policy decides. */
    static boolean unavailable(Throwable error) {
        return error != null && outcome(error) == Outcome.UNAVAILABLE;
    }

    /** Whether an error reply says Redis cannot serve now (see {@link #UNAVAILABLE_REPLIES}). */
    static boolean unavailableReply(String message) {
        if (message == null) {
            return false;
        }
        for (String prefix : UNAVAILABLE_REPLIES) {
            if (message.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }
}
