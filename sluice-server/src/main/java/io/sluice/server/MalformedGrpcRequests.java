package io.sluice.server;

import com.google.protobuf.InvalidProtocolBufferException;
import com.linecorp.armeria.common.RequestContext;
import com.linecorp.armeria.common.grpc.GrpcExceptionHandlerFunction;
import io.grpc.Metadata;
import io.grpc.Status;

/**
 * Bytes that never become a request — a frame header that is not one, a message that is not a
 * {@code RateLimitRequest}, a compressed message that does not decompress — are the client's fault like any
 * other invalid input, so they are {@code INVALID_ARGUMENT} with a message saying what was wrong, rather than
 * the {@code INTERNAL} or {@code UNKNOWN} the gRPC layers report for them; a message over the size limit is
 * {@code RESOURCE_EXHAUSTED} naming the limit. Nothing reached the service, so nothing was charged. Every
 * other status passes through. ({@link GrpcFraming} refuses most malformed framing before this is needed.)
 */
final class MalformedGrpcRequests implements GrpcExceptionHandlerFunction {

    private final int maxBodyBytes;

    MalformedGrpcRequests(int maxBodyBytes) {
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    public Status apply(RequestContext ctx, Status status, Throwable cause, Metadata metadata) {
        InvalidProtocolBufferException invalid = find(cause, InvalidProtocolBufferException.class);
        if (invalid == null && status.getCause() instanceof InvalidProtocolBufferException i) {
            invalid = i;
        }
        if (invalid != null) {
            return Status.INVALID_ARGUMENT.withDescription("malformed request: not a RateLimitRequest ("
                    + firstLine(invalid.getMessage()) + ")");
        }
        String description = status.getDescription() == null ? "" : status.getDescription();
        if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED && description.contains("exceeds maximum")
                || find(cause, com.linecorp.armeria.common.ContentTooLargeException.class) != null) {
            return GrpcFraming.tooLarge(maxBodyBytes);
        }
        java.util.zip.ZipException zip = find(cause, java.util.zip.ZipException.class);
        if (zip != null || description.toLowerCase(java.util.Locale.ROOT).contains("decompress")) {
            return Status.INVALID_ARGUMENT.withDescription("malformed request: the compressed message does not"
                    + " decompress (" + (zip != null ? zip.getMessage() : description) + ")");
        }
        if (description.contains("Deframer") || fromDeframer(cause)) {
            return Status.INVALID_ARGUMENT.withDescription("malformed gRPC frame"
                    + (description.isEmpty() ? "" : ": " + description.substring(description.lastIndexOf(':') + 1)
                    .strip()));
        }
        return status;
    }

    private static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    /** Armeria's deframer fails with a bare runtime exception on a body shorter than a frame header. */
    private static boolean fromDeframer(Throwable cause) {
        if (!(cause instanceof IndexOutOfBoundsException)) {
            return false;
        }
        for (StackTraceElement e : cause.getStackTrace()) {
            if (e.getClassName().endsWith("MessageDeframer")) {
                return true;
            }
        }
        return false;
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable";
        }
        int end = message.indexOf('.');
        return (end > 0 ? message.substring(0, end) : message).strip();
    }
}
