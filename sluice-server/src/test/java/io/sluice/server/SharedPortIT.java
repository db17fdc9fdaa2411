package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.grpc.GrpcClients;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** With the gRPC port equal to the HTTP port, one port serves both (HTTP/1.1, h2c and gRPC). */
class SharedPortIT {

    @TempDir
    Path dir;

    @Test
    void oneListenerServesHttpAndGrpc() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        try (TestServer t = TestServer.start(dir, List.of(HttpApiIT.RULES, HttpApiIT.ENVOY),
                b -> b.httpPort(port).grpcPort(port))) {
            assertThat(t.server.grpcOnHttpPort()).isTrue();
            assertThat(t.server.grpcPort()).isEqualTo(t.server.httpPort()).isEqualTo(port);
            assertThat(t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\"}").statusCode()).isEqualTo(200);
            RateLimitResponse r = GrpcClients.newClient("http://127.0.0.1:" + port,
                    RateLimitServiceGrpc.RateLimitServiceBlockingStub.class).shouldRateLimit(RateLimitRequest
                    .newBuilder().setDomain("messaging").addDescriptors(RateLimitDescriptor.newBuilder().addEntries(
                            RateLimitDescriptor.Entry.newBuilder().setKey("to_number").setValue("1"))).build());
            assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(1);
        }
    }
}
