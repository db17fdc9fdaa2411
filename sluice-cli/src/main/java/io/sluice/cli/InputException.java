package io.sluice.cli;

/**
 * A rules file or trace that cannot be replayed: exit code 1. The message already says where, in the form
 * {@code FILE:LINE: FIELD: PROBLEM}.
 */
final class InputException extends Exception {

    private static final long serialVersionUID = 1L;

    InputException(String message) {
        super(message);
    }

    /** An error on one line of {@code source} about {@code field} (empty for the line as a whole). */
    static InputException at(String source, int line, String field, String problem) {
        return new InputException(source + ":" + line + ": " + (field.isEmpty() ? "" : field + ": ") + problem);
    }
}
