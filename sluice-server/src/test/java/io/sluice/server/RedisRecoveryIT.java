package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testkit.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server on a real Redis that is killed (SIGKILL) and started again: while it is gone checks are answered
 * 503 by the rule's {@code raise} policy, and once it is back, with the server's default Redis timeout and
 * circuit breaker, normal decisions resume promptly and count exactly on the fresh Redis. The bound on how long
 * that takes is generous (the defaults need under a second; the old fixed ones took up to 3.1 s).
 */
class RedisRecoveryIT {

    static final Duration RECOVERY_BOUND = Duration.ofMillis(2500);

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void decisionsResumeSoonAfterRedisRestarts() throws Exception {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, "limits:\n  five: {algorithm: fixed_window, limit: 5, window: 1h,"
                + " align: first_request}\nrules:\n  r: {limits: [five]}\n");
        try (RedisServer redis = RedisServer.start();
             SluiceServer server = SluiceServer.builder().httpPort(0).grpcPort(0).rules(List.of(rules))
                     .store(redis.uri()).reloadInterval(Duration.ZERO).shutdown(Duration.ZERO, Duration.ofSeconds(5))
                     .build().start()) {
            String check = "http://127.0.0.1:" + server.httpPort() + "/v1/check";
            assertThat(statuses(check, "k", 6)).containsExactly(200, 200, 200, 200, 200, 429);
            // From here on a key Redis never denied: a denied key is answered from the store's cached denials
            // (429, for up to a second) without asking Redis, which is what they are for.

            redis.kill();
            List<Integer> outage = statuses(check, "fresh", 10);
            assertThat(outage).as("answers while Redis is down").containsOnly(503);
            assertThat(post(check, "fresh").body()).startsWith("{\"error\":\"store unavailable");

            redis.restart(); // empty, on the same port; returns once it answers PING
            long back = System.nanoTime();
            List<Integer> seen = new ArrayList<>();
            int status;
            do {
                status = post(check, "fresh").statusCode();
                seen.add(status);
                assertThat(Duration.ofNanos(System.nanoTime() - back)).as("still failing: %s", seen)
                        .isLessThan(RECOVERY_BOUND);
                if (status != 200) {
                    Thread.sleep(20);
                }
            } while (status != 200);
            assertThat(seen).as("before recovery").allMatch(s -> s == 200 || s == 503);
            System.out.printf("redis recovery: first 200 %d ms after Redis answered again (%d checks)%n",
                    Duration.ofNanos(System.nanoTime() - back).toMillis(), seen.size());
            // The first admitted check was the first on the fresh Redis: four more, then the limit holds.
            assertThat(statuses(check, "fresh", 5)).containsExactly(200, 200, 200, 200, 429);
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort()
                    + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics).contains("sluice_breaker_state 0.0");
        }
    }

    private List<Integer> statuses(String uri, String key, int n) throws Exception {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(post(uri, key).statusCode());
        }
        return out;
    }

    private HttpResponse<String> post(String uri, String key) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString("{\"rule\": \"r\", \"key\": \"" + key + "\"}"))
                .build(), HttpResponse.BodyHandlers.ofString());
    }
}
