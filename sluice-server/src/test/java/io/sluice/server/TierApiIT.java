package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A rule with tiers over the HTTP API: answers and metrics name the tier, and a reload keeps other keys' state. */
class TierApiIT {

    static final String RULES = String.join("\n",
            "limits:",
            "  per_hour: {algorithm: fixed_window, limit: 2, window: 1h}",
            "  premium_per_hour: {algorithm: fixed_window, limit: 5, window: 1h}",
            "rules:",
            "  api:",
            "    limits: [per_hour]",
            "    tiers:",
            "      premium: {keys: [tenant-acme, \"tenant-big-*\"], limits: [premium_per_hour]}",
            "      internal: {keys: [\"svc-*\"], unlimited: true}",
            "      blocked: {keys: [tenant-evil], blocked: true}",
            "");

    @TempDir
    Path dir;

    private static String check(String key, int permits) {
        return "{\"rule\": \"api\", \"key\": \"" + key + "\", \"permits\": " + permits + "}";
    }

    @Test
    void answersAndMetricsNameTheTier() {
        try (TestServer t = TestServer.start(dir, RULES)) {
            HttpResponse<String> plain = t.post("/v1/check", check("tenant-small", 2));
            assertThat(plain.body()).endsWith("\"limit\":\"per_hour\"}");
            assertThat(t.post("/v1/check", check("tenant-small", 1)).statusCode()).isEqualTo(429);

            HttpResponse<String> premium = t.post("/v1/check", check("tenant-big-1", 4));
            assertThat(premium.statusCode()).isEqualTo(200);
            assertThat(premium.body()).isEqualTo("{\"allowed\":true,\"granted\":4,\"remaining\":1,\"retry_after_ms\":0,"
                    + "\"reset_after_ms\":3600000,\"wait_ms\":0,\"limit\":\"premium_per_hour\",\"tier\":\"premium\"}");
            assertThat(premium.headers().firstValue("RateLimit-Policy")).hasValue("\"premium_per_hour\";q=5;w=3600");

            HttpResponse<String> internal = t.post("/v1/check", check("svc-billing", 1000));
            assertThat(internal.statusCode()).isEqualTo(200);
            assertThat(internal.body()).contains("\"granted\":1000").endsWith("\"limit\":\"internal\",\"tier\":\"internal\"}");
            assertThat(internal.headers().firstValue("RateLimit-Policy")).isEmpty();

            HttpResponse<String> blocked = t.post("/v1/check", check("tenant-evil", 1));
            assertThat(blocked.statusCode()).isEqualTo(429);
            assertThat(blocked.body()).contains("\"retry_after_ms\":null").endsWith("\"tier\":\"blocked\"}");
            assertThat(blocked.headers().firstValue("Retry-After")).isEmpty();

            String metrics = t.get("/metrics").body();
            assertThat(metrics).contains("sluice_tier_decisions_total{api=\"http\",outcome=\"allowed\",rule=\"api\","
                    + "tier=\"premium\"} 1.0")
                    .contains("tier=\"blocked\"} 1.0")
                    .doesNotContain("tenant-big-1");

            // An atomic batch decides each key under its tier: tenant-acme (premium) and tenant-small (spent).
            HttpResponse<String> batch = t.post("/v1/check/batch", "{\"atomic\": true, \"checks\": ["
                    + check("tenant-acme", 1) + ", " + check("tenant-small", 1) + "]}");
            assertThat(batch.body()).contains("\"allowed\":false").contains("\"limit\":\"per_hour\"");
        }
    }

    @Test
    void aReloadThatChangesTiersKeepsEveryOtherKeysState() throws Exception {
        String moved = RULES.replace("keys: [tenant-acme, ", "keys: [tenant-acme, tenant-small, ")
                .replace("limit: 5,", "limit: 6,");
        try (TestServer t = TestServer.start(dir, List.of(RULES), b -> b.reloadInterval(Duration.ZERO))) {
            t.post("/v1/check", check("tenant-small", 2));
            t.post("/v1/check", check("tenant-other", 1));
            t.post("/v1/check", check("tenant-acme", 3));

            Files.writeString(t.ruleFiles.get(0), moved);
            assertThat(t.server.reloadRules()).isEqualTo(RuleReloader.Result.APPLIED);
            // tenant-small moved to premium: its per_hour count stays behind, premium_per_hour starts fresh (6).
            assertThat(t.post("/v1/check", check("tenant-small", 6)).body()).contains("\"allowed\":true")
                    .contains("\"tier\":\"premium\"");
            // tenant-acme's premium count (3) carried over to the new premium limit of 6.
            assertThat(t.post("/v1/check", check("tenant-acme", 1)).body()).contains("\"remaining\":2");
            // A key the reload did not touch keeps its count.
            assertThat(t.post("/v1/check", check("tenant-other", 1)).body()).contains("\"remaining\":0");

            Files.writeString(t.ruleFiles.get(0), RULES);
            assertThat(t.server.reloadRules()).isEqualTo(RuleReloader.Result.APPLIED);
            // Back under per_hour, tenant-small finds its count of 2 again.
            assertThat(t.post("/v1/check", check("tenant-small", 1)).statusCode()).isEqualTo(429);
        }
    }
}
