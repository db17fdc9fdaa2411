package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.grpc.GrpcClients;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bearer-token authentication and TLS, over real sockets. */
class SecurityIT {

    static final String RULES = String.join("\n",
            "limits:",
            "  per_minute: {algorithm: fixed_window, limit: 5, window: 1m}",
            "rules:",
            "  api: {limits: [per_minute]}",
            "");
    static final String ENVOY = "domain: d\ndescriptors:\n  - key: k\n"
            + "    rate_limit: {unit: minute, requests_per_unit: 5}\n";
    static final String TOKEN = "s3cr3t-token-for-tests";

    @TempDir
    Path dir;

    @Test
    void theTokenGuardsEveryApiButLivenessAndReadiness() {
        try (TestServer t = TestServer.start(dir, List.of(RULES, ENVOY), b -> b.token(TOKEN))) {
            String check = "{\"rule\": \"api\", \"key\": \"k\"}";
            HttpResponse<String> anonymous = t.post("/v1/check", check);
            assertThat(anonymous.statusCode()).isEqualTo(401);
            assertThat(anonymous.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"sluice\"");
            assertThat(anonymous.body()).contains("missing or wrong bearer token");
            for (String wrong : List.of("Bearer nope", "Bearer " + TOKEN + "x", "Basic " + TOKEN, TOKEN, "Bearer")) {
                assertThat(t.send(t.request("/v1/check").header("Authorization", wrong)
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(check)).build()).statusCode())
                        .as(wrong).isEqualTo(401);
            }
            for (String path : List.of("/v1/check/batch", "/json", "/v1/charge", "/v1/settle")) {
                assertThat(t.post(path, "{}").statusCode()).isEqualTo(401);
            }
            for (String path : List.of("/metrics", "/v1/rules")) {
                assertThat(t.get(path).statusCode()).isEqualTo(401);
            }
            assertThat(t.get("/health").statusCode()).isEqualTo(200);
            assertThat(t.get("/ready").statusCode()).isEqualTo(200);

            HttpResponse<String> ok = t.send(t.request("/v1/check").header("Authorization", "bearer " + TOKEN)
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(check)).build());
            assertThat(ok.statusCode()).isEqualTo(200);
            // Refused calls charged nothing.
            assertThat(ok.body()).contains("\"remaining\":4");

            RateLimitRequest request = RateLimitRequest.newBuilder().setDomain("d").addDescriptors(
                    RateLimitDescriptor.newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("k")
                            .setValue("v"))).build();
            RateLimitServiceGrpc.RateLimitServiceBlockingStub anonymousGrpc = GrpcClients.newClient(
                    "http://127.0.0.1:" + t.server.grpcPort(), RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
            assertThatThrownBy(() -> anonymousGrpc.shouldRateLimit(request))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
            RateLimitServiceGrpc.RateLimitServiceBlockingStub grpc = GrpcClients.builder(
                            "http://127.0.0.1:" + t.server.grpcPort())
                    .addHeader("authorization", "Bearer " + TOKEN)
                    .build(RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
            RateLimitResponse response = grpc.shouldRateLimit(request);
            assertThat(response.getStatuses(0).getLimitRemaining()).isEqualTo(4);
            assertThat(t.send(t.request("/metrics").header("Authorization", "Bearer " + TOKEN).GET().build()).body())
                    .contains("sluice_unauthorized_total{api=\"http\"}")
                    .contains("sluice_unauthorized_total{api=\"grpc\"} 1.0");
        }
    }

    @Test
    void tlsServesHttpsAndGrpcWithAGeneratedCertificate() throws Exception {
        Path keystore = dir.resolve("server.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "sluice", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                "-dname", "CN=localhost", "-ext", "SAN=IP:127.0.0.1,DNS:localhost",
                "-keystore", keystore.toString(), "-storetype", "PKCS12", "-storepass", "changeit",
                "-keypass", "changeit").redirectErrorStream(true).start();
        String keytoolOutput = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(keytool.exitValue()).as(keytoolOutput).isZero();

        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            ks.load(in, "changeit".toCharArray());
        }
        PrivateKey key = (PrivateKey) ks.getKey("sluice", "changeit".toCharArray());
        X509Certificate cert = (X509Certificate) ks.getCertificate("sluice");
        Path certPem = dir.resolve("cert.pem");
        Path keyPem = dir.resolve("key.pem");
        Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()));
        Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()));

        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        trust.setCertificateEntry("sluice", cert);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        HttpClient https = HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(10)).build();

        try (TestServer t = new TestServer(dir, List.of(RULES, ENVOY), b -> b.tls(certPem, keyPem), https, "https",
                null)) {
            assertThat(t.server.tls()).isTrue();
            HttpResponse<String> r = t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"k\"}");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2); // negotiated by ALPN
            // Plain text is not spoken on a TLS port.
            HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            assertThatThrownBy(() -> plain.send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + t.server.httpPort() + "/health"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()))
                    .isInstanceOf(java.io.IOException.class);

            try (ClientFactory factory = ClientFactory.builder()
                    .tlsCustomizer(b -> b.trustManager(certPem.toFile())).build()) {
                RateLimitServiceGrpc.RateLimitServiceBlockingStub grpc = GrpcClients.builder(
                                "https://127.0.0.1:" + t.server.grpcPort())
                        .factory(factory)
                        .build(RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
                RateLimitResponse response = grpc.shouldRateLimit(RateLimitRequest.newBuilder().setDomain("d")
                        .addDescriptors(RateLimitDescriptor.newBuilder().addEntries(
                                RateLimitDescriptor.Entry.newBuilder().setKey("k").setValue("v"))).build());
                assertThat(response.getOverallCode()).isEqualTo(RateLimitResponse.Code.OK);
            }
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
