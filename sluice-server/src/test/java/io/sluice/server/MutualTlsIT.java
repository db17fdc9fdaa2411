package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.grpc.GrpcClients;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --tls-client-ca} (here as {@code SLUICE_TLS_CLIENT_CA}) on a real process: a client with a certificate
 * from that CA is served over HTTP and gRPC; one without a certificate, or with one from another CA, is refused
 * in the handshake. The CAs and certificates are made for the test with openssl (Debian's).
 */
class MutualTlsIT {

    @TempDir
    Path dir;

    @BeforeEach
    void certificates() throws Exception {
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                "-subj", "/CN=sluice test CA");
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key", "-out", "other-ca.pem",
                "-days", "2", "-subj", "/CN=another CA");
        Files.writeString(dir.resolve("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        signed("server", "ca", "/CN=localhost", "server.ext");
        signed("client", "ca", "/CN=a client", null);
        signed("stranger", "other-ca", "/CN=a stranger", null);
        for (String who : List.of("client", "stranger")) {
            openssl("pkcs12", "-export", "-in", who + ".pem", "-inkey", who + ".key", "-out", who + ".p12",
                    "-passout", "pass:changeit");
        }
    }

    @Test
    void onlyClientsWithACertificateFromTheCaAreServed() throws Exception {
        ServeProcess served = ServeProcess.start(Map.of("SLUICE_TLS_CLIENT_CA", dir.resolve("ca.pem").toString()),
                "--tls-cert", dir.resolve("server.pem").toString(), "--tls-key", dir.resolve("server.key").toString());
        try {
            assertThat(https(served, "client.p12").statusCode()).isEqualTo(200);
            assertThatThrownBy(() -> https(served, null)).isInstanceOf(IOException.class);
            assertThatThrownBy(() -> https(served, "stranger.p12")).isInstanceOf(IOException.class);

            assertThat(grpc(served, "client").getOverallCode()).isEqualTo(RateLimitResponse.Code.OK);
            assertThatThrownBy(() -> grpc(served, null)).isInstanceOf(StatusRuntimeException.class);
            assertThatThrownBy(() -> grpc(served, "stranger")).isInstanceOf(StatusRuntimeException.class);
        } finally {
            served.terminate();
        }
    }

    private HttpResponse<String> https(ServeProcess served, String clientKeystore) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(dir.resolve("ca.pem"))) {
            trust.setCertificateEntry("ca", java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManagerFactory kmf = null;
        if (clientKeystore != null) {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(dir.resolve(clientKeystore))) {
                keys.load(in, "changeit".toCharArray());
            }
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, "changeit".toCharArray());
        }
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        HttpClient client = HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(10)).build();
        return client.send(HttpRequest.newBuilder(URI.create(served.base("https") + "/v1/check"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"rule\": \"api\", \"key\": \"k\"}"))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private RateLimitResponse grpc(ServeProcess served, String client) {
        try (ClientFactory factory = ClientFactory.builder().tlsCustomizer(b -> {
            b.trustManager(dir.resolve("ca.pem").toFile());
            if (client != null) {
                b.keyManager(dir.resolve(client + ".pem").toFile(), dir.resolve(client + ".key").toFile());
            }
        }).build()) {
            return GrpcClients.builder("https://127.0.0.1:" + served.grpcPort).factory(factory)
                    .responseTimeout(Duration.ofSeconds(30))
                    .build(RateLimitServiceGrpc.RateLimitServiceBlockingStub.class)
                    .shouldRateLimit(RateLimitRequest.newBuilder().setDomain("messaging")
                            .addDescriptors(RateLimitDescriptor.newBuilder().addEntries(RateLimitDescriptor.Entry
                                    .newBuilder().setKey("message_type").setValue("marketing"))).build());
        }
    }

    /** A key and a certificate for {@code subject} signed by {@code ca}, as PEM ({@code who.key}, {@code who.pem}). */
    private void signed(String who, String ca, String subject, String extensions) throws Exception {
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", who + ".key", "-out", who + ".csr",
                "-subj", subject);
        List<String> sign = new ArrayList<>(List.of("x509", "-req", "-in", who + ".csr", "-CA", ca + ".pem",
                "-CAkey", ca + ".key", "-CAcreateserial", "-out", who + ".pem", "-days", "2"));
        if (extensions != null) {
            sign.addAll(List.of("-extfile", extensions));
        }
        openssl(sign.toArray(new String[0]));
    }

    private void openssl(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(String.join(" ", command) + "\n" + output).isZero();
    }
}
