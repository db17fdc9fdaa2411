package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.FixedWindow;
import io.sluice.Rule;
import io.sluice.rules.RuleText;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /v1/store/calls} on an in-process server: each call of a batch answered as it would be alone and in
 * order, one call's bad input or unknown rule failing that call only, the envelope refused whole (nothing decided)
 * with the field named, and the token required.
 */
class StoreBatchApiIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Rule OWN = Rule.of("client-own", FixedWindow.of(5, Duration.ofMinutes(1)));
    private static final Rule UNREGISTERED = Rule.of("never-registered", FixedWindow.of(5, Duration.ofMinutes(1)));

    /** The server's own rule files: none of the rules here, which clients register. */
    private static final String RULES = String.join("\n",
            "limits:",
            "  other: {algorithm: fixed_window, limit: 3, window: 1m}",
            "rules:",
            "  other: {limits: [other]}",
            "");

    @TempDir
    Path dir;

    private static String call(Rule rule, String key, String op, String rest) {
        return "{\"rule\":\"" + rule.name() + "\",\"fingerprint\":\"" + RuleText.fingerprint(rule) + "\",\"key\":\""
                + key + "\",\"op\":\"" + op + "\"" + rest + "}";
    }

    private static String batch(String... calls) {
        return "{\"calls\":[" + String.join(",", calls) + "]}";
    }

    private static JsonNode results(HttpResponse<String> r) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body()).get("results");
    }

    @Test
    void eachCallIsAnsweredAsItWouldBeAloneInOrderAndOnlyItsOwnFailureFailsIt() throws Exception {
        try (TestServer t = TestServer.start(dir, List.of(RULES), b -> { })) {
            assertThat(t.post("/v1/store/rules", RuleText.of(OWN)).statusCode()).isEqualTo(200);
            JsonNode r = results(t.post("/v1/store/calls", batch(
                    call(OWN, "a", "try", ",\"permits\":2"),
                    call(OWN, "a", "try", ",\"permits\":1,\"extra\":1"), // refused: this call only
                    call(UNREGISTERED, "a", "try", ",\"permits\":1"),
                    call(OWN, "b", "try", ",\"permits\":1"),
                    "[1, 2]",
                    call(OWN, "a", "peek", ",\"permits\":1"),
                    call(OWN, "b", "reset", ""),
                    call(OWN, "b", "release", ",\"lease\":7"))));
            assertThat(r).hasSize(8);
            assertThat(r.get(0).get("status").asInt()).isEqualTo(200);
            assertThat(r.get(0).get("body").get("remaining").asLong()).isEqualTo(3);
            assertThat(r.get(1).get("status").asInt()).isEqualTo(400);
            assertThat(r.get(1).get("body").get("error").asText()).contains("extra: unknown field");
            assertThat(r.get(2).get("status").asInt()).isEqualTo(412);
            assertThat(r.get(2).get("body").get("code").asText()).isEqualTo("unknown_rule");
            assertThat(r.get(3).get("body").get("remaining").asLong()).isEqualTo(4);
            assertThat(r.get(4).get("status").asInt()).isEqualTo(400);
            assertThat(r.get(4).get("body").get("error").asText()).contains("expected a JSON object");
            // The refused call charged nothing: 2 of 5 used, so a peek of 1 would leave 2.
            assertThat(r.get(5).get("body").get("remaining").asLong()).isEqualTo(2);
            assertThat(r.get(6).get("body").get("reset").asBoolean()).isTrue();
            assertThat(r.get(7).get("body").has("released")).isTrue();

            // Each body is byte for byte what the same call answers alone.
            String single = t.post("/v1/store/call", call(OWN, "c", "peek", ",\"permits\":1")).body();
            JsonNode again = results(t.post("/v1/store/calls", batch(call(OWN, "c", "peek", ",\"permits\":1"))));
            assertThat(again.get(0).get("body").toString()).isEqualTo(single);
        }
    }

    @Test
    void theEnvelopeIsRefusedWholeNamingTheFieldAndDecidesNothing() {
        try (TestServer t = TestServer.start(dir, List.of(RULES), b -> b.maxBatch(3))) {
            t.post("/v1/store/rules", RuleText.of(OWN));
            String one = call(OWN, "k", "try", ",\"permits\":1");
            assertThat(t.post("/v1/store/calls", "[]").body()).contains("expected a JSON object");
            assertThat(t.post("/v1/store/calls", "{}").body()).contains("calls: expected a non-empty list");
            assertThat(t.post("/v1/store/calls", "{\"calls\":[]}").body()).contains("calls: expected a non-empty");
            assertThat(t.post("/v1/store/calls", "{\"calls\":[" + one + "],\"more\":1}").body())
                    .contains("more: unknown field");
            HttpResponse<String> tooMany = t.post("/v1/store/calls", batch(one, one, one, one));
            assertThat(tooMany.statusCode()).isEqualTo(400);
            assertThat(tooMany.body()).contains("calls: expected at most 3 calls (--max-batch); was 4")
                    .contains("\"code\":\"invalid\"");
            // None of the refused batches charged anything: all 5 permits are left.
            assertThat(t.post("/v1/store/call", call(OWN, "k", "try", ",\"permits\":5")).body())
                    .contains("\"allowed\":true");
        }
    }

    @Test
    void batchesAreCountedInTheMetricsAndTheTokenIsRequired() throws Exception {
        try (TestServer t = TestServer.start(dir, List.of(RULES), b -> b.token("s3cret"))) {
            HttpResponse<String> refused = t.post("/v1/store/calls", batch(call(OWN, "k", "try", ",\"permits\":1")));
            assertThat(refused.statusCode()).isEqualTo(401);
        }
        try (TestServer t = TestServer.start(dir, List.of(RULES), b -> { })) {
            t.post("/v1/store/rules", RuleText.of(OWN));
            String one = call(OWN, "k", "try", ",\"permits\":1");
            results(t.post("/v1/store/calls", batch(one, one, one)));
            results(t.post("/v1/store/calls", batch(one, one)));
            String metrics = t.get("/metrics").body();
            assertThat(value(metrics, "sluice_store_batch_calls_count")).isEqualTo(2);
            assertThat(value(metrics, "sluice_store_batch_calls_sum")).isEqualTo(5);
            assertThat(value(metrics, "sluice_check_seconds_count\\{api=\"store_batch\"\\}")).isEqualTo(2);
        }
    }

    /** The value of one sample line of the Prometheus text, by its name and labels as a regular expression. */
    private static double value(String metrics, String sample) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + sample + " (\\S+)$").matcher(metrics);
        assertThat(m.find()).as(sample + " in\n" + metrics).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
