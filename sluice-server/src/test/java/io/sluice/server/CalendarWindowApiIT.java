package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A {@code calendar_window} rule over the HTTP API: the reset and Retry-After count to the zone's next month. */
class CalendarWindowApiIT {

    static final String RULES = String.join("\n",
            "limits:",
            "  per_month: {algorithm: calendar_window, limit: 2, period: month, zone: Europe/Berlin}",
            "rules:",
            "  tenants: {limits: [per_month]}",
            "");

    @TempDir
    Path dir;
    TestServer t;

    @BeforeEach
    void start() {
        t = TestServer.start(dir, RULES);
        // Saturday 31 October 2026, noon UTC: November starts at 23:00Z (midnight CET).
        t.clock.setMicros(Instant.parse("2026-10-31T12:00:00Z").getEpochSecond() * 1_000_000);
    }

    @AfterEach
    void stop() {
        t.close();
    }

    @Test
    void resetsAtMidnightBerlinOnTheFirst() {
        HttpResponse<String> first = t.post("/v1/check", "{\"rule\": \"tenants\", \"key\": \"acme\", \"permits\": 2}");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("{\"allowed\":true,\"granted\":2,\"remaining\":0,\"retry_after_ms\":0,"
                + "\"reset_after_ms\":39600000,\"wait_ms\":0,\"limit\":\"per_month\"}");
        // Calendar windows have no fixed length: the policy gives the quota without w.
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"per_month\";q=2");
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"per_month\";r=0;t=39600");

        t.clock.advance(Duration.ofHours(10).plusMinutes(59));
        HttpResponse<String> rejected = t.post("/v1/check", "{\"rule\": \"tenants\", \"key\": \"acme\"}");
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.body()).contains("\"retry_after_ms\":60000");
        assertThat(rejected.headers().firstValue("Retry-After")).hasValue("60");

        t.clock.advance(Duration.ofMinutes(1));
        HttpResponse<String> november = t.post("/v1/check", "{\"rule\": \"tenants\", \"key\": \"acme\"}");
        assertThat(november.statusCode()).isEqualTo(200);
        // November: 30 days, no change of offset.
        assertThat(november.body()).contains("\"remaining\":1").contains("\"reset_after_ms\":2592000000");
    }
}
