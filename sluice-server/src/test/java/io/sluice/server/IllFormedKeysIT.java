package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testkit.redis.RedisServer;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keys and domains that are not well-formed Unicode are refused with 400 naming the field, by a real server
 * on a real Redis and on the in-memory store alike; and the keys an encoder would have confused them with
 * ({@code "s?"}) keep counters of their own, so both stores decide the same.
 */
class IllFormedKeysIT {

    private static RedisServer redis;

    @TempDir
    static Path dir;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    @ParameterizedTest
    @ValueSource(strings = {"redis", "memory"})
    void illFormedTextIsRefusedAndLookalikesKeepTheirOwnCounters(String kind) throws Exception {
        Path rules = dir.resolve("rules-" + kind + ".yaml");
        Files.writeString(rules, "limits:\n  once: {algorithm: fixed_window, limit: 1, window: 1h,"
                + " align: first_request}\nrules:\n  r: {limits: [once]}\n");
        Path envoy = dir.resolve("envoy-" + kind + ".yaml");
        Files.writeString(envoy, "domain: acme\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour,"
                + " requests_per_unit: 1}\n");
        if (kind.equals("redis")) {
            redis.flushAll();
        }
        try (SluiceServer server = SluiceServer.builder().httpPort(0).grpcPort(0).rules(List.of(rules, envoy))
                .store(kind.equals("redis") ? redis.uri() : "memory").reloadInterval(Duration.ZERO)
                // About keys, not timeouts: a Redis timeout no loaded machine reaches.
                .redis(new StoreFactory.RedisTuning(Duration.ofSeconds(5), 3, Duration.ofMillis(250)))
                .shutdown(Duration.ZERO, Duration.ofSeconds(5)).build().start()) {
            String base = "http://127.0.0.1:" + server.httpPort();
            for (String key : List.of("s\\ud800", "s\\udbff", "s\\udc00")) {
                HttpResponse<String> r = post(base + "/v1/check", "{\"rule\": \"r\", \"key\": \"" + key + "\"}");
                assertThat(r.statusCode()).as(key).isEqualTo(400);
                assertThat(r.body()).as(key).contains("key: must be well-formed Unicode")
                        .contains("unpaired surrogate U+" + key.substring(3).toUpperCase());
                r = post(base + "/v1/check", "{\"rule\": \"r\", \"key\": \"k\", \"domain\": \"t" + key.substring(1)
                        + "\"}");
                assertThat(r.statusCode()).isEqualTo(400);
                assertThat(r.body()).startsWith("{\"error\":\"domain: must be well-formed Unicode");
            }
            // The same surrogate as raw (CESU-style) bytes, and an overlong '/', are not UTF-8.
            for (byte[] raw : List.of(new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
                    new byte[] {(byte) 0xC0, (byte) 0xAF}, new byte[] {(byte) 0xFF})) {
                HttpResponse<String> r = post(base + "/v1/check", bytes("{\"rule\": \"r\", \"key\": \"s", raw, "\"}"));
                assertThat(r.statusCode()).isEqualTo(400);
                assertThat(r.body()).contains("the body is not UTF-8: a malformed byte sequence at byte 23");
                r = post(base + "/json", bytes("{\"domain\": \"acme\", \"descriptors\": [{\"entries\": [{\"key\":"
                        + " \"k\", \"value\": \"v", raw, "\"}]}]}"));
                assertThat(r.statusCode()).isEqualTo(400);
                assertThat(r.body()).contains("not UTF-8");
            }
            HttpResponse<String> envoyEscape = post(base + "/json", "{\"domain\": \"acme\", \"descriptors\":"
                    + " [{\"entries\": [{\"key\": \"k\", \"value\": \"v\\udc00\"}]}]}");
            assertThat(envoyEscape.statusCode()).isEqualTo(400);
            assertThat(envoyEscape.body()).contains("descriptors[0].entries[0].value: must be well-formed Unicode");
            HttpResponse<String> descriptor = post(base + "/v1/check", "{\"domain\": \"acme\", \"descriptor\":"
                    + " [{\"key\": \"k\\ud800\", \"value\": \"v\"}]}");
            assertThat(descriptor.statusCode()).isEqualTo(400);
            assertThat(descriptor.body()).contains("descriptor[0].key: must be well-formed Unicode");

            // Nothing above was charged, and what an encoder would have made of those keys is its own key.
            for (String key : List.of("s?", "s", "s\\ufffd")) {
                assertThat(post(base + "/v1/check", "{\"rule\": \"r\", \"key\": \"" + key + "\"}").statusCode())
                        .as("first " + key).isEqualTo(200);
                assertThat(post(base + "/v1/check", "{\"rule\": \"r\", \"key\": \"" + key + "\"}").statusCode())
                        .as("second " + key).isEqualTo(429);
            }
            for (String domain : List.of("t?", "t")) {
                assertThat(post(base + "/v1/check", "{\"rule\": \"r\", \"key\": \"k\", \"domain\": \"" + domain
                        + "\"}").statusCode()).as(domain).isEqualTo(200);
            }
            assertThat(post(base + "/json", "{\"domain\": \"acme\", \"descriptors\": [{\"entries\": [{\"key\":"
                    + " \"k\", \"value\": \"v?\"}]}]}").statusCode()).isEqualTo(200);
            assertThat(post(base + "/json", "{\"domain\": \"acme\", \"descriptors\": [{\"entries\": [{\"key\":"
                    + " \"k\", \"value\": \"v\"}]}]}").statusCode()).isEqualTo(200);
            if (kind.equals("redis")) {
                // Five distinct rule keys and two descriptor keys: seven counters, none shared.
                List<?> keys = (List<?>) redis.call("KEYS", "sluice:*");
                assertThat(keys.stream().map(String::valueOf).filter(k -> !k.contains("}:r:"))).as("%s", keys)
                        .hasSize(7);
            }
        }
    }

    private HttpResponse<String> post(String uri, String body) throws Exception {
        return post(uri, body.getBytes(StandardCharsets.UTF_8));
    }

    private HttpResponse<String> post(String uri, byte[] body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static byte[] bytes(String before, byte[] raw, String after) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(before.getBytes(StandardCharsets.UTF_8));
        out.writeBytes(raw);
        out.writeBytes(after.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }
}
