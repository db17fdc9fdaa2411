package io.sluice.client.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.sluice.client.RemoteStoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The envelope of {@code POST /v1/store/calls}: many calls, each exactly the body a {@code POST /v1/store/call}
 * would carry, in <code>{"calls": [...]}</code>; answered <code>{"results": [{"status", "body"}, ...]}</code> in
 * the calls' order. Knows nothing of the calls themselves, so it carries any op {@link Protocol} writes.
 */
final class BatchProtocol {

    private static final JsonFactory JSON = new JsonFactory();

    private BatchProtocol() {}

    /** The body of a batch of calls; each call's text is spliced in as it is. */
    static String calls(List<String> bodies) {
        int length = 16;
        for (String b : bodies) {
            length += b.length() + 1;
        }
        StringBuilder s = new StringBuilder(length).append("{\"calls\":[");
        for (int i = 0; i < bodies.size(); i++) {
            if (i > 0) {
                s.append(',');
            }
            s.append(bodies.get(i));
        }
        return s.append("]}").toString();
    }

    /**
     * Each call's status and body, in order. The body is cut out of the answer byte for byte (from its opening
     * brace to its closing one), so a call's answer reads exactly as it would alone.
     *
     * @throws RemoteStoreException unless the answer is a results list of exactly {@code expected} entries
     */
    static Reply[] replies(byte[] answer, int expected) {
        Reply[] out = new Reply[expected];
        int n = 0;
        try (JsonParser p = JSON.createParser(answer)) {
            expect(p.nextToken() == JsonToken.START_OBJECT, answer, "not an object");
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (!field.equals("results")) {
                    p.skipChildren();
                    continue;
                }
                expect(value == JsonToken.START_ARRAY, answer, "results is not a list");
                while (p.nextToken() == JsonToken.START_OBJECT) {
                    expect(n < expected, answer, "more results than the " + expected + " calls sent");
                    out[n++] = reply(p, answer);
                }
            }
        } catch (IOException e) {
            throw unreadable(answer, e.getMessage());
        }
        expect(n == expected, answer, n + " results for " + expected + " calls");
        return out;
    }

    private static Reply reply(JsonParser p, byte[] answer) throws IOException {
        int status = -1;
        byte[] body = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            if (field.equals("status") && value == JsonToken.VALUE_NUMBER_INT) {
                status = p.getIntValue();
            } else if (field.equals("body") && value == JsonToken.START_OBJECT) {
                long from = p.currentTokenLocation().getByteOffset();
                p.skipChildren();
                long to = p.currentTokenLocation().getByteOffset() + 1;
                expect(from >= 0 && to <= answer.length && from < to, answer, "no offsets for a result's body");
                body = Arrays.copyOfRange(answer, (int) from, (int) to);
            } else {
                p.skipChildren();
            }
        }
        expect(status >= 100 && status <= 599 && body != null, answer, "a result without a status and a body");
        return new Reply(status, body);
    }

    private static void expect(boolean ok, byte[] answer, String what) {
        if (!ok) {
            throw unreadable(answer, what);
        }
    }

    private static RemoteStoreException unreadable(byte[] answer, String what) {
        String text = new String(answer, StandardCharsets.UTF_8);
        return new RemoteStoreException("unreadable batch answer from the server (" + what + "): "
                + (text.length() > 500 ? text.substring(0, 500) + "…" : text));
    }
}
