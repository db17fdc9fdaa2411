package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Rule files reload on change without losing counters; an invalid change is refused and the old rules stay. */
class ReloadIT {

    static final String V1 = String.join("\n",
            "limits:",
            "  per_hour: {algorithm: fixed_window, limit: 3, window: 1h}",
            "rules:",
            "  api: {limits: [per_hour]}",
            "");

    static final String V2 = V1.replace("limit: 3", "limit: 5");

    /** Line 2 holds a limit of 0: refused by the record, named by file, line, column and field. */
    static final String INVALID = V1.replace("limit: 3", "limit: 0");

    @TempDir
    Path dir;

    @Test
    void aChangedFileAppliesWithoutLosingCountersAndAnInvalidOneIsRefused() throws Exception {
        try (TestServer t = TestServer.start(dir, List.of(V1), b -> b.reloadInterval(Duration.ofMillis(50)))) {
            Path file = t.ruleFiles.get(0);
            t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\", \"permits\": 2}");
            assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\", \"op\": \"peek\", \"permits\": 0}")
                    .body()).contains("\"remaining\":1");

            replace(file, V2);
            await(() -> t.get("/v1/rules").body().contains("q=5;w=3600"));
            // The window's count of 2 carried over to the new limit of 5.
            assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\"}").body())
                    .contains("\"remaining\":2");
            assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\"}").headers()
                    .firstValue("RateLimit-Policy")).hasValue("\"per_hour\";q=5;w=3600");

            replace(file, INVALID);
            await(() -> !t.get("/v1/rules").body().contains("\"last_reload_error\":null"));
            String rules = t.get("/v1/rules").body();
            assertThat(rules).contains(file + ":2:").contains("limits.per_hour.limit: limit must be in [1,");
            // The running rules stay: still 5 per hour, 4 used.
            assertThat(rules).contains("q=5;w=3600");
            assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\"}").body()).contains("\"remaining\":0");
            // The reloader counts a rejection before it publishes the error; the wait guards the order.
            await(() -> t.get("/metrics").body().contains("sluice_rule_reloads_total{result=\"rejected\"} 1.0"));
            assertThat(t.get("/metrics").body()).contains("sluice_rule_reloads_total{result=\"rejected\"} 1.0")
                    .contains("sluice_rule_reloads_total{result=\"applied\"} 1.0");

            replace(file, V1);
            await(() -> t.get("/v1/rules").body().contains("\"last_reload_error\":null"));
            // Back to 3 per hour; the count (5) is above it, so the key is rejected until the hour ends.
            assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\"}").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void aRuleRemovedAndAddedBackKeepsItsState() throws Exception {
        String other = "limits:\n  per_hour: {algorithm: fixed_window, limit: 3, window: 1h}\nrules:\n"
                + "  web: {limits: [per_hour]}\n";
        try (TestServer t = TestServer.start(dir, List.of(V1), b -> b.reloadInterval(Duration.ZERO))) {
            t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\", \"permits\": 3}");
            Files.writeString(t.ruleFiles.get(0), other);
            assertThat(t.server.reloadRules()).isEqualTo(RuleReloader.Result.APPLIED);
            assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\"}").statusCode()).isEqualTo(400);
            Files.writeString(t.ruleFiles.get(0), V1);
            assertThat(t.server.reloadRules()).isEqualTo(RuleReloader.Result.APPLIED);
            assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\"}").statusCode()).isEqualTo(429);
            assertThat(t.server.reloadRules()).isEqualTo(RuleReloader.Result.UNCHANGED);
        }
    }

    /** Replaces a file the way editors and config management do: write beside it, rename over it. */
    private static void replace(Path file, String text) throws Exception {
        Path temp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(temp, text);
        Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 30 s");
            }
            Thread.sleep(20);
        }
    }
}
