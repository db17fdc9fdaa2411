package io.sluice.server;

/**
 * A request the server refuses before anything is charged: malformed JSON, an unknown field, a value of the
 * wrong type or out of range, too large. The message names the field (as a path, e.g. {@code checks[2].permits})
 * and the problem; it becomes the body of a 400 or the description of gRPC {@code INVALID_ARGUMENT}.
 */
final class InvalidRequestException extends Exception {

    private static final long serialVersionUID = 1L;

    InvalidRequestException(String message) {
        super(message, null, false, false);
    }

    /** {@code path: problem}, or just the problem for the request as a whole. */
    static InvalidRequestException at(String path, String problem) {
        return new InvalidRequestException(path.isEmpty() ? problem : path + ": " + problem);
    }
}
