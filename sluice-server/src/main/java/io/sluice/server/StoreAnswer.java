package io.sluice.server;

import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import io.sluice.Decision;
import io.sluice.Settlement;
import java.util.Locale;

/**
 * One remote-store call's answer: its status and JSON body, a response of its own ({@code /v1/store/call}) or
 * one element of a batch's ({@link StoreBatchService}).
 *
 * <p>The bodies are the remote store's wire format, not the check API's ({@link Json}): a decision carries every
 * field, times in whole microseconds and -1 for "never", so that {@code sluice-client} rebuilds the very
 * {@link Decision} the server's store made.
 */
record StoreAnswer(HttpStatus status, String json) {

    HttpResponse response() {
        return HttpResponse.of(status, MediaType.JSON_UTF_8, json);
    }

    /** 200 with a decision. */
    static StoreAnswer of(Decision d) {
        return ok(decision(d));
    }

    /** 200 with a settlement as the remote store reads it back. */
    static StoreAnswer of(Settlement s) {
        return ok("{\"settled\":" + s.settled() + ",\"estimate\":" + s.estimate() + ",\"actual\":" + s.actual()
                + "}");
    }

    static StoreAnswer ok(String json) {
        return new StoreAnswer(HttpStatus.OK, json);
    }

    /** <code>{"error": message, "code": code}</code>, the code one of those {@link StoreService} lists. */
    static StoreAnswer error(HttpStatus status, String code, String message) {
        StringBuilder s = new StringBuilder(message.length() + 48).append("{\"error\":");
        Json.string(s, message).append(",\"code\":");
        return new StoreAnswer(status, Json.string(s, code).append('}').toString());
    }

    /** A decision with every field, times in microseconds: what the remote store rebuilds exactly. */
    static String decision(Decision d) {
        StringBuilder s = new StringBuilder(200);
        s.append("{\"allowed\":").append(d.allowed());
        s.append(",\"granted\":").append(d.granted());
        s.append(",\"remaining\":").append(d.remaining());
        s.append(",\"retry_after_us\":").append(micros(d.retryAfterMicros()));
        s.append(",\"reset_after_us\":").append(micros(d.resetAfterMicros()));
        s.append(",\"wait_us\":").append(micros(d.waitMicros()));
        s.append(",\"limit\":");
        Json.string(s, d.limit());
        s.append(",\"lease\":").append(d.lease());
        s.append(",\"source\":\"").append(d.source().name().toLowerCase(Locale.ROOT)).append('"');
        if (d.shadowRejected()) {
            s.append(",\"shadow_limit\":");
            Json.string(s, d.shadowLimit());
            s.append(",\"shadow_retry_after_us\":").append(micros(d.shadowRetryAfterMicros()));
        }
        if (d.lockedOut()) {
            s.append(",\"locked_out\":true");
        }
        return s.append('}').toString();
    }

    /** Microseconds as sent: {@link Long#MAX_VALUE} ("never") is -1. */
    private static long micros(long v) {
        return v == Long.MAX_VALUE ? -1 : v;
    }
}
