package io.sluice.spring.boot.web;

/** A request whose rate-limit key or cost cannot be used; the filters answer it with 400 and this message. */
final class InvalidRequestException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    InvalidRequestException(String message) {
        super(message, null, false, false);
    }
}
