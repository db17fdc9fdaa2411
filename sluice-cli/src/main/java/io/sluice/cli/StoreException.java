package io.sluice.cli;

/**
 * The store failed (unreachable, no answer in time, an error) or cannot replay this trace faithfully: exit
 * code 2, like any other unavailable store. The message says what happened and, during the replay, at which
 * trace line.
 */
final class StoreException extends Exception {

    private static final long serialVersionUID = 1L;

    StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
