package io.sluice.server;

import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.ContentTooLargeException;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.common.util.SafeCloseable;
import com.linecorp.armeria.server.DecoratingHttpServiceFunction;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.grpc.Status;
import java.util.concurrent.CompletionException;

/**
 * Checks the framing of a gRPC request before the gRPC layer reads it. Every method the server offers takes
 * one request message, so the body must be exactly one length-prefixed message: a compressed flag of 0 or 1,
 * a 4-byte length, and that many bytes, no more and no less. Armeria's unary handling reads the first message
 * and ignores what follows (a call carrying two messages was answered OK), and reports some malformed bodies
 * as {@code UNKNOWN}; here they are {@code INVALID_ARGUMENT} saying what is wrong, and a message longer than
 * the limit is {@code RESOURCE_EXHAUSTED} naming it. The request is refused before any service sees it, so
 * nothing is charged. What passes is handed on unchanged.
 */
final class GrpcFraming implements DecoratingHttpServiceFunction {

    private static final int HEADER = 5;

    private final int maxMessageBytes;

    GrpcFraming(int maxMessageBytes) {
        this.maxMessageBytes = maxMessageBytes;
    }

    @Override
    public HttpResponse serve(HttpService delegate, ServiceRequestContext ctx, HttpRequest req) {
        return HttpResponse.of(req.aggregate().handle((body, error) -> {
            if (error != null) {
                Throwable cause = error instanceof CompletionException && error.getCause() != null
                        ? error.getCause() : error;
                if (cause instanceof ContentTooLargeException) {
                    return refuse(tooLarge(maxMessageBytes));
                }
                return HttpResponse.ofFailure(cause);
            }
            Status problem = problem(body.content().array(), maxMessageBytes);
            if (problem != null) {
                return refuse(problem);
            }
            try (SafeCloseable ignored = ctx.push()) {
                return delegate.serve(ctx, HttpRequest.of(body.headers(), body.content(), body.trailers()));
            } catch (Exception e) {
                return HttpResponse.ofFailure(e);
            }
        }));
    }

    /** What is wrong with {@code body} as a unary gRPC request, or null when it is one well-framed message. */
    static Status problem(byte[] body, int maxMessageBytes) {
        if (body.length < HEADER) {
            return Status.INVALID_ARGUMENT.withDescription("malformed gRPC request: " + body.length + " bytes is"
                    + " shorter than a message header (5 bytes); a call carries exactly one message");
        }
        int flag = body[0] & 0xff;
        if (flag > 1) {
            return Status.INVALID_ARGUMENT.withDescription("malformed gRPC request: compressed flag " + flag
                    + "; expected 0 or 1");
        }
        long length = ((body[1] & 0xffL) << 24) | ((body[2] & 0xff) << 16) | ((body[3] & 0xff) << 8)
                | (body[4] & 0xff);
        long end = HEADER + length;
        // A length the body does not hold is malformed, however large; too large is a message that is there.
        if (end > body.length) {
            return Status.INVALID_ARGUMENT.withDescription("malformed gRPC request: the message header says "
                    + length + " bytes but " + (body.length - HEADER) + " follow");
        }
        if (length > maxMessageBytes) {
            return tooLarge(maxMessageBytes);
        }
        if (end < body.length) {
            return Status.INVALID_ARGUMENT.withDescription("malformed gRPC request: a call carries exactly one"
                    + " message; " + (body.length - end) + " bytes follow the first");
        }
        return null;
    }

    static Status tooLarge(int maxMessageBytes) {
        return Status.RESOURCE_EXHAUSTED.withDescription("request too large: the limit is " + maxMessageBytes
                + " bytes");
    }

    /** A trailers-only gRPC response: HTTP 200, the status in the headers (the gRPC over HTTP/2 protocol). */
    static HttpResponse refuse(Status status) {
        return aggregated(status).toHttpResponse();
    }

    static AggregatedHttpResponse aggregated(Status status) {
        return AggregatedHttpResponse.of(ResponseHeaders.builder(HttpStatus.OK)
                .contentType(MediaType.parse("application/grpc+proto"))
                .add("grpc-status", String.valueOf(status.getCode().value()))
                .add("grpc-message", percentEncode(status.getDescription()))
                .endOfStream(true)
                .build());
    }

    /** grpc-message is percent-encoded UTF-8 (gRPC over HTTP/2), so any description survives the header. */
    static String percentEncode(String text) {
        StringBuilder s = new StringBuilder(text.length());
        for (byte b : text.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c >= 0x20 && c < 0x7f && c != '%') {
                s.append((char) c);
            } else {
                s.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return s.toString();
    }
}
