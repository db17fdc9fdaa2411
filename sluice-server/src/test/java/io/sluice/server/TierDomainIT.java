package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.linecorp.armeria.client.grpc.GrpcClients;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.sluice.testkit.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tiers of a rule match the key a check sends with a {@code domain}, not the domain and key the server joins to
 * keep tenants apart: the tier applies in every domain, each domain keeps its own state under it, and a domain
 * cannot make a key fall under a tier. Envoy descriptors are matched by their domain's configuration only. On
 * the in-memory store and on Redis, over HTTP and gRPC.
 */
class TierDomainIT {

    static final String RULES = String.join("\n",
            "limits:",
            "  per_hour: {algorithm: fixed_window, limit: 1, window: 1h, align: first_request}",
            "  premium_per_hour: {algorithm: fixed_window, limit: 3, window: 1h, align: first_request}",
            "rules:",
            "  api:",
            "    limits: [per_hour]",
            "    tiers:",
            "      premium: {keys: [tenant-acme, \"tenant-big-*\"], limits: [premium_per_hour]}",
            "      internal: {keys: [\"svc-*\"], unlimited: true}",
            "      blocked: {keys: [tenant-evil], blocked: true}",
            "");

    /** An Envoy domain named as a tenant of the HTTP checks: its own configuration decides its descriptors. */
    static final String ENVOY = String.join("\n",
            "domain: acme",
            "descriptors:",
            "  - key: tenant",
            "    rate_limit: {unit: day, requests_per_unit: 1}",
            "  - key: tenant",
            "    value: tenant-acme",
            "    rate_limit: {unit: day, requests_per_unit: 2}",
            "");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static RedisServer redis;

    @TempDir
    static Path dir;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void tiersMatchTheKeyAsSentAndEachDomainKeepsItsOwnState(String kind) throws Exception {
        Path rules = dir.resolve("rules-" + kind + ".yaml");
        Files.writeString(rules, RULES);
        Path envoy = dir.resolve("envoy-" + kind + ".yaml");
        Files.writeString(envoy, ENVOY);
        try (SluiceServer server = SluiceServer.builder().httpPort(0).grpcPort(0).rules(List.of(rules, envoy))
                .store(kind.equals("redis") ? redis.uri() : "memory").reloadInterval(Duration.ZERO)
                // About tiers, not timeouts: a Redis timeout no loaded machine reaches.
                .redis(new StoreFactory.RedisTuning(Duration.ofSeconds(5), 3, Duration.ofMillis(250)))
                .shutdown(Duration.ZERO, Duration.ofSeconds(5)).build().start()) {
            String base = "http://127.0.0.1:" + server.httpPort();

            HttpResponse<String> acme = check(base, "tenant-acme", "acme", 3);
            assertThat(acme.statusCode()).isEqualTo(200);
            assertThat(acme.body()).endsWith("\"remaining\":0,\"retry_after_ms\":0,\"reset_after_ms\":3600000,"
                    + "\"wait_ms\":0,\"limit\":\"premium_per_hour\",\"tier\":\"premium\"}");
            assertThat(acme.headers().firstValue("RateLimit-Policy")).hasValue("\"premium_per_hour\";q=3;w=3600");
            assertThat(check(base, "tenant-acme", "acme", 1).statusCode()).as("acme's premium count is spent")
                    .isEqualTo(429);
            // The same key in another domain, and without one: the same tier, with state of its own.
            HttpResponse<String> globex = check(base, "tenant-acme", "globex", 3);
            assertThat(globex.statusCode()).isEqualTo(200);
            assertThat(globex.body()).endsWith("\"tier\":\"premium\"}");
            assertThat(check(base, "tenant-acme", null, 3).statusCode()).isEqualTo(200);
            // Patterns too; the permits are checked against the tier's limits (3), not the rule's (1).
            assertThat(check(base, "tenant-big-7", "acme", 3).body()).endsWith("\"tier\":\"premium\"}");
            HttpResponse<String> blocked = check(base, "tenant-evil", "acme", 1);
            assertThat(blocked.statusCode()).isEqualTo(429);
            assertThat(blocked.body()).contains("\"retry_after_ms\":null").endsWith("\"tier\":\"blocked\"}");
            assertThat(check(base, "svc-billing", "acme", 1000).body()).endsWith("\"tier\":\"internal\"}");
            // The domain is not the key: a domain that a tier's pattern would match gives its keys no tier.
            HttpResponse<String> small = check(base, "tenant-small", "svc-x", 1);
            assertThat(small.body()).endsWith("\"limit\":\"per_hour\"}");
            assertThat(check(base, "tenant-small", "svc-x", 1).statusCode()).isEqualTo(429);

            // An atomic batch decides each key under its own tier, in its own domain.
            HttpResponse<String> batch = post(base + "/v1/check/batch", "{\"atomic\": true, \"checks\": ["
                    + body("tenant-acme", "initech", 1) + ", " + body("tenant-big-1", "initech", 1) + "]}");
            assertThat(batch.statusCode()).isEqualTo(200);
            assertThat(batch.body()).as("both keys under premium (3), each with its own count in initech")
                    .contains("\"allowed\":true,\"granted\":1,\"remaining\":2,")
                    .contains("\"limit\":\"premium_per_hour\"");

            // The operator endpoints read and reset the state where the tier keeps it.
            JsonNode state = JSON.readTree(post(base + "/v1/admin/state",
                    "{\"rule\": \"api\", \"key\": \"tenant-acme\", \"domain\": \"acme\"}").body());
            assertThat(state.get("tier").asText()).isEqualTo("premium");
            assertThat(state.get("remaining").asLong()).isZero();
            assertThat(state.get("rejected_by").asText()).isEqualTo("premium_per_hour");
            assertThat(post(base + "/v1/admin/reset", "{\"rule\": \"api\", \"key\": \"tenant-acme\", \"domain\":"
                    + " \"acme\"}").statusCode()).isEqualTo(200);
            assertThat(check(base, "tenant-acme", "acme", 3).statusCode()).as("reset cleared the tier's count")
                    .isEqualTo(200);
            assertThat(check(base, "tenant-acme", "globex", 1).statusCode()).as("only in acme").isEqualTo(429);

            // Envoy's domain "acme" is its configuration's: the descriptor's value picks envoy's own override (2
            // a day), never a tier of a Sluice rule, over gRPC and /json alike.
            RateLimitServiceGrpc.RateLimitServiceBlockingStub rls = GrpcClients.newClient("http://127.0.0.1:"
                    + server.grpcPort(), RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
            RateLimitResponse r = rls.shouldRateLimit(RateLimitRequest.newBuilder().setDomain("acme")
                    .addDescriptors(RateLimitDescriptor.newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder()
                            .setKey("tenant").setValue("tenant-acme"))).build());
            assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(2);
            JsonNode json = JSON.readTree(post(base + "/json", "{\"domain\": \"acme\", \"descriptors\": [{\"entries\":"
                    + " [{\"key\": \"tenant\", \"value\": \"tenant-other\"}]}]}").body());
            assertThat(json.at("/statuses/0/currentLimit/requestsPerUnit").asLong()).isEqualTo(1);
        }
    }

    private static String body(String key, String domain, int permits) {
        return "{\"rule\": \"api\", \"key\": \"" + key + "\"" + (domain == null ? "" : ", \"domain\": \"" + domain
                + "\"") + ", \"permits\": " + permits + "}";
    }

    private HttpResponse<String> check(String base, String key, String domain, int permits) throws Exception {
        return post(base + "/v1/check", body(key, domain, permits));
    }

    private HttpResponse<String> post(String uri, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
