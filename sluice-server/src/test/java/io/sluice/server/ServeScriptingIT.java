package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.redis.Scripting;
import io.sluice.testkit.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code redis_scripting} reaches the server's Redis store: a real server on a real redis-server decides with
 * {@code FCALL} when told {@code functions} (or {@code auto} on Redis 7) and with {@code EVALSHA} when told
 * {@code eval}, as Redis's own command statistics count them, and decides the same either way.
 */
class ServeScriptingIT {

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
    @EnumSource(Scripting.class)
    void theServersRedisStoreRunsItsScriptsAsConfigured(Scripting scripting) throws Exception {
        Path rules = dir.resolve("rules-" + scripting + ".yaml");
        Files.writeString(rules, "limits:\n  two: {algorithm: fixed_window, limit: 2, window: 1h,"
                + " align: first_request}\nrules:\n  r: {limits: [two]}\n");
        redis.flushAll();
        redis.call("CONFIG", "RESETSTAT");
        try (SluiceServer server = SluiceServer.builder().httpPort(0).grpcPort(0).rules(List.of(rules))
                .store(redis.uri()).reloadInterval(Duration.ZERO)
                // About scripting, not timeouts: a Redis timeout no loaded machine reaches.
                .redis(new StoreFactory.RedisTuning(Duration.ofSeconds(5), 3, Duration.ofMillis(250))
                        .withScripting(scripting))
                .shutdown(Duration.ZERO, Duration.ofSeconds(5)).build().start()) {
            String base = "http://127.0.0.1:" + server.httpPort();
            List<Integer> statuses = List.of(check(base), check(base), check(base));
            assertThat(statuses).containsExactly(200, 200, 429);
        }
        String stats = String.valueOf(redis.call("INFO", "commandstats"));
        long fcalls = calls(stats, "fcall");
        long evalshas = calls(stats, "evalsha");
        if (scripting == Scripting.EVAL) {
            assertThat(evalshas).as(stats).isGreaterThanOrEqualTo(3);
            assertThat(fcalls).as(stats).isZero();
        } else {
            // The test's redis-server is Redis 7, which allows functions: auto chooses them. (At least the three
            // decisions: the store may call a function when it connects.)
            assertThat(fcalls).as(stats).isGreaterThanOrEqualTo(3);
            assertThat(evalshas).as(stats).isZero();
        }
    }

    private int check(String base) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/v1/check"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"rule\": \"r\", \"key\": \"k\"}"))
                .header("Content-Type", "application/json").build();
        return http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    /** The calls of one command in {@code INFO commandstats}, 0 when Redis has not seen it. */
    private static long calls(String stats, String command) {
        Matcher m = Pattern.compile("cmdstat_" + command + ":calls=(\\d+)").matcher(stats);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }
}
