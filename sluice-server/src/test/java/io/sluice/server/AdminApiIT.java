package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.testkit.redis.RedisServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The operator endpoints ({@code /v1/admin/state}, {@code /v1/admin/reset}, {@code /v1/admin/top}) of real
 * {@code sluice serve} processes, one on the in-memory store and one on a {@code redis-server} this test starts,
 * both with a bearer token. Windows are an hour long and open at the first request, so that no window ends while
 * a test runs, whatever the machine's load.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminApiIT {

    private static final String TOKEN = "s3cret-operator-token";
    private static final String RULES = """
            limits:
              hourly: {algorithm: fixed_window, limit: 5, window: 1h, align: first_request}
              per_minute: {algorithm: sliding_log, limit: 8, window: 1m}
            rules:
              api: {limits: [hourly]}
              login: {limits: [hourly, per_minute]}
            """;
    /** An Envoy domain beside the Sluice rules; a year's window, epoch-aligned, ends once a year. */
    private static final String ENVOY = """
            domain: ops
            descriptors:
              - key: tenant
                rate_limit: {unit: year, requests_per_unit: 3}
              - key: tenant
                value: "internal*"
                rate_limit: {unlimited: true}
            """;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;

    private final List<Served> servers = new ArrayList<>();
    private RedisServer redis;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    void startServers() throws Exception {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, RULES);
        Path envoy = dir.resolve("envoy.yaml");
        Files.writeString(envoy, ENVOY);
        // A Redis timeout no loaded machine reaches: this test is about the endpoints, not timeouts.
        Path config = dir.resolve("serve.yaml");
        Files.writeString(config, "redis_timeout: 5s\n");
        redis = RedisServer.start();
        servers.add(Served.start("memory", config, rules, envoy));
        servers.add(Served.start(redis.uri(), config, rules, envoy));
    }

    @AfterAll
    void stopServers() throws InterruptedException {
        for (Served s : servers) {
            s.stop();
        }
        if (redis != null) {
            redis.close();
        }
    }

    Stream<Served> stores() {
        return servers.stream();
    }

    @ParameterizedTest
    @MethodSource("stores")
    void stateReadsWhatDecisionsLeftAndChargesNothing(Served s) throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(check(s, "api", "state-user", null).statusCode()).isEqualTo(200);
        }
        JsonNode state = null;
        for (int i = 0; i < 10; i++) {
            state = ok(post(s, "/v1/admin/state", "{\"rule\": \"api\", \"key\": \"state-user\"}", TOKEN));
            assertThat(state.get("remaining").asLong()).isEqualTo(2);
        }
        assertThat(state.get("rule").asText()).isEqualTo("api");
        assertThat(state.get("key").asText()).isEqualTo("state-user");
        assertThat(state.get("permits").asLong()).isEqualTo(1);
        assertThat(state.get("allowed").asBoolean()).isTrue();
        assertThat(state.get("retry_after_ms").asDouble()).isZero();
        assertThat(state.get("reset_after_ms").asDouble()).isBetween(1.0, 3_600_000.0);
        assertThat(state.get("limit").asText()).isEqualTo("hourly");
        assertThat(state.has("domain")).isFalse();
        assertThat(state.has("rejected_by")).isFalse();
        // Ten reads charged nothing: the next check has the two permits the reads saw.
        JsonNode next = JSON.readTree(check(s, "api", "state-user", null).body());
        assertThat(next.get("remaining").asLong()).isEqualTo(1);
        // What 2 permits would get: rejected, with a retry-after at the window's end.
        JsonNode two = ok(post(s, "/v1/admin/state", "{\"rule\": \"api\", \"key\": \"state-user\", \"permits\": 2}",
                TOKEN));
        assertThat(two.get("allowed").asBoolean()).isFalse();
        assertThat(two.get("rejected_by").asText()).isEqualTo("hourly");
        assertThat(two.get("remaining").asLong()).isEqualTo(1);
        assertThat(two.get("retry_after_ms").asDouble()).isBetween(1.0, 3_600_000.0);
        assertThat(check(s, "api", "state-user", null).statusCode()).isEqualTo(200);
        assertThat(check(s, "api", "state-user", null).statusCode()).isEqualTo(429);
        JsonNode full = ok(post(s, "/v1/admin/state", "{\"rule\": \"api\", \"key\": \"state-user\"}", TOKEN));
        assertThat(full.get("allowed").asBoolean()).isFalse();
        assertThat(full.get("remaining").asLong()).isZero();
        assertThat(full.get("retry_after_ms").asDouble()).isBetween(1.0, 3_600_000.0);
        // The same key in a domain is another key; a limit addressed alone is its own rule.
        JsonNode tenant = ok(post(s, "/v1/admin/state", "{\"rule\": \"api\", \"key\": \"state-user\","
                + " \"domain\": \"acme\"}", TOKEN));
        assertThat(tenant.get("domain").asText()).isEqualTo("acme");
        assertThat(tenant.get("remaining").asLong()).isEqualTo(5);
        JsonNode limit = ok(post(s, "/v1/admin/state", "{\"limit\": \"per_minute\", \"key\": \"state-user\"}",
                TOKEN));
        assertThat(limit.get("rule").asText()).isEqualTo("limit:per_minute");
        assertThat(limit.get("remaining").asLong()).isEqualTo(8);
    }

    @ParameterizedTest
    @MethodSource("stores")
    void aStateReadOfARuleOfTwoLimitsNamesTheOneThatDecides(Served s) throws Exception {
        for (int i = 0; i < 5; i++) {
            assertThat(check(s, "login", "two-limits", "acme").statusCode()).isEqualTo(200);
        }
        JsonNode state = ok(post(s, "/v1/admin/state", "{\"rule\": \"login\", \"key\": \"two-limits\","
                + " \"domain\": \"acme\", \"permits\": 0}", TOKEN));
        assertThat(state.get("remaining").asLong()).isZero();
        assertThat(state.get("limit").asText()).isEqualTo("hourly");
        JsonNode one = ok(post(s, "/v1/admin/state", "{\"rule\": \"login\", \"key\": \"two-limits\","
                + " \"domain\": \"acme\"}", TOKEN));
        assertThat(one.get("allowed").asBoolean()).isFalse();
    }

    @ParameterizedTest
    @MethodSource("stores")
    void resetFreesTheKey(Served s) throws Exception {
        for (int i = 0; i < 5; i++) {
            assertThat(check(s, "login", "reset-user", "acme").statusCode()).isEqualTo(200);
        }
        assertThat(check(s, "login", "reset-user", "acme").statusCode()).isEqualTo(429);
        // Another domain's key of the same name is not touched by the reset.
        assertThat(check(s, "login", "reset-user", "other").statusCode()).isEqualTo(200);
        JsonNode reset = ok(post(s, "/v1/admin/reset", "{\"rule\": \"login\", \"key\": \"reset-user\","
                + " \"domain\": \"acme\"}", TOKEN));
        assertThat(reset.toString()).isEqualTo("{\"reset\":true,\"rule\":\"login\",\"domain\":\"acme\","
                + "\"key\":\"reset-user\"}");
        JsonNode state = ok(post(s, "/v1/admin/state", "{\"rule\": \"login\", \"key\": \"reset-user\","
                + " \"domain\": \"acme\", \"permits\": 0}", TOKEN));
        assertThat(state.get("remaining").asLong()).isEqualTo(5);
        HttpResponse<String> again = check(s, "login", "reset-user", "acme");
        assertThat(again.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(again.body()).get("remaining").asLong()).isEqualTo(4);
        JsonNode other = ok(post(s, "/v1/admin/state", "{\"rule\": \"login\", \"key\": \"reset-user\","
                + " \"domain\": \"other\", \"permits\": 0}", TOKEN));
        assertThat(other.get("remaining").asLong()).isEqualTo(4);
    }

    @ParameterizedTest
    @MethodSource("stores")
    void theTopListsNameTheHammeredKeyFirst(Served s) throws Exception {
        String hammered = "hammer-" + s.name;
        for (int i = 0; i < 40; i++) {
            check(s, "api", hammered, "acme");
            if (i % 4 == 0) {
                check(s, "api", "bystander-" + i, "acme");
            }
        }
        // State reads are not decisions: however many, the key read does not enter the lists.
        for (int i = 0; i < 60; i++) {
            ok(post(s, "/v1/admin/state", "{\"rule\": \"api\", \"key\": \"only-read\"}", TOKEN));
        }
        JsonNode top = ok(get(s, "/v1/admin/top?n=3", TOKEN));
        assertThat(top.get("window_seconds").asInt()).isEqualTo(60);
        JsonNode first = top.get("hottest").get(0);
        assertThat(first.get("rule").asText()).isEqualTo("api");
        assertThat(first.get("domain").asText()).isEqualTo("acme");
        assertThat(first.get("key").asText()).isEqualTo(hammered);
        assertThat(first.get("count").asLong()).isEqualTo(40);
        assertThat(first.get("error").asLong()).isZero();
        assertThat(top.get("hottest")).hasSize(3);
        JsonNode rejected = top.get("most_rejected").get(0);
        assertThat(rejected.get("key").asText()).isEqualTo(hammered);
        assertThat(rejected.get("count").asLong()).isEqualTo(35);
        assertThat(top.toString()).doesNotContain("only-read");
        assertThat(top.get("decisions").asLong()).isGreaterThanOrEqualTo(50);
        assertThat(top.get("rejections").asLong()).isGreaterThanOrEqualTo(35);
    }

    @ParameterizedTest
    @MethodSource("stores")
    void everyOperatorEndpointRefusesACallWithoutTheToken(Served s) throws Exception {
        for (int i = 0; i < 5; i++) {
            check(s, "api", "guarded", null);
        }
        String body = "{\"rule\": \"api\", \"key\": \"guarded\"}";
        for (String token : new String[] {null, "wrong", TOKEN + "x"}) {
            for (HttpResponse<String> r : List.of(post(s, "/v1/admin/state", body, token),
                    post(s, "/v1/admin/reset", body, token), get(s, "/v1/admin/top", token))) {
                assertThat(r.statusCode()).as(r.uri() + " with token " + token).isEqualTo(401);
                assertThat(r.headers().firstValue("www-authenticate")).hasValueSatisfying(v -> assertThat(v)
                        .startsWith("Bearer"));
                assertThat(r.body()).contains("bearer token").doesNotContain("guarded");
            }
        }
        // The refused resets reset nothing.
        assertThat(check(s, "api", "guarded", null).statusCode()).isEqualTo(429);
    }

    @ParameterizedTest
    @MethodSource("stores")
    void invalidInputIsRefusedNamingTheField(Served s) throws Exception {
        assertRefused(post(s, "/v1/admin/state", "{\"rule\": \"nope\", \"key\": \"k\"}", TOKEN),
                "rule: unknown rule \"nope\"; the rules are api, login");
        assertRefused(post(s, "/v1/admin/reset", "{\"rule\": \"api\"}", TOKEN),
                "key: required: the key to decide for, e.g. \"user:42\"");
        assertRefused(post(s, "/v1/admin/reset", "{\"rule\": \"api\", \"key\": \"k\", \"permits\": 1}", TOKEN),
                "permits: unknown field; expected rule (or limit), key, domain; or domain and descriptor");
        assertRefused(post(s, "/v1/admin/state", "{\"rule\": \"api\", \"limit\": \"hourly\", \"key\": \"k\"}", TOKEN),
                "give exactly one of \"rule\" and \"limit\"");
        assertRefused(post(s, "/v1/admin/state", "{\"rule\": \"api\", \"key\": \"k\", \"permits\": 6}", TOKEN),
                "permits: must be in [0, 5] for rule 'api' (no more can ever be granted at once), was 6");
        assertRefused(get(s, "/v1/admin/top?n=0", TOKEN), "n: expected an integer in [1, 128]; was 0");
        assertRefused(get(s, "/v1/admin/top?n=ten", TOKEN), "n: expected an integer in [1, 128]; was \"ten\"");
        assertRefused(get(s, "/v1/admin/top?limit=3", TOKEN),
                "limit: unknown query parameter; expected n, the length of each list");
    }

    @ParameterizedTest
    @MethodSource("stores")
    void anEnvoyDescriptorsCounterIsReadAndReset(Served s) throws Exception {
        String descriptor = "\"domain\": \"ops\", \"descriptor\": [{\"key\": \"tenant\", \"value\": \"t-read\"}]";
        for (int i = 0; i < 2; i++) {
            assertThat(post(s, "/v1/check", "{" + descriptor + "}", TOKEN).statusCode()).isEqualTo(200);
        }
        JsonNode state = null;
        for (int i = 0; i < 5; i++) {
            state = ok(post(s, "/v1/admin/state", "{" + descriptor + "}", TOKEN));
            assertThat(state.get("remaining").asLong()).isEqualTo(1);
        }
        assertThat(state.get("rule").asText()).isEqualTo("rls:ops.tenant");
        assertThat(state.get("domain").asText()).isEqualTo("ops");
        assertThat(state.get("descriptor").toString()).isEqualTo("[{\"key\":\"tenant\",\"value\":\"t-read\"}]");
        assertThat(state.get("key").asText()).isEqualTo("tenant=t-read");
        assertThat(state.get("allowed").asBoolean()).isTrue();
        JsonNode two = ok(post(s, "/v1/admin/state", "{" + descriptor + ", \"permits\": 2}", TOKEN));
        assertThat(two.get("allowed").asBoolean()).isFalse();
        // The reads charged nothing: one hit is left, then the counter is over.
        assertThat(post(s, "/v1/check", "{" + descriptor + "}", TOKEN).statusCode()).isEqualTo(200);
        assertThat(post(s, "/v1/check", "{" + descriptor + "}", TOKEN).statusCode()).isEqualTo(429);
        // Another tenant's counter is its own.
        JsonNode other = ok(post(s, "/v1/admin/state",
                "{\"domain\": \"ops\", \"descriptor\": [{\"key\": \"tenant\", \"value\": \"t-other\"}]}", TOKEN));
        assertThat(other.get("remaining").asLong()).isEqualTo(3);

        JsonNode reset = ok(post(s, "/v1/admin/reset", "{" + descriptor + "}", TOKEN));
        assertThat(reset.get("reset").asBoolean()).isTrue();
        assertThat(reset.get("key").asText()).isEqualTo("tenant=t-read");
        assertThat(ok(post(s, "/v1/admin/state", "{" + descriptor + "}", TOKEN)).get("remaining").asLong())
                .isEqualTo(3);
        assertThat(post(s, "/v1/check", "{" + descriptor + "}", TOKEN).statusCode()).isEqualTo(200);
    }

    @ParameterizedTest
    @MethodSource("stores")
    void anEnvoyDescriptorCannotBeReadOrResetWithoutTheToken(Served s) throws Exception {
        String descriptor = "{\"domain\": \"ops\", \"descriptor\": [{\"key\": \"tenant\", \"value\": \"t-guarded\"}]}";
        for (int i = 0; i < 4; i++) {
            post(s, "/v1/check", descriptor, TOKEN);
        }
        for (String token : new String[] {null, "wrong"}) {
            for (String path : List.of("/v1/admin/state", "/v1/admin/reset")) {
                HttpResponse<String> r = post(s, path, descriptor, token);
                assertThat(r.statusCode()).as(path + " with token " + token).isEqualTo(401);
                assertThat(r.body()).contains("bearer token").doesNotContain("t-guarded");
            }
        }
        // The refused resets reset nothing; with the token the counter reads as over.
        assertThat(post(s, "/v1/check", descriptor, TOKEN).statusCode()).isEqualTo(429);
        assertThat(ok(post(s, "/v1/admin/state", descriptor, TOKEN)).get("remaining").asLong()).isZero();
    }

    @ParameterizedTest
    @MethodSource("stores")
    void aDescriptorThatNamesNoCounterIsRefusedNamingTheField(Served s) throws Exception {
        assertRefused(post(s, "/v1/admin/state", "{\"domain\": \"nope\", \"descriptor\": [{\"key\": \"tenant\","
                + " \"value\": \"a\"}]}", TOKEN), "domain: unknown Envoy domain \"nope\"; the domains are ops");
        assertRefused(post(s, "/v1/admin/reset", "{\"domain\": \"ops\", \"descriptor\": [{\"key\": \"region\","
                + " \"value\": \"a\"}]}", TOKEN), "descriptor: matches no rate_limit of domain \"ops\"");
        assertRefused(post(s, "/v1/admin/state", "{\"domain\": \"ops\", \"descriptor\": [{\"key\": \"tenant\","
                + " \"value\": \"internal-1\"}]}", TOKEN),
                "descriptor: matches ops.tenant_internal*, which is unlimited and keeps no count");
        assertRefused(post(s, "/v1/admin/state", "{\"descriptor\": [{\"key\": \"tenant\", \"value\": \"a\"}]}",
                TOKEN), "domain: required with \"descriptor\": the Envoy domain");
        assertRefused(post(s, "/v1/admin/reset", "{\"domain\": \"ops\", \"key\": \"a\", \"descriptor\": []}", TOKEN),
                "key: not used with \"descriptor\": the Envoy domain and the descriptor's entries name the key");
        assertRefused(post(s, "/v1/admin/state", "{\"domain\": \"ops\", \"descriptor\": {\"tenant\": \"a\"}}",
                TOKEN), "descriptor: expected a list of {\"key\", \"value\"} entries; was an object");
    }

    private static void assertRefused(HttpResponse<String> r, String error) throws IOException {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(JSON.readTree(r.body()).get("error").asText()).isEqualTo(error);
    }

    private HttpResponse<String> check(Served s, String rule, String key, String domain) {
        return post(s, "/v1/check", "{\"rule\": \"" + rule + "\", \"key\": \"" + key + "\""
                + (domain == null ? "" : ", \"domain\": \"" + domain + "\"") + "}", TOKEN);
    }

    private static JsonNode ok(HttpResponse<String> r) throws IOException {
        assertThat(r.statusCode()).as(r.uri() + ": " + r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private HttpResponse<String> post(Served s, String path, String body, String token) {
        return send(request(s, path, token).POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    private HttpResponse<String> get(Served s, String path, String token) {
        return send(request(s, path, token).GET().build());
    }

    private static HttpRequest.Builder request(Served s, String path, String token) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.httpPort + path))
                .timeout(Duration.ofSeconds(30));
        return token == null ? b : b.header("Authorization", "Bearer " + token);
    }

    private HttpResponse<String> send(HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** One {@code sluice serve} process with the token, and its HTTP port (read from the line it prints). */
    static final class Served {
        final String name;
        final Process process;
        final int httpPort;

        private Served(String name, Process process, int httpPort) {
            this.name = name;
            this.process = process;
            this.httpPort = httpPort;
        }

        static Served start(String store, Path config, Path rules, Path envoy) throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                    ServeCommand.class.getName(), "--config", config.toString(), "--store", store, "--rules",
                    rules.toString(), "--rules", envoy.toString(), "--token", TOKEN, "--http-port", "0", "--grpc-port", "0")
                    .redirectErrorStream(true).start();
            LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    // the process ended
                }
            });
            reader.setDaemon(true);
            reader.start();
            Pattern httpLine = Pattern.compile("HTTP on http://127\\.0\\.0\\.1:(\\d+)");
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            StringBuilder seen = new StringBuilder();
            while (true) {
                String line = lines.poll(1, TimeUnit.SECONDS);
                if (line == null) {
                    if (System.nanoTime() > deadline || !p.isAlive()) {
                        p.destroyForcibly();
                        throw new AssertionError("sluice serve did not start:\n" + seen);
                    }
                    continue;
                }
                seen.append(line).append('\n');
                Matcher m = httpLine.matcher(line);
                if (m.find()) {
                    return new Served(store.startsWith("redis") ? "redis" : store, p, Integer.parseInt(m.group(1)));
                }
            }
        }

        void stop() throws InterruptedException {
            process.destroy(); // SIGTERM: the server stops gracefully
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
