package io.sluice.server;

import com.linecorp.armeria.common.ContentTooLargeException;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import io.netty.util.AsciiString;
import java.util.concurrent.CompletionException;

/** JSON error responses, the same shape everywhere: <code>{"error": "what went wrong"}</code>. */
final class HttpResponses {

    /**
     * The names of the IETF rate-limit header fields and {@code Retry-After}, made once: a name given as a
     * {@code String} is converted and looked up again for every response.
     */
    static final AsciiString RATELIMIT_POLICY = HttpHeaderNames.of("ratelimit-policy");
    static final AsciiString RATELIMIT = HttpHeaderNames.of("ratelimit");
    static final AsciiString RETRY_AFTER = HttpHeaderNames.RETRY_AFTER;

    private HttpResponses() {}

    static HttpResponse error(HttpStatus status, String message) {
        return HttpResponse.of(status, MediaType.JSON_UTF_8, Json.error(message));
    }

    /**
     * The response for a request whose body could not be read: too large is the client's problem, 413 Content
     * Too Large (RFC 9110 section 15.5.14) naming the limit; anything else is the server's (500).
     */
    static HttpResponse unreadable(Throwable e, int maxBodyBytes) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof ContentTooLargeException) {
            return error(HttpStatus.REQUEST_ENTITY_TOO_LARGE, tooLarge(maxBodyBytes));
        }
        return error(HttpStatus.INTERNAL_SERVER_ERROR, "the request could not be read: " + cause);
    }

    static String tooLarge(int maxBodyBytes) {
        return "request body too large: the limit is " + maxBodyBytes + " bytes";
    }
}
