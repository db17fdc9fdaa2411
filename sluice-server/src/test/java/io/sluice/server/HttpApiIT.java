package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The HTTP/JSON API over a real socket, with the JDK's HTTP client. */
class HttpApiIT {

    static final String RULES = String.join("\n",
            "limits:",
            "  per_minute: {algorithm: fixed_window, limit: 3, window: 1m}",
            "  bucket: {algorithm: token_bucket, capacity: 2, refill_tokens: 1, refill_period: 1s}",
            "  in_flight: {algorithm: concurrency, max_concurrent: 1, lease_ttl: 1m}",
            "  per_second: {algorithm: sliding_log, limit: 10, window: 1s}",
            "rules:",
            "  api: {limits: [per_minute]}",
            "  burst: {limits: [bucket]}",
            "  uploads: {limits: [in_flight]}",
            "  combined: {limits: [per_minute, per_second]}",
            "");

    static final String ENVOY = String.join("\n",
            "domain: messaging",
            "descriptors:",
            "  - key: to_number",
            "    rate_limit: {unit: day, requests_per_unit: 2}",
            "");

    @TempDir
    Path dir;
    TestServer t;

    @BeforeEach
    void start() {
        t = TestServer.start(dir, List.of(RULES, ENVOY), b -> { });
    }

    @AfterEach
    void stop() {
        t.close();
    }

    @Test
    void triesUntilRejectedWithHeadersAndRetryAfterRoundedUp() {
        for (int i = 2; i >= 0; i--) {
            HttpResponse<String> r = t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"user:1\"}");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("{\"allowed\":true,\"granted\":1,\"remaining\":" + i
                    + ",\"retry_after_ms\":0,\"reset_after_ms\":60000,\"wait_ms\":0,\"limit\":\"per_minute\"}");
            assertThat(r.headers().firstValue("RateLimit-Policy")).hasValue("\"per_minute\";q=3;w=60");
            assertThat(r.headers().firstValue("RateLimit")).hasValue("\"per_minute\";r=" + i + ";t=60");
            assertThat(r.headers().firstValue("Retry-After")).isEmpty();
        }
        HttpResponse<String> rejected = t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"user:1\"}");
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.body()).isEqualTo("{\"allowed\":false,\"granted\":0,\"remaining\":0,"
                + "\"retry_after_ms\":60000,\"reset_after_ms\":60000,\"wait_ms\":0,\"limit\":\"per_minute\"}");
        assertThat(rejected.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(rejected.headers().firstValue("RateLimit")).hasValue("\"per_minute\";r=0;t=60");

        t.clock.advance(Duration.ofMillis(30_500));
        HttpResponse<String> later = t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"user:1\"}");
        assertThat(later.statusCode()).isEqualTo(429);
        assertThat(later.body()).contains("\"retry_after_ms\":29500");
        assertThat(later.headers().firstValue("Retry-After")).hasValue("30"); // 29.5 s, rounded up
        assertThat(later.headers().firstValue("RateLimit")).hasValue("\"per_minute\";r=0;t=30");

        t.clock.advance(Duration.ofMillis(29_500));
        assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"user:1\"}").statusCode()).isEqualTo(200);
    }

    @Test
    void aRuleOfSeveralLimitsAdvertisesEachAndReportsTheTightest() {
        HttpResponse<String> r = t.post("/v1/check", "{\"rule\": \"combined\", \"key\": \"k\", \"permits\": 2}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"per_minute\";q=3;w=60, \"per_second\";q=10;w=1");
        // The tightest limit decides; its own reset time is not known apart from the rule's, so no t.
        assertThat(r.headers().firstValue("RateLimit")).hasValue("\"per_minute\";r=1");
    }

    @Test
    void peekChargesNothingAndNeverAnswers429() {
        t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"p\", \"permits\": 3}");
        HttpResponse<String> peek = t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"p\", \"op\": \"peek\"}");
        assertThat(peek.statusCode()).isEqualTo(200);
        assertThat(peek.body()).startsWith("{\"allowed\":false,\"granted\":0,\"remaining\":0,\"retry_after_ms\":60000");
        HttpResponse<String> zero = t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"fresh\", \"op\": \"peek\","
                + " \"permits\": 0}");
        assertThat(zero.body()).isEqualTo("{\"allowed\":true,\"granted\":0,\"remaining\":3,\"retry_after_ms\":0,"
                + "\"reset_after_ms\":0,\"wait_ms\":0,\"limit\":\"per_minute\"}");
        for (int i = 0; i < 5; i++) {
            t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"fresh\", \"op\": \"peek\"}");
        }
        assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"fresh\"}").body()).contains("\"remaining\":2");
    }

    @Test
    void acquireIsAReservationThatReportsItsWait() {
        assertThat(t.post("/v1/check", "{\"rule\": \"burst\", \"key\": \"b\", \"permits\": 2}").statusCode())
                .isEqualTo(200);
        HttpResponse<String> tooLong = t.post("/v1/check", "{\"rule\": \"burst\", \"key\": \"b\", \"op\": \"acquire\","
                + " \"max_wait_ms\": 999.999}");
        assertThat(tooLong.statusCode()).isEqualTo(429);
        assertThat(tooLong.body()).contains("\"retry_after_ms\":1000");
        assertThat(tooLong.headers().firstValue("Retry-After")).hasValue("1");
        HttpResponse<String> reserved = t.post("/v1/check", "{\"rule\": \"burst\", \"key\": \"b\", \"op\": \"acquire\","
                + " \"max_wait_ms\": 1000}");
        assertThat(reserved.statusCode()).isEqualTo(200);
        assertThat(reserved.body()).contains("\"allowed\":true").contains("\"wait_ms\":1000");
        HttpResponse<String> unbounded = t.post("/v1/check", "{\"rule\": \"burst\", \"key\": \"b\", \"op\":"
                + " \"acquire\"}");
        assertThat(unbounded.body()).contains("\"wait_ms\":2000");
    }

    @Test
    void leasesAreHandedOutAndReturned() {
        HttpResponse<String> first = t.post("/v1/check", "{\"rule\": \"uploads\", \"key\": \"u\"}");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"in_flight\";q=1;qu=\"concurrent-requests\"");
        Matcher m = Pattern.compile("\"lease\":(\\d+)").matcher(first.body());
        assertThat(m.find()).isTrue();
        String lease = m.group(1);
        assertThat(t.post("/v1/check", "{\"rule\": \"uploads\", \"key\": \"u\"}").statusCode()).isEqualTo(429);
        HttpResponse<String> released = t.post("/v1/check", "{\"rule\": \"uploads\", \"key\": \"u\", \"op\":"
                + " \"release\", \"lease\": " + lease + "}");
        assertThat(released.statusCode()).isEqualTo(200);
        assertThat(released.body()).isEqualTo("{\"released\":true}");
        assertThat(t.post("/v1/check", "{\"rule\": \"uploads\", \"key\": \"u\", \"op\": \"release\", \"lease\": "
                + lease + "}").body()).isEqualTo("{\"released\":false}");
        assertThat(t.post("/v1/check", "{\"rule\": \"uploads\", \"key\": \"u\"}").statusCode()).isEqualTo(200);
    }

    @Test
    void tryAtMostGrantsWhatIsLeft() {
        t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"m\"}");
        HttpResponse<String> r = t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"m\", \"op\": \"try_at_most\","
                + " \"permits\": 50}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"granted\":2,\"remaining\":0");
    }

    @Test
    void aLimitCanBeCheckedAloneAsReplayDoes() {
        HttpResponse<String> r = t.post("/v1/check", "{\"limit\": \"per_second\", \"key\": \"x\"}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"remaining\":9").contains("\"limit\":\"per_second\"");
    }

    @Test
    void domainsIsolateTenantsKeys() {
        for (int i = 0; i < 3; i++) {
            t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"user:1\", \"domain\": \"acme\"}");
        }
        assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"user:1\", \"domain\": \"acme\"}").statusCode())
                .isEqualTo(429);
        assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"user:1\", \"domain\": \"globex\"}").body())
                .contains("\"remaining\":2");
        assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"user:1\"}").body()).contains("\"remaining\":2");
        // The separator cannot be smuggled into a key to reach another tenant's counter.
        HttpResponse<String> forged = t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"acme\\u001fuser:1\"}");
        assertThat(forged.statusCode()).isEqualTo(400);
        assertThat(forged.body()).contains("key: must not contain control characters");
    }

    @Test
    void aBatchDecidesEachCheckInOrder() {
        HttpResponse<String> r = t.post("/v1/check/batch", "{\"checks\": ["
                + "{\"rule\": \"api\", \"key\": \"a\"},"
                + "{\"rule\": \"api\", \"key\": \"a\", \"permits\": 3},"
                + "{\"rule\": \"burst\", \"key\": \"a\", \"op\": \"peek\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("{\"results\":["
                + "{\"allowed\":true,\"granted\":1,\"remaining\":2,\"retry_after_ms\":0,\"reset_after_ms\":60000,"
                + "\"wait_ms\":0,\"limit\":\"per_minute\"},"
                + "{\"allowed\":false,\"granted\":0,\"remaining\":2,\"retry_after_ms\":60000,\"reset_after_ms\":60000,"
                + "\"wait_ms\":0,\"limit\":\"per_minute\"},"
                + "{\"allowed\":true,\"granted\":0,\"remaining\":1,\"retry_after_ms\":0,\"reset_after_ms\":1000,"
                + "\"wait_ms\":0,\"limit\":\"bucket\"}]}");
    }

    @Test
    void anInvalidCheckInABatchChargesNoneOfThem() {
        HttpResponse<String> r = t.post("/v1/check/batch", "{\"checks\": [{\"rule\": \"api\", \"key\": \"z\"},"
                + " {\"rule\": \"api\", \"key\": \"z\", \"permits\": -1}]}");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).isEqualTo("{\"error\":\"checks[1].permits: expected an integer in [1, 1000000000000];"
                + " was -1\"}");
        assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"z\", \"op\": \"peek\", \"permits\": 0}")
                .body()).contains("\"remaining\":3");
    }

    @Test
    void invalidInputIs400NamingTheProblemAndChargesNothing() {
        String[][] cases = {
                {"{\"rule\": \"api\", \"key\": \"v\"", "malformed JSON"},
                {"", "empty body; expected a JSON object"},
                {"[1, 2]", "expected a JSON object (a check); was a list"},
                {"{\"rule\": \"api\", \"key\": \"v\", \"colour\": \"red\"}", "colour: unknown field"},
                {"{\"rule\": \"api\", \"key\": \"v\", \"permits\": \"1\"}", "permits: expected an integer"},
                {"{\"rule\": \"api\", \"key\": \"v\", \"permits\": 1.5}", "permits: expected an integer"},
                {"{\"rule\": \"api\", \"key\": \"v\", \"permits\": 4}", "permits: must be in [1, 3] for rule 'api'"},
                {"{\"rule\": \"api\", \"key\": \"v\", \"permits\": 99999999999999999999}", "was 99999999999999999999"},
                {"{\"rule\": \"nope\", \"key\": \"v\"}", "rule: unknown rule \\\"nope\\\"; the rules are api, burst"},
                {"{\"rule\": \"api\", \"key\": 7}", "key: expected a string; was the number 7"},
                {"{\"rule\": \"api\"}", "key: required"},
                {"{\"rule\": \"api\", \"key\": \"\"}", "key: must not be empty"},
                {"{\"rule\": \"api\", \"key\": \"" + "k".repeat(257) + "\"}", "key: must be at most 256 characters"},
                {"{\"rule\": \"api\", \"key\": \"v\", \"op\": \"take\"}", "op: unknown op \\\"take\\\""},
                {"{\"rule\": \"api\", \"key\": \"v\", \"lease\": 1}", "lease: only used by op release"},
                {"{\"rule\": \"api\", \"key\": \"v\", \"max_wait_ms\": 5}", "max_wait_ms: only used by op acquire"},
                {"{\"rule\": \"burst\", \"key\": \"v\", \"op\": \"acquire\", \"max_wait_ms\": 0.0001}",
                        "max_wait_ms: at most 3 decimals"},
                {"{\"rule\": \"burst\", \"key\": \"v\", \"op\": \"acquire\", \"max_wait_ms\": -1}",
                        "max_wait_ms: must not be negative"},
                {"{\"rule\": \"uploads\", \"key\": \"v\", \"op\": \"release\"}", "lease: required by op release"},
                {"{\"rule\": \"api\", \"limit\": \"bucket\", \"key\": \"v\"}", "give exactly one of"},
                {"{\"rule\": \"api\", \"key\": \"v\", \"domain\": \"\"}", "domain: must not be empty"},
                {"{\"rule\": \"api\", \"key\": \"v\", \"key\": \"w\"}", "Duplicate field 'key'"},
                {"{\"rule\": \"api\", \"key\": \"v\"} {}", "malformed JSON"},
                {"{\"rule\": \"api\", \"key\": \"v\", \"permits\": NaN}", "malformed JSON"},
                {"{\"a\":" + "[".repeat(40) + "]".repeat(40) + "}", "malformed JSON"},
        };
        for (String[] c : cases) {
            HttpResponse<String> r = t.post("/v1/check", c[0]);
            assertThat(r.statusCode()).as(c[0]).isEqualTo(400);
            assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json; charset=utf-8");
            assertThat(r.body()).as(c[0]).startsWith("{\"error\":\"").contains(c[1]);
        }
        // A body over the limit is 413 Content Too Large, declared up front or streamed without a length.
        for (String path : List.of("/v1/check", "/v1/check/batch", "/json")) {
            HttpResponse<String> declared = t.post(path, "x".repeat(70_000));
            HttpResponse<String> streamed = t.send(t.request(path).POST(HttpRequest.BodyPublishers.ofInputStream(
                    () -> new java.io.ByteArrayInputStream("y".repeat(70_000).getBytes(StandardCharsets.UTF_8))))
                    .build());
            for (HttpResponse<String> r : List.of(declared, streamed)) {
                assertThat(r.statusCode()).as(path).isEqualTo(413);
                assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json; charset=utf-8");
                assertThat(r.body()).isEqualTo("{\"error\":\"request body too large: the limit is 65536 bytes\"}");
            }
        }
        for (String rule : List.of("api", "burst")) {
            assertThat(t.post("/v1/check", "{\"rule\": \"" + rule + "\", \"key\": \"v\", \"op\": \"peek\", \"permits\":"
                    + " 0}").body()).contains("\"remaining\":" + (rule.equals("api") ? 3 : 2));
        }
    }

    @Test
    void descriptorChecksUseTheEnvoyConfiguration() {
        String body = "{\"domain\": \"messaging\", \"descriptor\": [{\"key\": \"to_number\", \"value\": \"206\"}]}";
        HttpResponse<String> first = t.post("/v1/check", body);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("{\"allowed\":true,\"granted\":1,\"remaining\":1,\"retry_after_ms\":0,"
                + "\"reset_after_ms\":86400000,\"wait_ms\":0,\"limit\":\"to_number\"}");
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"to_number\";q=2;w=86400");
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"to_number\";r=1;t=86400");
        t.post("/v1/check", body);
        HttpResponse<String> third = t.post("/v1/check", body);
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("Retry-After")).hasValue("86400");
        HttpResponse<String> unmatched = t.post("/v1/check", "{\"domain\": \"messaging\", \"descriptor\": [{\"key\":"
                + " \"other\", \"value\": \"1\"}]}");
        assertThat(unmatched.statusCode()).isEqualTo(200);
        assertThat(unmatched.body()).isEqualTo("{\"allowed\":true,\"granted\":1,\"remaining\":null,"
                + "\"retry_after_ms\":0,\"reset_after_ms\":0,\"wait_ms\":0,\"limit\":null}");
        assertThat(t.post("/v1/check", "{\"descriptor\": [{\"key\": \"a\"}]}").body())
                .contains("domain: required with \\\"descriptor\\\"");
    }

    @Test
    void operationsEndpoints() {
        assertThat(t.get("/health").body()).isEqualTo("{\"status\":\"ok\"}");
        assertThat(t.get("/healthcheck").body()).isEqualTo("OK");
        HttpResponse<String> ready = t.get("/ready");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(ready.body()).isEqualTo("{\"status\":\"ready\"}");
        t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"m\", \"permits\": 3}");
        t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"m\"}");
        t.post("/v1/check", "{\"rule\": \"api\"}");
        String metrics = t.get("/metrics").body();
        assertThat(metrics)
                .contains("sluice_decisions_total{api=\"http\",outcome=\"allowed\",rule=\"api\"} 1.0")
                .contains("sluice_decisions_total{api=\"http\",outcome=\"rejected\",rule=\"api\"} 1.0")
                .contains("sluice_near_limit_total{api=\"http\",rule=\"api\"} 1.0")
                .contains("sluice_invalid_requests_total{api=\"http\"} 1.0")
                .contains("sluice_check_seconds_bucket{api=\"http\",le=")
                .contains("sluice_rules ");
        String rules = t.get("/v1/rules").body();
        assertThat(rules).contains("\"api\":{\"limits\":[{\"name\":\"per_minute\",\"algorithm\":\"fixed_window\"}]")
                .contains("\"envoy_domains\":[\"messaging\"]").contains("\"last_reload_error\":null");
        assertThat(t.get("/nowhere").statusCode()).isEqualTo(404);
        assertThat(t.get("/v1/check").statusCode()).isEqualTo(405);
    }
}
