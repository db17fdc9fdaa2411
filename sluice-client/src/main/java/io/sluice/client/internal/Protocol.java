package io.sluice.client.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Settlement;
import io.sluice.client.RemoteStoreException;
import java.io.IOException;
import java.util.Locale;

/**
 * The JSON of {@code sluice serve}'s remote store protocol ({@code POST /v1/store/call}), written and read by
 * hand: a call is a few short fields, and a decision is read field by field into a {@link Decision} without
 * a tree. Times are whole microseconds; -1 means "never" (and "no lease").
 */
final class Protocol {

    private static final JsonFactory JSON = new JsonFactory();

    private Protocol() {}

    static String call(String rule, String fingerprint, String key, Request request, Long now) {
        return tail(request(head(rule, fingerprint, key, opName(request)), request), now);
    }

    /**
     * A call over several targets, all or nothing: {@code targets} of <code>{"rule", "fingerprint", "key"}</code>
     * in place of the single call's three fields.
     */
    static String together(java.util.List<String[]> targets, Request request, Long now) {
        StringBuilder s = new StringBuilder(64 + 96 * targets.size()).append("{\"targets\":[");
        for (int i = 0; i < targets.size(); i++) {
            String[] t = targets.get(i);
            string(s.append(i == 0 ? "{\"rule\":" : ",{\"rule\":"), t[0]);
            s.append(",\"fingerprint\":\"").append(t[1]).append('"');
            string(s.append(",\"key\":"), t[2]);
            s.append('}');
        }
        s.append("],\"op\":\"").append(opName(request)).append('"');
        return tail(request(s, request), now);
    }

    private static String opName(Request request) {
        return switch (request.op()) {
            case TRY -> "try";
            case TRY_AT_MOST -> "try_at_most";
            case RESERVE -> "reserve";
            case PEEK -> "peek";
        };
    }

    private static StringBuilder request(StringBuilder s, Request request) {
        s.append(",\"permits\":").append(request.permits());
        if (request.op() == Request.Op.RESERVE) {
            s.append(",\"max_wait_us\":").append(request.maxWaitMicros() == Long.MAX_VALUE ? -1
                    : request.maxWaitMicros());
        }
        return s;
    }

    static String release(String rule, String fingerprint, String key, long lease, Long now) {
        return tail(head(rule, fingerprint, key, "release").append(",\"lease\":").append(lease), now);
    }

    /**
     * An estimated charge ({@code Store.charge}): the estimate, the ticket id (1 to 64 characters of
     * {@code [A-Za-z0-9_-]}, so written without escaping) and the ticket's lifetime in microseconds.
     */
    static String charge(String rule, String fingerprint, String key, long estimate, String ticketId,
                         long lifetimeMicros, Long now) {
        return tail(head(rule, fingerprint, key, "charge").append(",\"estimate\":").append(estimate)
                .append(",\"ticket\":\"").append(ticketId).append("\",\"lifetime_us\":").append(lifetimeMicros), now);
    }

    /** The settlement of a ticket at its actual cost ({@code Store.settle}). */
    static String settle(String rule, String fingerprint, String key, String ticketId, long actual, Long now) {
        return tail(head(rule, fingerprint, key, "settle").append(",\"ticket\":\"").append(ticketId)
                .append("\",\"actual\":").append(actual), now);
    }

    static String reset(String rule, String fingerprint, String key, Long now) {
        return tail(head(rule, fingerprint, key, "reset"), now);
    }

    private static StringBuilder head(String rule, String fingerprint, String key, String op) {
        StringBuilder s = new StringBuilder(96 + rule.length() + key.length());
        string(s.append("{\"rule\":"), rule);
        s.append(",\"fingerprint\":\"").append(fingerprint).append('"');
        string(s.append(",\"key\":"), key);
        return s.append(",\"op\":\"").append(op).append('"');
    }

    private static String tail(StringBuilder s, Long now) {
        if (now != null) {
            s.append(",\"now_us\":").append(now.longValue());
        }
        return s.append('}').toString();
    }

    /** A decision as the server writes it. */
    static Decision decision(byte[] body) {
        boolean allowed = false;
        long granted = 0;
        long remaining = 0;
        long retryAfter = 0;
        long resetAfter = 0;
        long wait = 0;
        String limit = null;
        long lease = Decision.NO_LEASE;
        Decision.Source source = Decision.Source.STORE;
        String shadowLimit = null;
        long shadowRetryAfter = 0;
        boolean lockedOut = false;
        try (JsonParser p = JSON.createParser(body)) {
            expect(p.nextToken() == JsonToken.START_OBJECT, body);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                switch (field) {
                    case "allowed" -> allowed = value == JsonToken.VALUE_TRUE;
                    case "granted" -> granted = p.getLongValue();
                    case "remaining" -> remaining = p.getLongValue();
                    case "retry_after_us" -> retryAfter = micros(p.getLongValue());
                    case "reset_after_us" -> resetAfter = micros(p.getLongValue());
                    case "wait_us" -> wait = micros(p.getLongValue());
                    case "limit" -> limit = p.getText();
                    case "lease" -> lease = p.getLongValue();
                    case "source" -> source = Decision.Source.valueOf(p.getText().toUpperCase(Locale.ROOT));
                    case "shadow_limit" -> shadowLimit = p.getText();
                    case "shadow_retry_after_us" -> shadowRetryAfter = micros(p.getLongValue());
                    case "locked_out" -> lockedOut = value == JsonToken.VALUE_TRUE;
                    default -> p.skipChildren();
                }
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new RemoteStoreException("unreadable decision from the server: " + e.getMessage() + ": "
                    + new String(body, java.nio.charset.StandardCharsets.UTF_8));
        }
        expect(limit != null, body);
        if (lockedOut) {
            return Decision.lockout(retryAfter, source);
        }
        return new Decision(allowed, granted, remaining, retryAfter, resetAfter, wait, limit, lease, source,
                shadowLimit, shadowRetryAfter);
    }

    /** <code>{"settled": bool, "estimate": n, "actual": n}</code>, as the server writes a {@link Settlement}. */
    static Settlement settlement(byte[] body) {
        boolean settled = false;
        long estimate = -1;
        long actual = -1;
        try (JsonParser p = JSON.createParser(body)) {
            expect(p.nextToken() == JsonToken.START_OBJECT, body);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                switch (field) {
                    case "settled" -> settled = value == JsonToken.VALUE_TRUE;
                    case "estimate" -> estimate = p.getLongValue();
                    case "actual" -> actual = p.getLongValue();
                    default -> p.skipChildren();
                }
            }
        } catch (IOException e) {
            throw new RemoteStoreException("unreadable settlement from the server: " + e.getMessage());
        }
        if (estimate < 0 || actual < 0) {
            throw new RemoteStoreException("unreadable settlement from the server: "
                    + new String(body, java.nio.charset.StandardCharsets.UTF_8));
        }
        return settled ? new Settlement(true, estimate, actual) : Settlement.unknown();
    }

    /** {@code {"released": bool}}. */
    static boolean released(byte[] body) {
        return booleanField(body, "released");
    }

    /** The {@code error} of an error body, or the body itself when it has none. */
    static String errorMessage(String body) {
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String field = p.currentName();
                    p.nextToken();
                    if (field.equals("error")) {
                        return p.getText();
                    }
                    p.skipChildren();
                }
            }
        } catch (IOException e) {
            // Not JSON: the body says what it says.
        }
        return body.isEmpty() ? "(no body)" : body;
    }

    private static boolean booleanField(byte[] body, String name) {
        try (JsonParser p = JSON.createParser(body)) {
            expect(p.nextToken() == JsonToken.START_OBJECT, body);
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (field.equals(name)) {
                    return value == JsonToken.VALUE_TRUE;
                }
                p.skipChildren();
            }
        } catch (IOException e) {
            throw new RemoteStoreException("unreadable answer from the server: " + e.getMessage());
        }
        throw new RemoteStoreException("the server's answer has no '" + name + "': "
                + new String(body, java.nio.charset.StandardCharsets.UTF_8));
    }

    private static long micros(long v) {
        return v == -1 ? Long.MAX_VALUE : v;
    }

    private static void expect(boolean ok, byte[] body) {
        if (!ok) {
            throw new RemoteStoreException("unreadable decision from the server: "
                    + new String(body, java.nio.charset.StandardCharsets.UTF_8));
        }
    }

    /** A JSON string: quotes, backslashes and control characters escaped. */
    private static void string(StringBuilder s, String value) {
        s.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                s.append('\\').append(c);
            } else if (c < 0x20) {
                s.append(String.format("\\u%04x", (int) c));
            } else {
                s.append(c);
            }
        }
        s.append('"');
    }
}
