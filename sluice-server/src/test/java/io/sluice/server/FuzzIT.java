package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.client.grpc.GrpcClients;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.RequestHeaders;
import com.google.protobuf.UInt64Value;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Thousands of random and mutated requests against every API (HTTP checks and batches, /json, gRPC with
 * typed and with raw bytes), bounded in count and time. The server must answer every one, with a success or a
 * refusal (never an error of its own, never a hang), stay up, and charge nothing for any request it refused:
 * every request aims at one canary key, whose state is read back after each refusal and must not have moved.
 */
class FuzzIT {

    static final String RULES = String.join("\n",
            "limits:",
            "  hourly: {algorithm: fixed_window, limit: 1000000000000, window: 1h}",
            "  lease: {algorithm: concurrency, max_concurrent: 1000000, lease_ttl: 1h}",
            "rules:",
            "  fz: {limits: [hourly]}",
            "  fz_lease: {limits: [lease]}",
            "");
    static final String ENVOY = String.join("\n",
            "domain: fz",
            "descriptors:",
            "  - key: k",
            "    rate_limit: {unit: hour, requests_per_unit: 4000000000}",
            "");

    /** Valid requests aimed at the canary; mutations of these mostly stay aimed at it. */
    static final List<String> CHECKS = List.of(
            "{\"rule\": \"fz\", \"key\": \"canary\"}",
            "{\"rule\": \"fz\", \"key\": \"canary\", \"permits\": 2, \"op\": \"try\"}",
            "{\"rule\": \"fz\", \"key\": \"canary\", \"op\": \"try_at_most\", \"permits\": 3}",
            "{\"rule\": \"fz\", \"key\": \"canary\", \"op\": \"acquire\", \"max_wait_ms\": 250.5}",
            "{\"rule\": \"fz\", \"key\": \"canary\", \"op\": \"peek\", \"permits\": 0}",
            "{\"rule\": \"fz_lease\", \"key\": \"canary\", \"op\": \"release\", \"lease\": 12}",
            "{\"limit\": \"hourly\", \"key\": \"canary\", \"domain\": \"t1\"}",
            "{\"domain\": \"fz\", \"descriptor\": [{\"key\": \"k\", \"value\": \"canary\"}], \"permits\": 2}");
    static final List<String> BATCHES = List.of(
            "{\"checks\": [{\"rule\": \"fz\", \"key\": \"canary\"}, {\"rule\": \"fz\", \"key\": \"canary\","
                    + " \"permits\": 4}]}",
            "{\"checks\": [{\"domain\": \"fz\", \"descriptor\": [{\"key\": \"k\", \"value\": \"canary\"}]},"
                    + " {\"rule\": \"fz\", \"key\": \"canary\", \"op\": \"peek\"}]}");
    static final List<String> JSONS = List.of(
            "{\"domain\": \"fz\", \"descriptors\": [{\"entries\": [{\"key\": \"k\", \"value\": \"canary\"}]}]}",
            "{\"domain\": \"fz\", \"hitsAddend\": 3, \"descriptors\": [{\"entries\": [{\"key\": \"k\", \"value\":"
                    + " \"canary\"}]}, {\"entries\": [{\"key\": \"k\", \"value\": \"canary\"}],"
                    + " \"hitsAddend\": \"5\"}]}");
    static final String GRPC_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

    static final int REQUESTS = 4000;
    static final Duration BUDGET = Duration.ofSeconds(150);

    @TempDir
    Path dir;

    @Test
    void everyRequestIsAnsweredAndRefusedOnesChargeNothing() {
        long seed = Long.getLong("fuzz.seed", System.nanoTime());
        Random random = new Random(seed);
        Map<String, Integer> outcomes = new TreeMap<>();
        try (TestServer t = TestServer.start(dir, List.of(RULES, ENVOY), b -> { })) {
            RateLimitServiceGrpc.RateLimitServiceBlockingStub grpc = GrpcClients.builder(
                            "http://127.0.0.1:" + t.server.grpcPort())
                    .responseTimeout(Duration.ofSeconds(20))
                    .build(RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
            WebClient raw = WebClient.builder("h2c://127.0.0.1:" + t.server.grpcPort())
                    .responseTimeout(Duration.ofSeconds(20)).build();
            Canary canary = new Canary(t);
            long deadline = System.nanoTime() + BUDGET.toNanos();
            int sent = 0;
            for (; sent < REQUESTS && System.nanoTime() < deadline; sent++) {
                int api = random.nextInt(10);
                String outcome;
                if (api < 4) {
                    outcome = http(t, "/v1/check", body(random, CHECKS));
                } else if (api < 5) {
                    outcome = http(t, "/v1/check/batch", body(random, BATCHES));
                } else if (api < 7) {
                    outcome = http(t, "/json", body(random, JSONS));
                } else if (api < 9) {
                    outcome = grpc(grpc, random);
                } else {
                    outcome = rawGrpc(raw, random);
                }
                outcomes.merge(outcome, 1, Integer::sum);
                if (outcome.startsWith("grpc raw")) {
                    outcome = outcome.endsWith("status 0") ? "grpc answered" : "grpc refused";
                }
                if (outcome.endsWith("refused")) {
                    canary.assertUnchanged("request " + sent + " (seed " + seed + ")");
                } else {
                    canary.refresh();
                }
            }
            assertThat(sent).as("requests sent within %s (seed %d): %s", BUDGET, seed, outcomes).isGreaterThan(1000);
            assertThat(t.get("/health").statusCode()).isEqualTo(200);
            assertThat(t.get("/ready").statusCode()).isEqualTo(200);
            // Both refusals and successes happened on every API, so the fuzzing reached past the parsers.
            for (String api : List.of("http", "json", "grpc")) {
                assertThat(outcomes).as("seed %d", seed).containsKey(api + " refused");
                assertThat(outcomes).as("seed %d", seed).containsKey(api + " answered");
            }
            System.out.println("fuzz: seed " + seed + ", " + sent + " requests: " + outcomes);
        }
    }

    /** The canary's state on both the Sluice rule and the envoy limit, read without charging. */
    private static final class Canary {
        private final TestServer t;
        private String state;

        Canary(TestServer t) {
            this.t = t;
            this.state = read();
        }

        String read() {
            String rule = t.post("/v1/check", "{\"rule\": \"fz\", \"key\": \"canary\", \"op\": \"peek\","
                    + " \"permits\": 0}").body();
            String envoy = t.post("/v1/check", "{\"domain\": \"fz\", \"descriptor\": [{\"key\": \"k\", \"value\":"
                    + " \"canary\"}], \"op\": \"peek\"}").body();
            return remaining(rule) + "/" + remaining(envoy);
        }

        void refresh() {
            state = read();
        }

        void assertUnchanged(String what) {
            assertThat(read()).as("canary after refused %s", what).isEqualTo(state);
        }

        private static String remaining(String body) {
            Matcher m = Pattern.compile("\"remaining\":(\\d+)").matcher(body);
            assertThat(m.find()).as(body).isTrue();
            return m.group(1);
        }
    }

    private static String http(TestServer t, String path, String body) {
        HttpResponse<String> r = t.post(path, body);
        String api = path.equals("/json") ? "json" : "http";
        assertThat(r.statusCode()).as("%s %s -> %s", path, body, r.body()).isIn(200, 400, 429);
        assertThat(r.body()).as("%s %s", path, body).startsWith("{");
        if (r.statusCode() == 400) {
            assertThat(r.body()).startsWith("{\"error\":\"");
            return api + " refused";
        }
        return api + " answered";
    }

    private static String grpc(RateLimitServiceGrpc.RateLimitServiceBlockingStub grpc, Random random) {
        boolean canaryDomain = random.nextInt(4) != 0;
        RateLimitRequest.Builder request = RateLimitRequest.newBuilder()
                .setDomain(canaryDomain ? "fz" : randomString(random, 20));
        if (random.nextInt(4) == 0) {
            // Hits near 2^32 only where they cannot use up the canary's envoy limit (and so hide later charges).
            request.setHitsAddend(!canaryDomain && random.nextBoolean() ? random.nextInt() : random.nextInt(5));
        }
        int descriptors = random.nextInt(10) == 0 ? 95 + random.nextInt(10) : random.nextInt(4);
        for (int i = 0; i < descriptors; i++) {
            RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
            int entries = random.nextInt(8) == 0 ? 15 + random.nextInt(4) : random.nextInt(3);
            for (int j = 0; j < entries; j++) {
                boolean canary = random.nextBoolean();
                d.addEntries(RateLimitDescriptor.Entry.newBuilder()
                        .setKey(canary ? "k" : randomString(random, random.nextInt(6) == 0 ? 600 : 12))
                        .setValue(canary ? "canary" : randomString(random, 12)));
            }
            if (random.nextInt(6) == 0) {
                d.setHitsAddend(UInt64Value.of(random.nextInt(3) == 0 ? random.nextLong() : random.nextInt(4)));
            }
            if (random.nextInt(8) == 0) {
                d.setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder()
                        .setRequestsPerUnit(random.nextInt(5)).setUnitValue(random.nextInt(9)));
            }
            request.addDescriptors(d);
        }
        try {
            grpc.shouldRateLimit(request.build());
            return "grpc answered";
        } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getCode()).as("%s", e).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).isNotBlank();
            return "grpc refused";
        }
    }

    /** Bytes a stub would never send: a gRPC frame around random or truncated content, or no frame at all. */
    private static String rawGrpc(WebClient raw, Random random) {
        byte[] message = RateLimitRequest.newBuilder().setDomain("fz").addDescriptors(RateLimitDescriptor
                .newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("k").setValue("canary")))
                .build().toByteArray();
        byte[] payload;
        switch (random.nextInt(3)) {
            case 0 -> {
                payload = new byte[random.nextInt(64)];
                random.nextBytes(payload);
            }
            case 1 -> {
                payload = message.clone();
                for (int i = 0; i < 1 + random.nextInt(3); i++) {
                    payload[random.nextInt(payload.length)] = (byte) random.nextInt(256);
                }
            }
            default -> payload = java.util.Arrays.copyOf(message, random.nextInt(message.length));
        }
        byte[] frame = new byte[5 + payload.length];
        frame[1] = (byte) (payload.length >>> 24);
        frame[2] = (byte) (payload.length >>> 16);
        frame[3] = (byte) (payload.length >>> 8);
        frame[4] = (byte) payload.length;
        System.arraycopy(payload, 0, frame, 5, payload.length);
        byte[] body = random.nextInt(5) == 0 ? payload : frame;
        AggregatedHttpResponse r = raw.execute(HttpRequest.of(RequestHeaders.builder(HttpMethod.POST, GRPC_PATH)
                .contentType(com.linecorp.armeria.common.MediaType.parse("application/grpc"))
                .add("te", "trailers").build(), HttpData.wrap(body))).aggregate().join();
        String status = r.trailers().get("grpc-status");
        if (status == null) {
            status = r.headers().get("grpc-status");
        }
        assertThat(status).as("grpc-status of %s", r).isIn("0", "3"); // OK or INVALID_ARGUMENT, nothing else
        return "grpc raw status " + status;
    }

    private static String body(Random random, List<String> seeds) {
        String seed = seeds.get(random.nextInt(seeds.size()));
        switch (random.nextInt(6)) {
            case 0:
                return seed;
            case 1:
                return randomJson(random, 0);
            default:
                return mutate(random, seed);
        }
    }

    private static final String[] TOKENS = {"{", "}", "[", "]", ",", ":", "\"", "\\", "null", "true", "-1", "0",
            "1e309", "99999999999999999999", "1.0001", "\"permits\":", "\"op\":\"peek\",", "\"x\":1,", "\u0000",
            "\ud800", "\u001f", "NaN", " ", "\"rule\":\"fz\",", "\"key\":\"\","};

    private static String mutate(Random random, String seed) {
        StringBuilder s = new StringBuilder(seed);
        int edits = 1 + random.nextInt(3);
        for (int i = 0; i < edits && s.length() > 0; i++) {
            int at = random.nextInt(s.length());
            switch (random.nextInt(5)) {
                case 0 -> s.deleteCharAt(at);
                case 1 -> s.insert(at, TOKENS[random.nextInt(TOKENS.length)]);
                case 2 -> s.setCharAt(at, (char) (0x20 + random.nextInt(0x60)));
                case 3 -> s.setLength(at);
                default -> s.insert(at, s.substring(at, Math.min(s.length(), at + random.nextInt(20))));
            }
        }
        return s.toString();
    }

    private static String randomJson(Random random, int depth) {
        int kind = depth > 3 ? 2 + random.nextInt(4) : random.nextInt(6);
        switch (kind) {
            case 0: {
                StringBuilder s = new StringBuilder("{");
                int n = random.nextInt(5);
                String[] names = {"rule", "key", "permits", "op", "domain", "descriptor", "checks", "lease",
                        "max_wait_ms", "descriptors", "entries", "value", "hitsAddend", "z"};
                for (int i = 0; i < n; i++) {
                    s.append(i == 0 ? "" : ",").append('"').append(names[random.nextInt(names.length)]).append("\":")
                            .append(randomJson(random, depth + 1));
                }
                return s.append('}').toString();
            }
            case 1: {
                StringBuilder s = new StringBuilder("[");
                int n = random.nextInt(4);
                for (int i = 0; i < n; i++) {
                    s.append(i == 0 ? "" : ",").append(randomJson(random, depth + 1));
                }
                return s.append(']').toString();
            }
            case 2:
                return Json.string(new StringBuilder(), random.nextBoolean() ? "canary" : randomString(random, 30))
                        .toString();
            case 3:
                return String.valueOf(random.nextInt(3) == 0 ? random.nextLong() : random.nextInt(10) - 2);
            case 4:
                return random.nextBoolean() ? String.valueOf(random.nextDouble() * 1000) : "null";
            default:
                return random.nextBoolean() ? "true" : "false";
        }
    }

    private static String randomString(Random random, int maxLength) {
        int n = random.nextInt(maxLength + 1);
        StringBuilder s = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            int pick = random.nextInt(10);
            if (pick == 0) {
                s.append((char) random.nextInt(0x20));
            } else if (pick == 1) {
                s.appendCodePoint(0x80 + random.nextInt(0x10000 - 0x80 - 0x800)); // may include lone surrogates
            } else {
                s.append((char) ('a' + random.nextInt(26)));
            }
        }
        return new String(s.toString().getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
    }
}
