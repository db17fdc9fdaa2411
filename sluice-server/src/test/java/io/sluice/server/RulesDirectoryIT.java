package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code SLUICE_RULES=DIR} on a real process: every {@code *.yaml} and {@code *.yml} in the directory is read, and
 * the rules follow the directory as files come, change and go; a bad file keeps the last good rules and the log
 * says why (a JSON line naming the file). Waits are for the reload to be seen, bounded, never fixed sleeps.
 */
class RulesDirectoryIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void rulesFollowTheDirectoryAndABadFileKeepsTheLastGoodRules() throws Exception {
        Path rules = Files.createDirectory(dir.resolve("rules.d"));
        Files.writeString(rules.resolve("a.yaml"), rule("a", 5));
        Files.writeString(rules.resolve("notes.txt"), "not a rule file: {{{");
        Files.writeString(rules.resolve(".b.yaml.swp"), "an editor's swap file: {{{");
        ServeProcess served = ServeProcess.start(Map.of("SLUICE_RULES", rules.toString(),
                "SLUICE_RELOAD_INTERVAL", "100ms", "SLUICE_LOG_FORMAT", "json"));
        try {
            HttpClient http = HttpClient.newHttpClient();
            assertThat(rulesNow(http, served).path("rules").has("a")).isTrue();

            Files.writeString(rules.resolve("b.yml"), rule("b", 1));
            JsonNode withB = await(http, served, r -> r.path("rules").has("b"));
            assertThat(withB.path("rules").has("a")).isTrue();
            assertThat(check(http, served, "b").statusCode()).isEqualTo(200);
            assertThat(check(http, served, "b").statusCode()).isEqualTo(429);

            Files.writeString(rules.resolve("a.yaml"), rule("a2", 5));
            await(http, served, r -> r.path("rules").has("a2") && !r.path("rules").has("a"));

            Path bad = rules.resolve("c.yaml");
            Files.writeString(bad, "limits:\n  l: {algorithm: gcra, limit: -1, period: 1s}\n");
            JsonNode rejected = awaitLog(served, e -> e.path("event").asText().equals("rules_rejected"));
            assertThat(rejected.path("file").asText()).isEqualTo(bad.toString());
            assertThat(rejected.path("level").asText()).isEqualTo("ERROR");
            JsonNode kept = rulesNow(http, served);
            assertThat(kept.path("rules").has("a2")).isTrue();
            assertThat(kept.path("rules").has("b")).isTrue();
            assertThat(kept.path("last_reload_error").asText()).contains(bad.toString());
            assertThat(check(http, served, "a2").statusCode()).isEqualTo(200);

            Files.delete(bad);
            Files.delete(rules.resolve("b.yml"));
            JsonNode after = await(http, served, r -> !r.path("rules").has("b"));
            assertThat(after.path("rules").has("a2")).isTrue();
            assertThat(after.path("last_reload_error").isNull()).isTrue();
        } finally {
            served.terminate();
        }
    }

    private static String rule(String name, int limit) {
        return "limits:\n  " + name + "_limit: {algorithm: fixed_window, limit: " + limit + ", window: 1h}\n"
                + "rules:\n  " + name + ": {limits: [" + name + "_limit]}\n";
    }

    private static HttpResponse<String> check(HttpClient http, ServeProcess p, String rule) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(p.base("http") + "/v1/check"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"rule\": \"" + rule + "\", \"key\": \"k\"}"))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode rulesNow(HttpClient http, ServeProcess p) throws Exception {
        return JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(p.base("http") + "/v1/rules"))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString()).body());
    }

    /** {@code GET /v1/rules} until it satisfies {@code until}, for at most a minute. */
    private static JsonNode await(HttpClient http, ServeProcess p, Predicate<JsonNode> until) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        JsonNode r;
        do {
            r = rulesNow(http, p);
            if (until.test(r)) {
                return r;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("the rules never changed as expected; last " + r + "\n" + p.output());
    }

    /** The first JSON log line satisfying {@code until}, waiting at most a minute. */
    private static JsonNode awaitLog(ServeProcess p, Predicate<JsonNode> until) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        do {
            for (String line : p.stderrLines()) {
                JsonNode e = JSON.readTree(line);
                if (until.test(e)) {
                    return e;
                }
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("no such log line:\n" + p.output());
    }
}
