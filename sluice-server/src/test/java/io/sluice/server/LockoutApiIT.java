package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The login form of docs/reference/rule-file.md over the HTTP API: a lockout answers 429 with Retry-After. */
class LockoutApiIT {

    static final String RULES = String.join("\n",
            "limits:",
            "  attempts: {algorithm: fixed_window, limit: 5, window: 1m}",
            "rules:",
            "  login: {limits: [attempts], lockout: {after: 3, within: 15m, for: 1h}}",
            "");

    @TempDir
    Path dir;
    TestServer t;

    @BeforeEach
    void start() {
        t = TestServer.start(dir, RULES);
    }

    @AfterEach
    void stop() {
        t.close();
    }

    private HttpResponse<String> attempt() {
        return t.post("/v1/check", "{\"rule\": \"login\", \"key\": \"user:42\"}");
    }

    @Test
    void theThirdRejectionLocksTheKeyOutForAnHour() {
        for (int i = 0; i < 5; i++) {
            assertThat(attempt().statusCode()).isEqualTo(200);
        }
        HttpResponse<String> limited = attempt();
        assertThat(limited.statusCode()).isEqualTo(429);
        assertThat(limited.body()).contains("\"limit\":\"attempts\"").doesNotContain("locked_out");
        attempt();
        HttpResponse<String> locked = attempt();
        assertThat(locked.statusCode()).isEqualTo(429);
        assertThat(locked.body()).isEqualTo("{\"allowed\":false,\"granted\":0,\"remaining\":0,"
                + "\"retry_after_ms\":3600000,\"reset_after_ms\":3600000,\"wait_ms\":0,\"limit\":\"lockout\","
                + "\"locked_out\":true}");
        assertThat(locked.headers().firstValue("Retry-After")).hasValue("3600");
        assertThat(locked.headers().firstValue("RateLimit")).hasValue("\"lockout\";r=0;t=3600");

        // A minute later the window has room again, but the key is still locked out.
        t.clock.advance(Duration.ofMinutes(1));
        HttpResponse<String> still = attempt();
        assertThat(still.statusCode()).isEqualTo(429);
        assertThat(still.headers().firstValue("Retry-After")).hasValue("3540");

        t.clock.advance(Duration.ofMinutes(59));
        assertThat(attempt().statusCode()).isEqualTo(200);

        // One lockout began; the two rejections during it are rejected decisions.
        String metrics = t.get("/metrics").body();
        assertThat(metrics).contains("sluice_lockouts_total{api=\"http\",rule=\"login\"} 1.0");
        assertThat(metrics).contains("sluice_decisions_total{api=\"http\",outcome=\"rejected\",rule=\"login\"} 4.0");
    }
}
