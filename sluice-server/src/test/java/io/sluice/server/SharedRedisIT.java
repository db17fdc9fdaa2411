package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.grpc.GrpcClients;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two server processes on one real Redis enforce one limit exactly, over HTTP and over Envoy's gRPC protocol.
 *
 * <p>It starts its own {@code redis-server} on a free loopback port ({@code ./run-tests} installs it).
 */
class SharedRedisIT {

    static final int LIMIT = 50;
    static final int ENVOY_LIMIT = 40;
    static final int REQUESTS = 200;

    @TempDir
    Path dir;

    @Test
    void twoServersOnOneRedisShareEveryLimitExactly() throws Exception {
        Path rules = dir.resolve("rules.yaml");
        // Windows that cannot end during the test: one opened by the first request, and envoy's year.
        Files.writeString(rules, "limits:\n  hourly: {algorithm: fixed_window, limit: " + LIMIT + ", window: 1h,"
                + " align: first_request}\nrules:\n  shared: {limits: [hourly]}\n");
        Path envoy = dir.resolve("envoy.yaml");
        Files.writeString(envoy, "domain: shared\ndescriptors:\n  - key: k\n    rate_limit: {unit: year,"
                + " requests_per_unit: " + ENVOY_LIMIT + "}\n");
        int redisPort = freePort();
        Process redis = new ProcessBuilder("redis-server", "--port", String.valueOf(redisPort), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no").redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile()).start();
        List<Served> servers = new ArrayList<>();
        try {
            awaitRedis(redisPort);
            String store = "redis://127.0.0.1:" + redisPort;
            for (int i = 0; i < 2; i++) {
                servers.add(Served.start(store, rules, envoy));
            }
            HttpClient http = HttpClient.newHttpClient();
            String key = "user-" + System.nanoTime();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            AtomicInteger admitted = new AtomicInteger();
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < REQUESTS; i++) {
                Served s = servers.get(i % 2);
                calls.add(pool.submit(() -> {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                    + s.httpPort + "/v1/check")).POST(HttpRequest.BodyPublishers.ofString(
                                    "{\"rule\": \"shared\", \"key\": \"" + key + "\"}")).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).as(r.body()).isIn(200, 429);
                    if (r.statusCode() == 200) {
                        admitted.incrementAndGet();
                    }
                    return null;
                }));
            }
            AtomicInteger ok = new AtomicInteger();
            String number = "206" + System.nanoTime();
            for (int i = 0; i < REQUESTS; i++) {
                Served s = servers.get(i % 2);
                calls.add(pool.submit(() -> {
                    RateLimitResponse r = s.rls.shouldRateLimit(RateLimitRequest.newBuilder().setDomain("shared")
                            .addDescriptors(RateLimitDescriptor.newBuilder().addEntries(
                                    RateLimitDescriptor.Entry.newBuilder().setKey("k").setValue(number))).build());
                    if (r.getOverallCode() == RateLimitResponse.Code.OK) {
                        ok.incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> f : calls) {
                f.get(120, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertThat(admitted).hasValue(LIMIT);
            assertThat(ok).hasValue(ENVOY_LIMIT);
            // The Redis store reports its calls to the server's registry (sluice-micrometer's SluiceMetrics).
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + servers.get(0).httpPort
                    + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            Matcher calls0 = Pattern.compile("sluice_store_calls_seconds_count\\{[^}]*operation=\"decide\"[^}]*"
                    + "outcome=\"success\"[^}]*} (\\d+)").matcher(metrics);
            assertThat(calls0.find()).as(metrics).isTrue();
            assertThat(Long.parseLong(calls0.group(1))).isGreaterThanOrEqualTo(REQUESTS / 2);
            assertThat(metrics).contains("sluice_breaker_state");
        } finally {
            for (Served s : servers) {
                s.stop();
            }
            redis.destroy();
            redis.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** One {@code sluice serve} process, and where it listens (read from the lines it prints). */
    private static final class Served {
        final Process process;
        final int httpPort;
        final RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;

        private Served(Process process, int httpPort, int grpcPort) {
            this.process = process;
            this.httpPort = httpPort;
            this.rls = GrpcClients.newClient("http://127.0.0.1:" + grpcPort,
                    RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
        }

        static Served start(String store, Path rules, Path envoy) throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            // This test is about sharing limits, not timeouts: a Redis timeout no loaded machine reaches.
            Path config = rules.resolveSibling("serve-" + System.nanoTime() + ".yaml");
            Files.writeString(config, "redis_timeout: 5s\n");
            Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    ServeCommand.class.getName(), "--config", config.toString(), "--store", store, "--rules",
                    rules.toString(), "--rules", envoy.toString(), "--http-port", "0", "--grpc-port", "0")
                    .redirectErrorStream(true).start();
            LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    // the process ended
                }
            });
            reader.setDaemon(true);
            reader.start();
            Pattern httpLine = Pattern.compile("HTTP on http://127\\.0\\.0\\.1:(\\d+)");
            Pattern grpcLine = Pattern.compile("gRPC on 127\\.0\\.0\\.1:(\\d+)");
            int http = -1;
            int grpc = -1;
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            StringBuilder seen = new StringBuilder();
            while (http < 0 || grpc < 0) {
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
                    http = Integer.parseInt(m.group(1));
                }
                m = grpcLine.matcher(line);
                if (m.find()) {
                    grpc = Integer.parseInt(m.group(1));
                }
            }
            return new Served(p, http, grpc);
        }

        void stop() throws InterruptedException {
            process.destroy(); // SIGTERM: the server stops gracefully
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void awaitRedis(int port) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                OutputStream out = s.getOutputStream();
                out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                byte[] reply = new byte[7];
                if (s.getInputStream().read(reply) > 0 && new String(reply, StandardCharsets.US_ASCII)
                        .startsWith("+PONG")) {
                    return;
                }
            } catch (IOException e) {
                // not up yet
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("redis-server did not answer on port " + port);
            }
            Thread.sleep(50);
        }
    }
}
