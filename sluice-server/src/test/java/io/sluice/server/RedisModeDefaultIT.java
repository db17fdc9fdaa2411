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
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice serve --redis-mode} with a real {@code redis-server} and a real server process: the rules
 * without a mode of their own are enforced in the server's default (seen in what Redis is asked: a lease per
 * many decisions instead of a script call per decision), a rule with its own mode keeps it, and a rule the
 * default cannot run stays exact and is named at start. Limits are far above what the test spends, so no
 * window or lease expiry matters however slow the machine.
 */
class RedisModeDefaultIT {

    private static final String RULES = """
            limits:
              bucket: {algorithm: token_bucket, capacity: 100000, refill_tokens: 100000, refill_period: 1s}
              shaped: {algorithm: smooth_bursty, permits_per_second: 100000}
            rules:
              plain: {limits: [bucket]}
              own: {limits: [bucket], mode: exact}
              smooth: {limits: [shaped]}
            """;
    private static final int CHECKS = 60;

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void rulesWithoutTheirOwnModeAreLeasedFromTheEnvironmentsDefault() throws Exception {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, RULES);
        try (RedisServer redis = RedisServer.start();
             ServeProcess serve = ServeProcess.start(Map.of("SLUICE_REDIS_MODE", "leased",
                     "SLUICE_REDIS_LEASE_TTL", "1h", "SLUICE_REDIS_TIMEOUT", "5s"),
                     "--store", redis.uri(), "--rules", rules.toString())) {
            assertThat(serve.stdout).anySatisfy(line -> assertThat(line).isEqualTo("sluice serve: default mode"
                    + " leased(ttl=PT1H, maxBatch=auto) for rules without their own; enforced exactly, as it cannot"
                    + " run them: smooth (smooth_bursty), limit:shaped (smooth_bursty)"));

            long leased = redisCallsFor(redis, serve, "plain");
            long exact = redisCallsFor(redis, serve, "own");
            long smooth = redisCallsFor(redis, serve, "smooth");
            // Leased: a few leases (their batches grow towards a sixteenth of 100,000) serve every check; exact:
            // a script call each.
            assertThat(leased).as("Redis calls for %d checks of a leased rule", CHECKS).isLessThan(CHECKS / 4);
            assertThat(exact).as("Redis calls for %d checks of an exact rule", CHECKS).isGreaterThanOrEqualTo(CHECKS);
            assertThat(smooth).as("Redis calls for %d checks of a rule leased cannot run", CHECKS)
                    .isGreaterThanOrEqualTo(CHECKS);
        }
    }

    @Test
    void theConfigFilesModeAppliesAndItsOptionsBelongToIt() throws Exception {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, RULES);
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "redis_mode: coalesced\nredis_timeout: 5s\n");
        try (RedisServer redis = RedisServer.start();
             ServeProcess serve = ServeProcess.start(Map.of(), "--config", config.toString(), "--store",
                     redis.uri(), "--rules", rules.toString())) {
            assertThat(serve.stdout).contains("sluice serve: default mode coalesced for rules without their own");
            // Coalesced is exact: one check, one answer, the permit charged.
            assertThat(check(serve, "plain", "k").statusCode()).isEqualTo(200);
        }
        Files.writeString(config, "redis_mode: coalesced\nredis_lease_ttl: 1s\n");
        try (ServeProcess refused = ServeProcess.launch(Map.of(), "--config", config.toString(), "--rules",
                rules.toString(), "--http-port", "0", "--grpc-port", "0")) {
            assertThat(refused.exitStatus()).isEqualTo(1);
            assertThat(refused.output()).contains(config + ": redis_lease_ttl applies to --redis-mode leased"
                    + " (SLUICE_REDIS_MODE, redis_mode) only; the mode is coalesced");
        }
    }

    /** Resets Redis's command statistics, makes {@link #CHECKS} checks of one key, and counts script calls. */
    private long redisCallsFor(RedisServer redis, ServeProcess serve, String rule) throws Exception {
        redis.call("CONFIG", "RESETSTAT");
        for (int i = 0; i < CHECKS; i++) {
            HttpResponse<String> r = check(serve, rule, "user:" + rule);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
        long calls = 0;
        for (String line : String.valueOf(redis.call("INFO", "commandstats")).split("\r?\n")) {
            // Script calls only, FCALL or EVALSHA: each is one decision or one lease (INFO also counts the commands
            // inside them).
            if (line.startsWith("cmdstat_eval") || line.startsWith("cmdstat_fcall")) {
                int at = line.indexOf("calls=");
                calls += Long.parseLong(line.substring(at + 6, line.indexOf(',', at)));
            }
        }
        return calls;
    }

    private HttpResponse<String> check(ServeProcess serve, String rule, String key) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(serve.base("http") + "/v1/check"))
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString("{\"rule\": \"" + rule + "\", \"key\": \"" + key + "\"}"))
                .build(), HttpResponse.BodyHandlers.ofString());
    }
}
