package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.common.RequestHeadersBuilder;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * gRPC requests that no stub would send, as raw HTTP/2 frames from Armeria's HTTP client: each is answered with
 * a clear status — {@code INVALID_ARGUMENT} (3) for what is malformed, {@code RESOURCE_EXHAUSTED} (8) for a
 * message over the size limit — never {@code UNKNOWN} or OK, and none of them charges the counter it names.
 *
 * <p>One server for the class; each test starts at the next midnight of its clock ({@link TestServer#nextDay}),
 * past the counter's hour, so each sees it untouched.
 */
class MalformedGrpcIT {

    static final String GRPC_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
    static final String ENVOY = "domain: g\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour,"
            + " requests_per_unit: 100}\n";

    @TempDir
    static Path dir;

    private static TestServer t;
    private static WebClient raw;

    @BeforeAll
    static void start() {
        t = TestServer.start(dir, List.of(ENVOY), b -> { });
        raw = WebClient.builder("h2c://127.0.0.1:" + t.server.grpcPort()).responseTimeout(Duration.ofSeconds(20))
                .maxResponseLength(0).build();
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

    @Test
    void gzipFlaggedGarbageIsInvalidArgument() throws Exception {
        byte[] garbage = new byte[40];
        new Random(7).nextBytes(garbage);
        for (boolean declared : new boolean[] {true, false}) {
            Answer a = send(frame(1, garbage), declared ? "gzip" : null);
            assertThat(a.status).as("%s", a).isEqualTo("3");
            assertThat(a.message).as("%s", a).isNotBlank();
        }
        // Gzip that inflates to a valid request is decided as usual: compression itself is allowed.
        Answer ok = send(frame(1, gzip(request("canary"))), "gzip");
        assertThat(ok.status).as("%s", ok).isEqualTo("0");
        assertRemaining(98);
    }

    @Test
    void aMessageOfTenMebibytesIsResourceExhausted() {
        byte[] big = new byte[10 * 1024 * 1024];
        Answer a = send(frame(0, big), null);
        assertThat(a.status).as("%s", a).isEqualTo("8");
        assertThat(a.message).as("%s", a).contains("65536");
        // Just over the limit, well inside what the transport reads: refused the same way.
        Answer b = send(frame(0, new byte[70_000]), null);
        assertThat(b.status).as("%s", b).isEqualTo("8");
        // Streamed without a content-length, so the transport only finds out while reading.
        com.linecorp.armeria.common.HttpRequestWriter streamed = HttpRequest.streaming(RequestHeaders.builder(
                HttpMethod.POST, GRPC_PATH).contentType(MediaType.parse("application/grpc")).add("te", "trailers")
                .build());
        byte[] chunk = new byte[64 * 1024];
        streamed.write(HttpData.wrap(frame(0, big), 0, 5));
        for (int i = 0; i < 160 && streamed.tryWrite(HttpData.wrap(chunk)); i++) {
            // 10 MiB in chunks; the server may reset the stream before the end
        }
        streamed.close();
        AggregatedHttpResponse r = raw.execute(streamed).aggregate().join();
        String status = r.trailers().contains("grpc-status") ? r.trailers().get("grpc-status")
                : r.headers().get("grpc-status");
        assertThat(status).as("%s", r).isEqualTo("8");
        assertRemaining(99);
    }

    @Test
    void aUnaryCallWithTwoMessagesIsInvalidArgumentAndChargesNothing() {
        byte[] one = frame(0, request("canary"));
        byte[] two = new byte[one.length * 2];
        System.arraycopy(one, 0, two, 0, one.length);
        System.arraycopy(one, 0, two, one.length, one.length);
        Answer a = send(two, null);
        assertThat(a.status).as("%s", a).isEqualTo("3");
        assertThat(a.message).as("%s", a).contains("one message");
        assertRemaining(99);
        // A message followed by a stray partial frame header is malformed too.
        byte[] trailing = new byte[one.length + 3];
        System.arraycopy(one, 0, trailing, 0, one.length);
        Answer b = send(trailing, null);
        assertThat(b.status).as("%s", b).isEqualTo("3");
        assertRemaining(99);
        assertThat(send(one, null).status).isEqualTo("0");
        assertRemaining(98);
    }

    @Test
    void stringsThatAreNotUtf8AreInvalidArgument() {
        // RateLimitRequest{domain: "g"} and one entry {key: "k", value: "s" 0xFF}: proto3 strings must be UTF-8.
        byte[] entry = {0x0A, 0x01, 'k', 0x12, 0x02, 's', (byte) 0xFF};
        byte[] descriptor = new byte[2 + entry.length];
        descriptor[0] = 0x0A;
        descriptor[1] = (byte) entry.length;
        System.arraycopy(entry, 0, descriptor, 2, entry.length);
        byte[] message = new byte[3 + 2 + descriptor.length];
        message[0] = 0x0A;
        message[1] = 0x01;
        message[2] = 'g';
        message[3] = 0x12;
        message[4] = (byte) descriptor.length;
        System.arraycopy(descriptor, 0, message, 5, descriptor.length);
        Answer a = send(frame(0, message), null);
        assertThat(a.status).as("%s", a).isEqualTo("3");
        assertThat(a.message).as("%s", a).contains("UTF-8");
        assertRemaining(99);
    }

    /** What a peek says one more hit would leave: 99 while nothing has been charged. */
    private static void assertRemaining(long expected) {
        String body = t.post("/v1/check", "{\"domain\": \"g\", \"descriptor\": [{\"key\": \"k\", \"value\":"
                + " \"canary\"}], \"op\": \"peek\"}").body();
        assertThat(body).contains("\"remaining\":" + expected + ",");
    }

    record Answer(String status, String message, AggregatedHttpResponse response) {}

    private static Answer send(byte[] body, String encoding) {
        RequestHeadersBuilder headers = RequestHeaders.builder(HttpMethod.POST, GRPC_PATH)
                .contentType(MediaType.parse("application/grpc")).add("te", "trailers");
        if (encoding != null) {
            headers.add("grpc-encoding", encoding);
        }
        AggregatedHttpResponse r = raw.execute(HttpRequest.of(headers.build(), HttpData.wrap(body))).aggregate()
                .join();
        String status = r.trailers().contains("grpc-status") ? r.trailers().get("grpc-status")
                : r.headers().get("grpc-status");
        String message = r.trailers().contains("grpc-status") ? r.trailers().get("grpc-message")
                : r.headers().get("grpc-message");
        return new Answer(status, message, r);
    }

    private static byte[] request(String value) {
        return RateLimitRequest.newBuilder().setDomain("g").addDescriptors(RateLimitDescriptor.newBuilder()
                .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("k").setValue(value))).build().toByteArray();
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

    private static byte[] gzip(byte[] data) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(out)) {
            z.write(data);
        }
        return out.toByteArray();
    }
}
