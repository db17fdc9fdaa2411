package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code POST /v1/check/batch} with {@code "atomic": true}: the checks are charged all together or not at all. */
class AtomicBatchIT {

    @TempDir
    Path dir;
    TestServer t;

    @BeforeEach
    void start() {
        t = TestServer.start(dir, List.of(HttpApiIT.RULES, HttpApiIT.ENVOY), b -> { });
    }

    @AfterEach
    void stop() {
        t.close();
    }

    private String peek(String rule, String key) {
        return t.post("/v1/check", "{\"rule\": \"" + rule + "\", \"key\": \"" + key + "\", \"op\": \"peek\","
                + " \"permits\": 0}").body();
    }

    @Test
    void anAtomicBatchChargesEveryCheckOrNone() {
        HttpResponse<String> admitted = t.post("/v1/check/batch", "{\"atomic\": true, \"checks\": ["
                + "{\"rule\": \"api\", \"key\": \"a\", \"permits\": 2},"
                + "{\"rule\": \"burst\", \"key\": \"a\", \"permits\": 2}]}");
        assertThat(admitted.statusCode()).isEqualTo(200);
        String both = "{\"allowed\":true,\"granted\":2,\"remaining\":0,\"retry_after_ms\":0,\"reset_after_ms\":60000,"
                + "\"wait_ms\":0,\"limit\":\"bucket\"}";
        assertThat(admitted.body()).isEqualTo("{\"results\":[" + both + "," + both + "]}");

        HttpResponse<String> rejected = t.post("/v1/check/batch", "{\"atomic\": true, \"checks\": ["
                + "{\"rule\": \"burst\", \"key\": \"b\", \"permits\": 2},"
                + "{\"rule\": \"api\", \"key\": \"a\", \"permits\": 2}]}");
        assertThat(rejected.statusCode()).isEqualTo(200);
        assertThat(rejected.body()).startsWith("{\"results\":[{\"allowed\":false,").contains("\"limit\":\"per_minute\"");
        // burst/b was not charged by the rejection; without "atomic" it would have been.
        assertThat(peek("burst", "b")).contains("\"remaining\":2");
        assertThat(peek("api", "a")).contains("\"remaining\":1");
    }

    /**
     * The header fields of a single check, for the one decision: the deciding target's rule's policy, the
     * decision's limit and remaining permits, and Retry-After when rejected.
     */
    @Test
    void anAtomicBatchCarriesTheHeaderFieldsOfTheTargetThatDecided() {
        HttpResponse<String> admitted = t.post("/v1/check/batch", "{\"atomic\": true, \"checks\": ["
                + "{\"rule\": \"api\", \"key\": \"h\", \"permits\": 2},"
                + "{\"rule\": \"burst\", \"key\": \"h\", \"permits\": 2}]}");
        // burst/h decided (0 left, against api/h's 1): its policy; no t, since the reset is the batch's as a whole.
        assertThat(admitted.headers().firstValue("RateLimit-Policy")).hasValue("\"bucket\";q=2;w=2");
        assertThat(admitted.headers().firstValue("RateLimit")).hasValue("\"bucket\";r=0");
        assertThat(admitted.headers().firstValue("Retry-After")).isEmpty();

        HttpResponse<String> rejected = t.post("/v1/check/batch", "{\"atomic\": true, \"checks\": ["
                + "{\"rule\": \"burst\", \"key\": \"i\", \"permits\": 2},"
                + "{\"rule\": \"api\", \"key\": \"h\", \"permits\": 2}]}");
        assertThat(rejected.statusCode()).isEqualTo(200);
        // api/h rejected (1 left of 3 in its minute): its policy, and Retry-After when the minute ends.
        assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"per_minute\";q=3;w=60");
        String retryAfter = rejected.headers().firstValue("Retry-After").orElseThrow();
        assertThat(Long.parseLong(retryAfter)).isBetween(1L, 60L);
        assertThat(rejected.headers().firstValue("RateLimit")).hasValue("\"per_minute\";r=0;t=" + retryAfter);

        // Several keys of one rule: the figures are the key's that decided (h, 1 left; j would have 2).
        HttpResponse<String> keys = t.post("/v1/check/batch", "{\"atomic\": true, \"checks\": ["
                + "{\"rule\": \"api\", \"key\": \"j\"}, {\"rule\": \"api\", \"key\": \"h\"}]}");
        assertThat(keys.body()).contains("\"allowed\":true");
        assertThat(keys.headers().firstValue("RateLimit")).hasValue("\"per_minute\";r=0");
    }

    @Test
    void whatAnAtomicBatchCannotDecideIs400AndChargesNothing() {
        String[][] cases = {
                {"{\"atomic\": \"yes\", \"checks\": [{\"rule\": \"api\", \"key\": \"v\"}]}",
                        "atomic: expected true or false"},
                {"{\"atomic\": true, \"checks\": [{\"rule\": \"api\", \"key\": \"v\"}, {\"rule\": \"burst\", "
                        + "\"key\": \"v\", \"op\": \"peek\"}]}", "checks[1].op: an atomic batch decides op try only"},
                {"{\"atomic\": true, \"checks\": [{\"rule\": \"api\", \"key\": \"v\"}, {\"rule\": \"burst\", "
                        + "\"key\": \"v\", \"permits\": 2}]}", "checks[1].permits: every check of an atomic batch"},
                {"{\"atomic\": true, \"checks\": [{\"rule\": \"api\", \"key\": \"v\"}, {\"domain\": \"messaging\", "
                        + "\"descriptor\": [{\"key\": \"to_number\", \"value\": \"1\"}]}]}", "not descriptors"},
                {"{\"atomic\": true, \"checks\": [{\"rule\": \"api\", \"key\": \"v\"}, {\"rule\": \"api\", "
                        + "\"key\": \"v\"}]}", "appears twice"},
        };
        for (String[] c : cases) {
            HttpResponse<String> r = t.post("/v1/check/batch", c[0]);
            assertThat(r.statusCode()).as(c[0]).isEqualTo(400);
            assertThat(r.body()).as(c[0]).contains(c[1]);
        }
        assertThat(peek("api", "v")).contains("\"remaining\":3");
        assertThat(peek("burst", "v")).contains("\"remaining\":2");
    }
}
