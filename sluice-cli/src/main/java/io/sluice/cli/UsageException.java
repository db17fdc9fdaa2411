package io.sluice.cli;

/** The command line is wrong (unknown option, missing argument, unreadable file): exit code 2. */
final class UsageException extends Exception {

    private static final long serialVersionUID = 1L;

    UsageException(String message) {
        super(message);
    }
}
