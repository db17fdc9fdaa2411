package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.testkit.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What {@code sluice serve} logs, set by environment variables on a real process: JSON lines that Jackson
 * parses, one object per line with time, level, logger, message and the event's fields; a level that leaves out
 * the routine events; and the Redis settings reaching the store.
 */
class ServeLogsIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void jsonLinesCarryTimeLevelLoggerMessageAndFields() throws Exception {
        ServeProcess served = ServeProcess.start(Map.of("SLUICE_LOG_FORMAT", "json"));
        served.terminate();
        List<JsonNode> events = new ArrayList<>();
        for (String line : served.stderrLines()) {
            JsonNode event = JSON.readTree(line); // every line on standard error is one JSON object
            assertThat(event.isObject()).as(line).isTrue();
            assertThat(event.fieldNames()).toIterable().as(line).contains("time", "level", "logger", "message");
            events.add(event);
        }
        JsonNode started = events.stream().filter(e -> e.path("event").asText().equals("server_started"))
                .findFirst().orElseThrow(() -> new AssertionError(served.output()));
        assertThat(started.path("level").asText()).isEqualTo("INFO");
        assertThat(started.path("logger").asText()).isEqualTo("io.sluice.server.SluiceServer");
        assertThat(started.path("message").asText()).isEqualTo("listening");
        assertThat(started.path("http").asText()).isEqualTo("127.0.0.1:" + served.httpPort);
        assertThat(started.path("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d.*Z");
        assertThat(events).anyMatch(e -> e.path("event").asText().equals("server_stopped"));
        // The banner stays on standard output, for people and for scripts that wait for "ready".
        assertThat(served.stdout).anyMatch(l -> l.startsWith("sluice serve: ready"));
    }

    @Test
    void theLevelLeavesOutLessSevereEvents() throws Exception {
        ServeProcess text = ServeProcess.start(Map.of());
        text.terminate();
        assertThat(text.stderrLines()).anyMatch(l -> l.contains("INFO") && l.contains("server_started"));

        ServeProcess quiet = ServeProcess.start(Map.of("SLUICE_LOG_LEVEL", "warn"));
        quiet.terminate();
        assertThat(quiet.stderrLines()).as(quiet.output()).noneMatch(l -> l.contains("INFO"));
    }

    @Test
    void redisSettingsFromTheEnvironmentReachTheStore() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            ServeProcess served = ServeProcess.start(Map.of("SLUICE_STORE", redis.uri(), "SLUICE_REDIS_PREFIX",
                    "tenant-a", "SLUICE_REDIS_TIMEOUT", "5s", "SLUICE_REDIS_BREAKER_FAILURES", "5",
                    "SLUICE_REDIS_BREAKER_PAUSE", "1s", "SLUICE_REDIS_CACHE_DENIALS", "false"));
            try {
                HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                                URI.create(served.base("http") + "/v1/check"))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"rule\": \"api\", \"key\": \"user:1\"}"))
                        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                @SuppressWarnings("unchecked")
                List<Object> keys = (List<Object>) redis.call("KEYS", "*");
                assertThat(keys).isNotEmpty().allSatisfy(k -> assertThat(String.valueOf(k)).startsWith("tenant-a"));
            } finally {
                served.terminate();
            }
        }
    }
}
