package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.UInt64Value;
import com.linecorp.armeria.client.grpc.GrpcClients;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Envoy's gRPC rate-limit service, called with a client built from Envoy's published stubs, on the example
 * configurations of envoyproxy/ratelimit's README: each answers as the README describes. The {@code /json}
 * endpoint answers its README example the same way.
 *
 * <p>One server for the class: stopping one takes a second or two, which was
 * most of this class's time with a server per test. Each test starts at the next midnight (UTC) of the server's
 * manual clock, as a server of its own started at one (the clock's default start), past every window of the
 * configuration (a second to a day): no test sees another's counts, and each sees whole windows. The one shared
 * figure, the shadow metric, is of example 6's own rule.
 */
class EnvoyRlsIT {

    /** The README's examples 1 to 9 (example 4's two variants as two domains), and the /json example's. */
    static final String CONFIG = String.join("\n",
            "domain: mongo_cps",
            "descriptors:",
            "  - key: database",
            "    value: users",
            "    rate_limit:",
            "      unit: second",
            "      requests_per_unit: 500",
            "",
            "  - key: database",
            "    value: default",
            "    rate_limit:",
            "      unit: second",
            "      requests_per_unit: 500",
            "---",
            "domain: messaging",
            "descriptors:",
            "  # Only allow 5 marketing messages a day",
            "  - key: message_type",
            "    value: marketing",
            "    descriptors:",
            "      - key: to_number",
            "        rate_limit:",
            "          unit: day",
            "          requests_per_unit: 5",
            "",
            "  # Only allow 100 messages a day to any unique phone number",
            "  - key: to_number",
            "    rate_limit:",
            "      unit: day",
            "      requests_per_unit: 100",
            "---",
            "domain: edge_proxy_per_ip",
            "descriptors:",
            "  - key: remote_address",
            "    rate_limit:",
            "      unit: second",
            "      requests_per_unit: 10",
            "",
            "  # Black list IP",
            "  - key: remote_address",
            "    value: 50.0.0.5",
            "    rate_limit:",
            "      unit: second",
            "      requests_per_unit: 0",
            "---",
            "domain: example4",
            "descriptors:",
            "  - key: key",
            "    value: value",
            "    rate_limit:",
            "      requests_per_unit: 300",
            "      unit: second",
            "---",
            "domain: example4_nested",
            "descriptors:",
            "  - key: key",
            "    value: value",
            "    descriptors:",
            "      - key: subkey",
            "        rate_limit:",
            "          requests_per_unit: 300",
            "          unit: second",
            "---",
            "domain: internal",
            "descriptors:",
            "  - key: ldap",
            "    rate_limit:",
            "      unlimited: true",
            "",
            "  - key: azure",
            "    rate_limit:",
            "      unit: minute",
            "      requests_per_unit: 100",
            "---",
            "domain: example6",
            "descriptors:",
            "  - key: service",
            "    descriptors:",
            "      - key: user",
            "        value: user-a",
            "        rate_limit:",
            "          requests_per_unit: 10",
            "          unit: second",
            "        shadow_mode: true",
            "      - key: user",
            "        value: user-b",
            "        rate_limit:",
            "          requests_per_unit: 20",
            "          unit: second",
            "---",
            "domain: example7",
            "descriptors:",
            "  - key: key_1",
            "    value: value_1",
            "    descriptors:",
            "      - key: user",
            "        value: bkthomps",
            "        rate_limit:",
            "          name: specific_limit",
            "          requests_per_unit: 5",
            "          unit: second",
            "  - key: key_2",
            "    value: value_2",
            "    descriptors:",
            "      - key: user",
            "        value: bkthomps",
            "        rate_limit:",
            "          replaces:",
            "            - name: specific_limit",
            "          requests_per_unit: 10",
            "          unit: second",
            "---",
            "domain: example8",
            "descriptors:",
            "  - key: key1",
            "    detailed_metric: true",
            "    rate_limit:",
            "      unit: minute",
            "      requests_per_unit: 10",
            "  - key: key1",
            "    value: value1",
            "    rate_limit:",
            "      unit: minute",
            "      requests_per_unit: 20",
            "---",
            "domain: example9",
            "descriptors:",
            "  - key: key1",
            "    value: value*",
            "    rate_limit:",
            "      unit: minute",
            "      requests_per_unit: 20",
            "---",
            "domain: dummy",
            "descriptors:",
            "  - key: one_per_minute",
            "    rate_limit: {unit: minute, requests_per_unit: 1}",
            "  - key: two_per_minute",
            "    rate_limit: {unit: minute, requests_per_unit: 2}",
            "");

    @TempDir
    static Path dir;
    static TestServer t;
    static RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;

    @BeforeAll
    static void start() {
        t = TestServer.start(dir, CONFIG);
        rls = GrpcClients.newClient("http://127.0.0.1:" + t.server.grpcPort(),
                RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
    }

    /** The start of the next day (UTC), where a test of its own server began: every window is new and whole. */
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

    static RateLimitDescriptor descriptor(String... keyValues) {
        RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
        for (int i = 0; i < keyValues.length; i += 2) {
            d.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(keyValues[i]).setValue(keyValues[i + 1]));
        }
        return d.build();
    }

    static RateLimitResponse call(String domain, int hits, RateLimitDescriptor... descriptors) {
        return rls.shouldRateLimit(RateLimitRequest.newBuilder().setDomain(domain).setHitsAddend(hits)
                .addAllDescriptors(List.of(descriptors)).build());
    }

    @Test
    void example1PerDatabaseLimits() {
        RateLimitResponse r = call("mongo_cps", 500, descriptor("database", "users"));
        assertThat(r.getOverallCode()).isEqualTo(Code.OK);
        DescriptorStatus s = r.getStatuses(0);
        assertThat(s.getCurrentLimit().getRequestsPerUnit()).isEqualTo(500);
        assertThat(s.getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.SECOND);
        assertThat(s.getLimitRemaining()).isZero();
        assertThat(s.getDurationUntilReset().getSeconds()).isEqualTo(1);
        assertThat(call("mongo_cps", 1, descriptor("database", "users")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(call("mongo_cps", 1, descriptor("database", "default")).getStatuses(0).getLimitRemaining())
                .isEqualTo(499);
        // A new second, a new window.
        t.clock.advanceMillis(1_000);
        assertThat(call("mongo_cps", 1, descriptor("database", "users")).getOverallCode()).isEqualTo(Code.OK);
    }

    @Test
    void example2NestedAndAggregateLimitsOnOneCall() {
        RateLimitDescriptor marketing = descriptor("message_type", "marketing", "to_number", "2061111111");
        RateLimitDescriptor anyMessage = descriptor("to_number", "2061111111");
        for (int i = 4; i >= 0; i--) {
            RateLimitResponse r = call("messaging", 0, marketing, anyMessage);
            assertThat(r.getOverallCode()).isEqualTo(Code.OK);
            assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(i);
            assertThat(r.getStatuses(1).getLimitRemaining()).isEqualTo(95 + i);
        }
        RateLimitResponse sixth = call("messaging", 0, marketing, anyMessage);
        assertThat(sixth.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(sixth.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(sixth.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.DAY);
        assertThat(sixth.getStatuses(1).getCode()).isEqualTo(Code.OK);
        assertThat(sixth.getStatuses(1).getLimitRemaining()).isEqualTo(94);
        // Each phone number has its own counters.
        assertThat(call("messaging", 0, descriptor("message_type", "marketing", "to_number", "2062222222"))
                .getStatuses(0).getLimitRemaining()).isEqualTo(4);
        // The response headers describe the descriptor over the limit.
        Map<String, String> headers = headers(sixth);
        assertThat(headers).containsEntry("X-RateLimit-Limit", "5").containsEntry("X-RateLimit-Remaining", "0")
                .containsEntry("X-RateLimit-Reset", "86400")
                .containsEntry("RateLimit-Policy", "\"message_type_marketing.to_number\";q=5;w=86400,"
                        + " \"to_number\";q=100;w=86400")
                .containsEntry("RateLimit", "\"message_type_marketing.to_number\";r=0;t=86400");
    }

    @Test
    void example3BlockedAddressIsAlwaysOverTheLimit() {
        for (int i = 0; i < 3; i++) {
            RateLimitResponse r = call("edge_proxy_per_ip", 0, descriptor("remote_address", "50.0.0.5"));
            assertThat(r.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
            assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isZero();
        }
        for (int i = 0; i < 10; i++) {
            assertThat(call("edge_proxy_per_ip", 0, descriptor("remote_address", "50.0.0.1")).getOverallCode())
                    .isEqualTo(Code.OK);
        }
        assertThat(call("edge_proxy_per_ip", 0, descriptor("remote_address", "50.0.0.1")).getOverallCode())
                .isEqualTo(Code.OVER_LIMIT);
    }

    @Test
    void example4DepthMustMatch() {
        RateLimitResponse shallow = call("example4", 0, descriptor("key", "value", "subkey", "subvalue"));
        assertThat(shallow.getOverallCode()).isEqualTo(Code.OK);
        assertThat(shallow.getStatuses(0).hasCurrentLimit()).isFalse();
        RateLimitResponse nested = call("example4_nested", 0, descriptor("key", "value", "subkey", "subvalue"));
        assertThat(nested.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(300);
        assertThat(nested.getStatuses(0).getLimitRemaining()).isEqualTo(299);
    }

    @Test
    void example5UnlimitedIsOkWithMaxRemaining() {
        RateLimitResponse r = call("internal", 0, descriptor("ldap", "x"), descriptor("azure", "x"));
        assertThat(r.getOverallCode()).isEqualTo(Code.OK);
        assertThat(Integer.toUnsignedLong(r.getStatuses(0).getLimitRemaining())).isEqualTo(4_294_967_295L);
        assertThat(r.getStatuses(0).hasCurrentLimit()).isFalse();
        assertThat(r.getStatuses(1).getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.MINUTE);
        assertThat(r.getStatuses(1).getLimitRemaining()).isEqualTo(99);
    }

    @Test
    void example6ShadowModeCountsButNeverLimits() {
        RateLimitDescriptor userA = descriptor("service", "auth-service", "user", "user-a");
        RateLimitDescriptor userB = descriptor("service", "auth-service", "user", "user-b");
        for (int i = 0; i < 15; i++) {
            assertThat(call("example6", 0, userA).getOverallCode()).isEqualTo(Code.OK);
        }
        assertThat(call("example6", 0, userA).getStatuses(0).getLimitRemaining()).isZero();
        assertThat(call("example6", 20, userB).getOverallCode()).isEqualTo(Code.OK);
        assertThat(call("example6", 0, userB).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(t.get("/metrics").body())
                .contains("sluice_decisions_total{api=\"grpc\",outcome=\"shadow\","
                        + "rule=\"example6.service.user_user-a\"} 6.0");
    }

    @Test
    void example7ReplacesDropsTheReplacedLimit() {
        RateLimitDescriptor one = descriptor("key_1", "value_1", "user", "bkthomps");
        RateLimitDescriptor two = descriptor("key_2", "value_2", "user", "bkthomps");
        for (int i = 0; i < 10; i++) {
            RateLimitResponse r = call("example7", 0, one, two);
            assertThat(r.getOverallCode()).isEqualTo(Code.OK);
            assertThat(r.getStatuses(0).hasCurrentLimit()).isFalse();
            assertThat(r.getStatuses(1).getLimitRemaining()).isEqualTo(9 - i);
        }
        assertThat(call("example7", 0, one, two).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
        // The replaced limit was not charged by those calls: alone it still has all 5.
        RateLimitResponse alone = call("example7", 0, one);
        assertThat(alone.getStatuses(0).getCurrentLimit().getName()).isEqualTo("specific_limit");
        assertThat(alone.getStatuses(0).getLimitRemaining()).isEqualTo(4);
    }

    @Test
    void examples8And9DefaultAndWildcardValues() {
        assertThat(call("example8", 0, descriptor("key1", "unspecified_value")).getStatuses(0).getCurrentLimit()
                .getRequestsPerUnit()).isEqualTo(10);
        assertThat(call("example8", 0, descriptor("key1", "value1")).getStatuses(0).getCurrentLimit()
                .getRequestsPerUnit()).isEqualTo(20);
        assertThat(call("example9", 0, descriptor("key1", "value_1")).getStatuses(0).getCurrentLimit()
                .getRequestsPerUnit()).isEqualTo(20);
        assertThat(call("example9", 0, descriptor("key1", "value_2")).getStatuses(0).getLimitRemaining())
                .isEqualTo(19);
    }

    @Test
    void perDescriptorHitsAddendAndOverrides() {
        RateLimitRequest request = RateLimitRequest.newBuilder().setDomain("mongo_cps").setHitsAddend(7)
                .addDescriptors(descriptor("database", "users").toBuilder().setHitsAddend(UInt64Value.of(100)))
                .addDescriptors(descriptor("database", "default"))
                .addDescriptors(descriptor("anything", "x").toBuilder().setLimit(
                        RateLimitDescriptor.RateLimitOverride.newBuilder().setRequestsPerUnit(3)
                                .setUnit(io.envoyproxy.envoy.type.v3.RateLimitUnit.HOUR)))
                .build();
        RateLimitResponse r = rls.shouldRateLimit(request);
        assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(400);
        assertThat(r.getStatuses(1).getLimitRemaining()).isEqualTo(493);
        assertThat(r.getStatuses(2).getCode()).isEqualTo(Code.OVER_LIMIT); // 7 hits of a 3 per hour override
        assertThat(r.getStatuses(2).getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.HOUR);
    }

    @Test
    void unknownDomainsAndDescriptorsAreOk() {
        RateLimitResponse r = call("nobody", 0, descriptor("a", "b"));
        assertThat(r.getOverallCode()).isEqualTo(Code.OK);
        assertThat(r.getStatuses(0)).isEqualTo(DescriptorStatus.newBuilder().setCode(Code.OK).build());
        assertThat(r.getResponseHeadersToAddCount()).isZero();
    }

    @Test
    void invalidRequestsAreInvalidArgumentNamingTheField() {
        assertThatThrownBy(() -> call("", 0, descriptor("a", "b")))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).isEqualTo("domain: rate limit domain must not be empty");
                });
        assertThatThrownBy(() -> call("mongo_cps", 0))
                .hasMessageContaining("INVALID_ARGUMENT: descriptors: rate limit descriptor list must not be empty");
        assertThatThrownBy(() -> call("mongo_cps", 0, descriptor("", "b")))
                .hasMessageContaining("INVALID_ARGUMENT: descriptors[0].entries[0].key: must not be empty");
        RateLimitDescriptor[] many = new RateLimitDescriptor[101];
        java.util.Arrays.fill(many, descriptor("database", "users"));
        assertThatThrownBy(() -> call("mongo_cps", 0, many))
                .hasMessageContaining("INVALID_ARGUMENT: descriptors: at most 100 descriptors per request, was 101");
        assertThatThrownBy(() -> call("mongo_cps", 0, descriptor("database", "x".repeat(600))))
                .hasMessageContaining("INVALID_ARGUMENT: descriptors[0].entries: the entries make a key of");
        // None of it was counted.
        assertThat(call("mongo_cps", 0, descriptor("database", "users")).getStatuses(0).getLimitRemaining())
                .isEqualTo(499);
    }

    @Test
    void jsonEndpointAnswersItsReadmeExample() throws Exception {
        HttpResponse<String> first = t.post("/json", "{\"domain\": \"dummy\", \"descriptors\": [{\"entries\":"
                + " [{\"key\": \"one_per_minute\", \"value\": \"something\"}]}]}");
        assertThat(first.statusCode()).isEqualTo(200);
        HttpResponse<String> second = t.post("/json", "{\"domain\": \"dummy\", \"descriptors\": ["
                + "{\"entries\": [{\"key\": \"one_per_minute\", \"value\": \"something\"}]},"
                + "{\"entries\": [{\"key\": \"two_per_minute\", \"value\": \"something\"}]}]}");
        assertThat(second.statusCode()).isEqualTo(429);
        JsonNode body = new ObjectMapper().readTree(second.body());
        // The response of envoyproxy/ratelimit's README, field for field (it predates durationUntilReset).
        JsonNode readme = new ObjectMapper().readTree("{\"overallCode\": \"OVER_LIMIT\", \"statuses\": ["
                + "{\"code\": \"OVER_LIMIT\", \"currentLimit\": {\"requestsPerUnit\": 1, \"unit\": \"MINUTE\"}},"
                + "{\"code\": \"OK\", \"currentLimit\": {\"requestsPerUnit\": 2, \"unit\": \"MINUTE\"},"
                + " \"limitRemaining\": 1}]}");
        assertThat(body.get("overallCode")).isEqualTo(readme.get("overallCode"));
        for (int i = 0; i < 2; i++) {
            JsonNode status = body.get("statuses").get(i);
            JsonNode expected = readme.get("statuses").get(i);
            assertThat(status.get("code")).isEqualTo(expected.get("code"));
            assertThat(status.get("currentLimit")).isEqualTo(expected.get("currentLimit"));
            assertThat(status.get("limitRemaining")).isEqualTo(expected.get("limitRemaining"));
            assertThat(status.get("durationUntilReset").asText()).isEqualTo("60s");
        }
        assertThat(body.get("responseHeadersToAdd").toString()).contains("\"key\":\"X-RateLimit-Limit\"");
        HttpResponse<String> bad = t.post("/json", "{\"domain\": \"dummy\", \"descriptorz\": []}");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("not a RateLimitRequest in proto3 JSON").contains("descriptorz");
    }

    @Test
    void grpcHealthServiceServes() {
        HealthGrpc.HealthBlockingStub health = GrpcClients.newClient("http://127.0.0.1:" + t.server.grpcPort(),
                HealthGrpc.HealthBlockingStub.class);
        assertThat(health.check(HealthCheckRequest.getDefaultInstance()).getStatus())
                .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
        assertThat(health.check(HealthCheckRequest.newBuilder()
                        .setService("envoy.service.ratelimit.v3.RateLimitService").build()).getStatus())
                .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
        // An unknown service is NOT_FOUND, as grpc.health.v1 specifies, not a blanket SERVING.
        assertThatThrownBy(() -> health.check(HealthCheckRequest.newBuilder().setService("no.such.Service").build()))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("NOT_FOUND");
    }

    static Map<String, String> headers(RateLimitResponse r) {
        Map<String, String> out = new LinkedHashMap<>();
        for (HeaderValue h : r.getResponseHeadersToAddList()) {
            out.put(h.getKey(), h.getValue());
        }
        return out;
    }
}
