package io.sluice.server;

import io.sluice.Decision;

/**
 * The server's JSON output, written by hand so that field order and number format are fixed: a decision is
 * the same bytes as a line of {@code sluice replay} output without its {@code t_ms} and {@code key}. Times are
 * milliseconds with up to three decimals and no trailing zeros ({@code 1500}, {@code 0.25}); "never" is
 * {@code null}.
 */
final class Json {

    private Json() {}

    /**
     * A decision: {@code allowed, granted, remaining, retry_after_ms, reset_after_ms, wait_ms, limit}; when a
     * concurrency limit granted one, {@code lease}; and when the store did not decide in its shared state,
     * {@code source} ({@code lease}, {@code sync}, {@code cached}, {@code fail_open}, {@code fail_closed},
     * {@code local_fallback}); when a shadow limit would have rejected the request, {@code shadow_limit} and
     * {@code shadow_retry_after_ms}; when a tier of the rule applied to the key, {@code tier}; when the rule's
     * lockout rejected it, {@code locked_out: true} (the limit is {@code lockout}, the retry-after the time left in
     * the lockout).
     */
    static StringBuilder decision(StringBuilder s, Decision d) {
        s.append("{\"allowed\":").append(d.allowed());
        s.append(",\"granted\":").append(d.granted());
        s.append(",\"remaining\":").append(d.remaining());
        s.append(",\"retry_after_ms\":");
        millis(s, d.retryAfterMicros());
        s.append(",\"reset_after_ms\":");
        millis(s, d.resetAfterMicros());
        s.append(",\"wait_ms\":");
        millis(s, d.waitMicros());
        s.append(",\"limit\":");
        string(s, d.limit());
        if (d.lease() != Decision.NO_LEASE) {
            s.append(",\"lease\":").append(d.lease());
        }
        if (d.source() != Decision.Source.STORE) {
            s.append(",\"source\":\"").append(d.source().name().toLowerCase(java.util.Locale.ROOT)).append('"');
        }
        if (d.shadowRejected()) {
            s.append(",\"shadow_limit\":");
            string(s, d.shadowLimit());
            s.append(",\"shadow_retry_after_ms\":");
            millis(s, d.shadowRetryAfterMicros());
        }
        if (d.lockedOut()) {
            s.append(",\"locked_out\":true");
        }
        if (d.tier() != null) {
            s.append(",\"tier\":");
            string(s, d.tier());
        }
        return s.append('}');
    }

    /** A request no limit applies to (an unlimited or unmatched descriptor): admitted, nothing counted. */
    static StringBuilder unlimited(StringBuilder s, long permits) {
        return s.append("{\"allowed\":true,\"granted\":").append(permits)
                .append(",\"remaining\":null,\"retry_after_ms\":0,\"reset_after_ms\":0,\"wait_ms\":0,\"limit\":null}");
    }

    /** {@code {"released":true}} or false. */
    static StringBuilder released(StringBuilder s, boolean released) {
        return s.append("{\"released\":").append(released).append('}');
    }

    /** {@code {"error":"..."}}. */
    static String error(String message) {
        return string(new StringBuilder(message.length() + 16).append("{\"error\":"), message).append('}').toString();
    }

    /** Milliseconds from microseconds; {@link Long#MAX_VALUE} ("never") is {@code null}. */
    static StringBuilder millis(StringBuilder s, long micros) {
        return micros == Long.MAX_VALUE ? s.append("null") : io.sluice.rules.Millis.append(s, micros);
    }

    /**
     * A JSON string: quotes, backslashes and control characters escaped, and unpaired surrogates too (an error
     * message may quote one from a request, and it has no UTF-8 encoding); everything else as is.
     */
    static StringBuilder string(StringBuilder s, String value) {
        if (value == null) {
            return s.append("null");
        }
        s.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                s.append('\\').append(c);
            } else if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029') {
                s.append(String.format("\\u%04x", (int) c));
            } else if (Character.isSurrogate(c) && !(Character.isHighSurrogate(c) && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1)))) {
                s.append(String.format("\\u%04x", (int) c));
            } else if (Character.isHighSurrogate(c)) {
                s.append(c).append(value.charAt(++i));
            } else {
                s.append(c);
            }
        }
        return s.append('"');
    }
}
