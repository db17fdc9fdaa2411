package io.sluice.spring.boot.web;

import io.sluice.Decision;
import io.sluice.Rule;
import io.sluice.http.RateLimitFields;
import io.sluice.spring.boot.RateLimitExceededException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/**
 * What an HTTP response says about a decision, the same for the servlet filter, the WebFlux filter and the
 * handlers of {@link io.sluice.spring.boot.RateLimitExceededException}: the header fields, and for a rejection
 * the 429's RFC 9457 problem details.
 *
 * <pre>
 * HTTP/1.1 429
 * Retry-After: 3
 * RateLimit-Policy: "per_minute";q=5;w=60
 * RateLimit: "per_minute";r=0;t=3
 * Content-Type: application/problem+json
 *
 * {"type":"about:blank","title":"Too Many Requests","status":429,
 *  "detail":"Rate limit 'per_minute' of rule 'login' exceeded; retry after 3 s",
 *  "instance":"/login","rule":"login","limit":"per_minute","retry_after":3}
 * </pre>
 *
 * <p>{@code Retry-After} and the problem's {@code retry_after} are whole seconds rounded up, and left out when no
 * amount of waiting would let the request pass. Stateless.
 */
public final class RateLimitResponse {

    /** 429 Too Many Requests (RFC 6585). */
    public static final int STATUS = 429;
    /** The problem body's media type (RFC 9457). */
    public static final String PROBLEM_JSON = "application/problem+json";

    private RateLimitResponse() {}

    /**
     * The header fields for {@code decision} under {@code rule}, in writing order: {@code Retry-After} (rejections
     * only), {@code RateLimit-Policy} (when a limit of the rule has a policy to advertise), {@code RateLimit}.
     */
    public static Map<String, String> headers(Rule rule, Decision decision) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (!decision.allowed() && decision.retryAfterMicros() != Long.MAX_VALUE) {
            headers.put("Retry-After", Long.toString(decision.retryAfterSeconds()));
        }
        String policy = RateLimitFields.policyField(rule);
        if (policy != null) {
            headers.put("RateLimit-Policy", policy);
        }
        headers.put("RateLimit", RateLimitFields.rateLimitField(decision, rule));
        return headers;
    }

    /** The problem+json body of a 429 for {@code decision}; {@code instance} is the request path, or null. */
    public static String problem(Rule rule, Decision decision, String instance) {
        boolean finite = decision.retryAfterMicros() != Long.MAX_VALUE;
        String detail = "Rate limit '" + decision.limit() + "' of rule '" + rule.name() + "' exceeded"
                + (finite ? "; retry after " + decision.retryAfterSeconds() + " s" : "");
        StringBuilder s = new StringBuilder(256).append("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\"")
                .append(",\"status\":").append(STATUS)
                .append(",\"detail\":");
        string(s, detail);
        if (instance != null) {
            s.append(",\"instance\":");
            string(s, instance);
        }
        s.append(",\"rule\":");
        string(s, rule.name());
        s.append(",\"limit\":");
        string(s, decision.limit());
        if (finite) {
            s.append(",\"retry_after\":").append(decision.retryAfterSeconds());
        }
        return s.append('}').toString();
    }

    /** The whole 429 for a {@link RateLimitExceededException}, as exception handlers return it. */
    public static ResponseEntity<String> entity(RateLimitExceededException e, String instance) {
        HttpHeaders headers = new HttpHeaders();
        headers(e.rule(), e.decision()).forEach(headers::set);
        headers.setContentType(MediaType.parseMediaType(PROBLEM_JSON));
        return ResponseEntity.status(STATUS).headers(headers).body(problem(e.rule(), e.decision(), instance));
    }

    /** The problem+json body of a 400 for a request whose key or cost cannot be used. */
    public static String badRequest(String detail, String instance) {
        return problemJson(400, "Bad Request", detail, instance);
    }

    /** An RFC 9457 body of {@code about:blank} type: status, title, detail and the request's path. */
    static String problemJson(int status, String title, String detail, String instance) {
        StringBuilder s = new StringBuilder(160).append("{\"type\":\"about:blank\",\"title\":");
        string(s, title);
        s.append(",\"status\":").append(status).append(",\"detail\":");
        string(s, detail);
        if (instance != null) {
            s.append(",\"instance\":");
            string(s, instance);
        }
        return s.append('}').toString();
    }

    /** A JSON string (RFC 8259): quotes, backslashes and control characters escaped. */
    private static void string(StringBuilder s, String value) {
        s.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> s.append("\\\"");
                case '\\' -> s.append("\\\\");
                case '\n' -> s.append("\\n");
                case '\r' -> s.append("\\r");
                case '\t' -> s.append("\\t");
                default -> {
                    if (c < 0x20) {
                        s.append(String.format("\\u%04x", (int) c));
                    } else {
                        s.append(c);
                    }
                }
            }
        }
        s.append('"');
    }
}
