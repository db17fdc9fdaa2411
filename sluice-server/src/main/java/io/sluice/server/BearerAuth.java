package io.sluice.server;

import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.DecoratingHttpServiceFunction;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Optional bearer-token authentication ({@code Authorization: Bearer TOKEN}, RFC 6750) for the HTTP APIs and
 * gRPC metadata alike. The token is compared by the SHA-256 of both sides with {@link MessageDigest#isEqual},
 * so neither its content nor its length leaks through timing. A refused HTTP request gets 401 with
 * {@code WWW-Authenticate: Bearer}; a refused gRPC call {@code UNAUTHENTICATED}. Liveness and readiness
 * ({@code /health}, {@code /ready}) stay open for probes; everything that decides, lists rules, exposes
 * metrics or reads and resets keys ({@code /v1/admin/*}) is behind the token.
 */
final class BearerAuth {

    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final byte[] expected;
    private final ServerMetrics metrics;

    BearerAuth(String token, ServerMetrics metrics) {
        this.expected = sha256("Bearer " + token);
        this.metrics = metrics;
    }

    /**
     * What makes {@code token} unusable as a bearer token, or null: it must be one or more visible ASCII
     * characters (U+0021 to U+007E; RFC 6750's b64token is a subset). A space, a newline or another control
     * character, or any non-ASCII character, could not be sent in an {@code Authorization} header or gRPC
     * ASCII metadata as {@link #accepts} compares it, so nobody could authenticate.
     */
    static String tokenProblem(String token) {
        if (token.isEmpty()) {
            return "must not be empty";
        }
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                return "must be visible ASCII characters without spaces (found "
                        + (c == '\n' ? "a newline" : c == ' ' ? "a space" : c < 0x20 || c == 0x7f
                        ? "a control character" : "a non-ASCII character")
                        + String.format(" U+%04X at index %d)", (int) c, i);
            }
        }
        return null;
    }

    /** Whether an {@code Authorization} header value carries the token. */
    boolean accepts(String authorization) {
        if (authorization == null) {
            return false;
        }
        // The scheme is case-insensitive (RFC 9110 section 11.1); the token is not.
        String normalized = authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                ? "Bearer " + authorization.substring(7).strip() : authorization;
        return MessageDigest.isEqual(expected, sha256(normalized));
    }

    /** A decorator that lets only requests with the token through to the service. */
    DecoratingHttpServiceFunction http(String api) {
        return (delegate, ctx, req) -> {
            if (accepts(req.headers().get(HttpHeaderNames.AUTHORIZATION))) {
                return delegate.serve(ctx, req);
            }
            metrics.unauthorized(api);
            return HttpResponse.of(ResponseHeaders.builder(HttpStatus.UNAUTHORIZED)
                            .contentType(MediaType.JSON_UTF_8)
                            .add(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"sluice\"")
                            .build(),
                    com.linecorp.armeria.common.HttpData.ofUtf8(Json.error(
                            "missing or wrong bearer token: send Authorization: Bearer TOKEN")));
        };
    }

    /** A gRPC interceptor that closes calls without the token with UNAUTHENTICATED. */
    ServerInterceptor grpc() {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                               ServerCallHandler<Q, R> next) {
                if (accepts(headers.get(AUTHORIZATION))) {
                    return next.startCall(call, headers);
                }
                metrics.unauthorized("grpc");
                call.close(Status.UNAUTHENTICATED.withDescription("missing or wrong bearer token: send metadata"
                        + " authorization: Bearer TOKEN"), new Metadata());
                return new ServerCall.Listener<>() {};
            }
        };
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
