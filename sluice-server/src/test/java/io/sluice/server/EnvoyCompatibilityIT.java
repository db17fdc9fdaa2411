package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.UInt64Value;
import com.linecorp.armeria.client.grpc.GrpcClients;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.sluice.testkit.redis.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * envoyproxy/ratelimit's own configurations (the unchanged fixtures of sluice-rules' EnvoyCompatibilityTest)
 * served over Envoy's gRPC protocol: share_threshold, quota_mode, shadow_mode, per-descriptor hits_addend 0,
 * descriptors without entries, middle wildcards, and envoy's per-descriptor statistics on {@code /metrics}.
 *
 * <p>One server of the fixtures for the class (a server's stop is most of a short test's time); each test starts
 * at the next midnight of its clock ({@link TestServer#nextDay}), so it sees whole, fresh windows, and the
 * statistics a test reads are of descriptors no other test sends. The two tests of other configurations start
 * servers of their own.
 */
class EnvoyCompatibilityIT {

    private static final Path FIXTURES = Path.of("..", "sluice-rules", "src", "test", "resources",
            "envoyproxy-ratelimit");

    @TempDir
    static Path dir;
    static TestServer t;
    static RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;

    static String fixture(String name) {
        try {
            return Files.readString(FIXTURES.resolve(name));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @BeforeAll
    static void start() {
        t = TestServer.start(dir, List.of(fixture("example_example.yaml"), fixture("share_threshold.yaml"),
                fixture("integration_basic.yaml"), fixture("integration_share_threshold.yaml")), b -> { });
        rls = client(t);
    }

    @BeforeEach
    void aNewDay() {
        t.nextDay();
    }

    @AfterAll
    static void stop() {
        if (t != null) {
            t.close();
        }
    }

    static RateLimitServiceGrpc.RateLimitServiceBlockingStub client(TestServer server) {
        return GrpcClients.newClient("http://127.0.0.1:" + server.server.grpcPort(),
                RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
    }

    static RateLimitDescriptor descriptor(String... keyValues) {
        RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
        for (int i = 0; i < keyValues.length; i += 2) {
            d.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(keyValues[i]).setValue(keyValues[i + 1]));
        }
        return d.build();
    }

    static RateLimitResponse call(String domain, RateLimitDescriptor... descriptors) {
        return call(rls, domain, descriptors);
    }

    static RateLimitResponse call(RateLimitServiceGrpc.RateLimitServiceBlockingStub rls, String domain,
                                  RateLimitDescriptor... descriptors) {
        return rls.shouldRateLimit(RateLimitRequest.newBuilder().setDomain(domain)
                .addAllDescriptors(List.of(descriptors)).build());
    }

    @Test
    void perDescriptorStatisticsAppearInMetrics() {
        // rl: foo (2/min) > bar (3/min): the request's descriptor foo=x, bar=y lands on the bar default.
        List<Code> codes = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            codes.add(call("rl", descriptor("foo", "x", "bar", "y")).getOverallCode());
        }
        assertThat(codes).containsExactly(Code.OK, Code.OK, Code.OK, Code.OVER_LIMIT);
        // baz=shady is 3/min in shadow_mode: the fourth is over the limit, counted as shadow, and answered OK.
        for (int i = 0; i < 4; i++) {
            assertThat(call("rl", descriptor("foo", "x", "baz", "shady")).getOverallCode()).isEqualTo(Code.OK);
        }
        String metrics = t.get("/metrics").body();
        assertThat(metrics)
                .contains("sluice_envoy_total_hits_total{domain=\"rl\",key=\"foo.bar\"} 4.0")
                .contains("sluice_envoy_within_limit_total{domain=\"rl\",key=\"foo.bar\"} 3.0")
                .contains("sluice_envoy_near_limit_total{domain=\"rl\",key=\"foo.bar\"} 1.0")
                .contains("sluice_envoy_over_limit_total{domain=\"rl\",key=\"foo.bar\"} 1.0")
                .contains("sluice_envoy_total_hits_total{domain=\"rl\",key=\"foo.baz_shady\"} 4.0")
                .contains("sluice_envoy_over_limit_total{domain=\"rl\",key=\"foo.baz_shady\"} 1.0")
                .contains("sluice_envoy_shadow_mode_total{domain=\"rl\",key=\"foo.baz_shady\"} 1.0");
        // detailed_metric: one series per request value, as in envoy.
        call("rl", descriptor("unspec", "abc"));
        assertThat(t.get("/metrics").body())
                .contains("sluice_envoy_total_hits_total{domain=\"rl\",key=\"unspec_abc\"} 1.0");
    }

    @Test
    void shareThresholdCountsEveryMatchingValueTogether() {
        String d = "share-threshold-test";
        assertThat(call(d, descriptor("files", "files/a")).getStatuses(0).getLimitRemaining()).isEqualTo(9);
        assertThat(call(d, descriptor("files", "files/b")).getStatuses(0).getLimitRemaining()).isEqualTo(8);
        // Without share_threshold each value has its own counter under the same wildcard limit.
        assertThat(call(d, descriptor("files_no_share", "files_no_share/a")).getStatuses(0).getLimitRemaining())
                .isEqualTo(9);
        assertThat(call(d, descriptor("files_no_share", "files_no_share/b")).getStatuses(0).getLimitRemaining())
                .isEqualTo(9);
        assertThat(t.get("/metrics").body())
                .contains("sluice_envoy_total_hits_total{domain=\"share-threshold-test\",key=\"files_files/*\"} 2.0");
    }

    @Test
    void wildcardsAnywhereInAValue() {
        RateLimitResponse r = call("test-domain", descriptor("multiroute", "svcXepYrpc"),
                descriptor("multiroute", "svcABCrpc"), descriptor("midpath", "/api/v1"));
        assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(50);
        assertThat(r.getStatuses(1).hasCurrentLimit()).isFalse();
        assertThat(r.getStatuses(2).getCurrentLimit().getRequestsPerUnit()).isEqualTo(100);
    }

    @Test
    void hitsAddendZeroChecksWithoutCounting() {
        RateLimitDescriptor check = descriptor("one_per_minute", "m").toBuilder()
                .setHitsAddend(UInt64Value.of(0)).build();
        RateLimitDescriptor hit = descriptor("one_per_minute", "m");
        assertThat(call("basic", check).getStatuses(0).getLimitRemaining()).isEqualTo(1);
        assertThat(call("basic", check).getStatuses(0).getLimitRemaining()).isEqualTo(1);
        assertThat(call("basic", hit).getOverallCode()).isEqualTo(Code.OK);
        // At the limit a check is over it (a deliberate difference: envoy says OK until a rejected hit counts).
        RateLimitResponse atLimit = call("basic", check);
        assertThat(atLimit.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(atLimit.getStatuses(0).getLimitRemaining()).isZero();
        assertThat(call("basic", hit).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(call("basic", check).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    }

    @Test
    void aDescriptorWithoutEntriesIsOkWithNoLimit() {
        RateLimitResponse r = call("basic", RateLimitDescriptor.getDefaultInstance());
        assertThat(r.getOverallCode()).isEqualTo(Code.OK);
        assertThat(r.getStatuses(0).hasCurrentLimit()).isFalse();
    }

    @Test
    void quotaModeFailsTheRequestOnlyWhenEveryQuotaIsSpent() {
        RateLimitDescriptor one = descriptor("service", "service_1"); // 1 a minute, quota_mode
        RateLimitDescriptor two = descriptor("service", "service_2"); // 2 a minute, quota_mode
        assertThat(call("rl", one, two).getOverallCode()).isEqualTo(Code.OK);
        RateLimitResponse second = call("rl", one, two);
        assertThat(second.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(second.getStatuses(1).getCode()).isEqualTo(Code.OK);
        assertThat(second.getOverallCode()).isEqualTo(Code.OK);
        assertThat(call("rl", one, two).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    }

    @Test
    void theBundledRulesAnswerTheDocumentedJsonExampleWithLimits(@TempDir Path own) throws Exception {
        java.net.http.HttpResponse<String> r;
        try (TestServer bundled = TestServer.start(own, List.of(), b -> { })) {
            r = bundled.post("/json", "{\"domain\": \"messaging\", \"descriptors\":"
                    + " [{\"entries\": [{\"key\": \"message_type\", \"value\": \"marketing\"}, {\"key\":"
                    + " \"to_number\", \"value\": \"2061111111\"}]}, {\"entries\": [{\"key\": \"to_number\","
                    + " \"value\": \"2061111111\"}]}]}");
        }
        assertThat(r.statusCode()).isEqualTo(200);
        com.fasterxml.jackson.databind.JsonNode body = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(r.body());
        assertThat(body.at("/statuses/0/currentLimit/requestsPerUnit").asInt()).isEqualTo(5);
        assertThat(body.at("/statuses/0/limitRemaining").asInt()).isEqualTo(4);
        assertThat(body.at("/statuses/1/currentLimit/requestsPerUnit").asInt()).isEqualTo(100);
        assertThat(body.at("/statuses/1/currentLimit/unit").asText()).isEqualTo("DAY");
    }

    @Test
    void onFailureDecidesWhenTheStoreIsDown(@TempDir Path own) throws Exception {
        String config = String.join("\n",
                "domain: d",
                "on_failure: fail_closed",
                "descriptors:",
                "  - key: open",
                "    on_failure: fail_open",
                "    rate_limit: {unit: minute, requests_per_unit: 5}",
                "  - key: closed",
                "    rate_limit: {unit: minute, requests_per_unit: 5}",
                "");
        RedisServer redis = RedisServer.start();
        io.sluice.Store down = StoreFactory.open(redis.uri());
        try (TestServer failing = TestServer.start(own, List.of(config), b -> b.store(down))) {
            RateLimitServiceGrpc.RateLimitServiceBlockingStub grpc = client(failing);
            assertThat(call(grpc, "d", descriptor("closed", "1")).getOverallCode()).isEqualTo(Code.OK);
            redis.kill();
            assertThat(call(grpc, "d", descriptor("open", "1")).getOverallCode()).isEqualTo(Code.OK);
            assertThat(call(grpc, "d", descriptor("closed", "1")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
            assertThat(failing.get("/metrics").body())
                    .contains("sluice_decisions_total{api=\"grpc\",outcome=\"fail_open\",rule=\"d.open\"} 1.0")
                    .contains("sluice_decisions_total{api=\"grpc\",outcome=\"fail_closed\",rule=\"d.closed\"} 1.0");
        } finally {
            down.close();
            redis.close();
        }
    }
}
