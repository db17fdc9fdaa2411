package io.sluice.bench.attack;

import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.common.RequestHeadersBuilder;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;

/**
 * gRPC calls no stub would send, over cleartext HTTP/2 to the gRPC port (Armeria's HTTP client, which the bench
 * jar carries with the server): two messages in one unary call, a gzip-flagged message of random bytes, and a
 * message over the 64 KiB limit. Expected: {@code INVALID_ARGUMENT} (3), 3 and {@code RESOURCE_EXHAUSTED} (8),
 * never OK or {@code UNKNOWN} (docs/server-hardening.md). The answers are counted as {@code kind grpc-status N}.
 */
final class MalformedGrpcProbe implements Probe {
    static final String PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

    private final int rounds;

    MalformedGrpcProbe(int rounds) {
        this.rounds = rounds;
    }

    @Override
    public String name() {
        return "malformed_grpc";
    }

    @Override
    public String describe() {
        return String.format("%,d rounds of: two messages in a unary call, gzip-flagged garbage, a 70,000-byte "
                + "message; Envoy domain g", rounds);
    }

    @Override
    public Outcome run(Target target) {
        Answers answers = new Answers();
        if (target.grpcPort() < 0) {
            answers.add("no gRPC port");
            return new Outcome(answers, "the server did not print its gRPC port");
        }
        WebClient raw = WebClient.builder("h2c://" + target.host() + ":" + target.grpcPort())
                .responseTimeout(Duration.ofSeconds(20)).maxResponseLength(0).build();
        byte[] one = frame(0, request("v"));
        byte[] two = new byte[one.length * 2];
        System.arraycopy(one, 0, two, 0, one.length);
        System.arraycopy(one, 0, two, one.length, one.length);
        byte[] garbage = new byte[40];
        new Random(7).nextBytes(garbage);
        for (int round = 0; round < rounds; round++) {
            answers.add("two messages grpc-status " + send(raw, two, null));
            answers.add("gzip garbage grpc-status " + send(raw, frame(1, garbage), "gzip"));
            answers.add("oversize grpc-status " + send(raw, frame(0, new byte[70_000]), null));
        }
        answers.add("well-formed grpc-status " + send(raw, one, null));
        return new Outcome(answers, null);
    }

    private static String send(WebClient raw, byte[] body, String encoding) {
        RequestHeadersBuilder headers = RequestHeaders.builder(HttpMethod.POST, PATH)
                .contentType(MediaType.parse("application/grpc")).add("te", "trailers");
        if (encoding != null) {
            headers.add("grpc-encoding", encoding);
        }
        try {
            AggregatedHttpResponse r = raw.execute(HttpRequest.of(headers.build(), HttpData.wrap(body))).aggregate()
                    .join();
            String status = r.trailers().contains("grpc-status") ? r.trailers().get("grpc-status")
                    : r.headers().get("grpc-status");
            return status == null ? "none (HTTP " + r.status().code() + ")" : status;
        } catch (RuntimeException e) {
            return "none (" + (e.getCause() == null ? e : e.getCause()).getClass().getSimpleName() + ")";
        }
    }

    /** RateLimitRequest{domain: "g", descriptors: [{entries: [{key: "k", value}]}]} in protobuf's wire format. */
    static byte[] request(String value) {
        byte[] entry = concat(field(1, "k".getBytes(StandardCharsets.UTF_8)),
                field(2, value.getBytes(StandardCharsets.UTF_8)));
        byte[] descriptor = field(1, entry);
        return concat(field(1, "g".getBytes(StandardCharsets.UTF_8)), field(2, descriptor));
    }

    /** A length-delimited field (wire type 2) with a payload under 128 bytes. */
    private static byte[] field(int number, byte[] payload) {
        return concat(new byte[] {(byte) (number << 3 | 2), (byte) payload.length}, payload);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(a);
        out.writeBytes(b);
        return out.toByteArray();
    }

    /** A gRPC length-prefixed message: the compressed flag, a 4-byte big-endian length, the payload. */
    static byte[] frame(int flag, byte[] payload) {
        byte[] frame = new byte[5 + payload.length];
        frame[0] = (byte) flag;
        frame[1] = (byte) (payload.length >>> 24);
        frame[2] = (byte) (payload.length >>> 16);
        frame[3] = (byte) (payload.length >>> 8);
        frame[4] = (byte) payload.length;
        System.arraycopy(payload, 0, frame, 5, payload.length);
        return frame;
    }
}
