package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.grpc.GrpcClients;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.sluice.testkit.redis.RedisServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runnable jar as it ships: small enough (the shade step drops every class nothing reaches), with the manifest
 * and notices a redistribution owes, and still whole where it matters: the parts a reference-following
 * minimiser could wrongly drop (Envoy's gRPC stubs and their descriptors, Prometheus exposition, the chart
 * libraries) are exercised through {@code java -jar}, not through the module's classpath.
 */
class LauncherJarIT {

    /**
     * The budget for the launcher jar: 35 MiB, as {@code ls -lh} shows sizes (it was about 80 MiB before unused
     * classes were dropped). docs/dependencies.md has the measured size and what is left to drop.
     */
    static final long MAX_JAR_BYTES = 35L * 1024 * 1024;

    private static final Path JAR = Path.of("target", "sluice.jar");

    @TempDir
    Path dir;

    @Test
    void jarFitsTheBudgetWithAMultiReleaseVersionedManifestAndMergedNotices() throws IOException {
        assertThat(JAR).exists();
        assertThat(Files.size(JAR)).as("bytes in %s", JAR).isLessThanOrEqualTo(MAX_JAR_BYTES);
        try (JarFile jar = new JarFile(JAR.toFile())) {
            Attributes main = jar.getManifest().getMainAttributes();
            assertThat(main.getValue("Main-Class")).isEqualTo("io.sluice.cli.Main");
            assertThat(main.getValue("Multi-Release")).isEqualTo("true");
            assertThat(main.getValue("Implementation-Version")).isEqualTo(System.getProperty("sluice.version"));
            try (InputStream in = jar.getInputStream(jar.getEntry("META-INF/NOTICE"))) {
                String notice = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                // One file carrying the notices of several dependencies, not the last one copied.
                assertThat(notice.strip()).startsWith("Sluice").contains("the Sluice authors")
                        .contains("Jackson JSON processor").contains("Micrometer");
            }
            assertThat(jar.getEntry("io/envoyproxy/envoy/service/ratelimit/v3/RateLimitServiceGrpc.class"))
                    .isNotNull();
            assertThat(jar.getEntry("io/envoyproxy/envoy/config/route/v3/RouteConfiguration.class"))
                    .as("an Envoy API class the server never uses").isNull();
        }
    }

    @Test
    void servesEnvoyGrpcJsonAndMetricsWithNoWarningOnStderr() throws Exception {
        Path rules = dir.resolve("envoy.yaml");
        Files.writeString(rules, String.join("\n",
                "domain: edge",
                "descriptors:",
                "  - key: path",
                "    rate_limit:",
                "      unit: minute",
                "      requests_per_unit: 1",
                ""));
        Served s = Served.start("serve", "--rules", rules.toString());
        try {
            RateLimitServiceGrpc.RateLimitServiceBlockingStub rls = GrpcClients.newClient(
                    "http://127.0.0.1:" + s.grpcPort, RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
            RateLimitRequest request = RateLimitRequest.newBuilder().setDomain("edge")
                    .addDescriptors(RateLimitDescriptor.newBuilder().addEntries(
                            RateLimitDescriptor.Entry.newBuilder().setKey("path").setValue("/a")))
                    .build();
            assertThat(rls.shouldRateLimit(request).getOverallCode()).isEqualTo(RateLimitResponse.Code.OK);
            assertThat(rls.shouldRateLimit(request).getOverallCode())
                    .isEqualTo(RateLimitResponse.Code.OVER_LIMIT);

            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            HttpResponse<String> json = http.send(HttpRequest.newBuilder(URI.create(s.base() + "/json"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"domain\": \"edge\", \"descriptors\": [{\"entries\":"
                            + " [{\"key\": \"path\", \"value\": \"/b\"}]}]}"))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(json.statusCode()).isEqualTo(200);
            assertThat(json.body()).contains("\"overallCode\":\"OK\"");

            HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(URI.create(s.base() + "/metrics"))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.body()).contains("sluice_");
        } finally {
            s.stop();
        }
        assertThat(s.stderr).as("stderr of sluice serve")
                .noneMatch(line -> line.contains("WARN"))
                .noneMatch(line -> line.contains("SLF4J"));
    }

    @Test
    void decidesOnRedisWithNoWarningOnStderr() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            Served s = Served.start("serve", "--store", redis.uri());
            try {
                HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
                HttpResponse<String> check = http.send(HttpRequest.newBuilder(URI.create(s.base() + "/v1/check"))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"rule\": \"api\", \"key\": \"user:1\"}"))
                        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(check.statusCode()).as(check.body()).isEqualTo(200);
                assertThat(check.body()).startsWith("{\"allowed\":true");
            } finally {
                s.stop();
            }
            List<String> all = new ArrayList<>(s.stdout);
            all.addAll(s.stderr);
            assertThat(all).anyMatch(line -> line.startsWith("sluice serve: store redis"));
            assertThat(s.stderr).as("stderr of sluice serve").noneMatch(line -> line.contains("WARN"));
        }
    }

    @Test
    void drawsReplayChartsInBothFormats() throws Exception {
        Path svg = dir.resolve("chart.svg");
        Path png = dir.resolve("chart.png");
        for (Path chart : List.of(svg, png)) {
            Process p = new ProcessBuilder(java(), "-jar", JAR.toString(), "replay",
                    "--rules", Path.of("..", "examples", "login-rules.yaml").toString(),
                    "--trace", Path.of("..", "examples", "login-trace.jsonl").toString(),
                    "--out", dir.resolve("decisions.jsonl").toString(), "--chart", chart.toString())
                    .redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(output).isZero();
        }
        assertThat(Files.readString(svg)).startsWith("<?xml").contains("<svg");
        byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
        assertThat(head).isEqualTo(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'});
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** {@code java -jar sluice.jar serve ...} on free ports, its stdout and stderr kept apart. */
    private static final class Served {
        final Process process;
        final List<String> stdout = Collections.synchronizedList(new ArrayList<>());
        final List<String> stderr = Collections.synchronizedList(new ArrayList<>());
        final Thread[] readers;
        int httpPort;
        int grpcPort;

        private Served(Process process) {
            this.process = process;
            this.readers = new Thread[] {drain(process.getInputStream(), stdout), drain(process.getErrorStream(),
                    stderr)};
        }

        static Served start(String... args) throws Exception {
            List<String> command = new ArrayList<>(List.of(java(), "-jar", JAR.toString()));
            command.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(command);
            pb.environment().put("SLUICE_HTTP_PORT", "0");
            pb.environment().put("SLUICE_GRPC_PORT", "0");
            pb.environment().remove("SLUICE_TOKEN");
            Served s = new Served(pb.start());
            s.awaitReady();
            return s;
        }

        String base() {
            return "http://127.0.0.1:" + httpPort;
        }

        private void awaitReady() throws InterruptedException {
            Pattern http = Pattern.compile("^sluice serve: HTTP on http://127\\.0\\.0\\.1:(\\d+)");
            Pattern grpc = Pattern.compile("^sluice serve: gRPC on 127\\.0\\.0\\.1:(\\d+)");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline && process.isAlive()) {
                List<String> all = new ArrayList<>();
                synchronized (stdout) {
                    all.addAll(stdout);
                }
                synchronized (stderr) {
                    all.addAll(stderr);
                }
                if (all.stream().anyMatch(line -> line.startsWith("sluice serve: ready"))) {
                    for (String line : all) {
                        Matcher h = http.matcher(line);
                        if (h.find()) {
                            httpPort = Integer.parseInt(h.group(1));
                        }
                        Matcher g = grpc.matcher(line);
                        if (g.find()) {
                            grpcPort = Integer.parseInt(g.group(1));
                        }
                    }
                    if (httpPort > 0 && grpcPort > 0) {
                        return;
                    }
                }
                Thread.sleep(50);
            }
            stop();
            throw new AssertionError("sluice serve did not report its ports and readiness:\n"
                    + String.join("\n", stdout) + "\n" + String.join("\n", stderr));
        }

        void stop() throws InterruptedException {
            process.toHandle().destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
            for (Thread t : readers) {
                t.join(10_000);
            }
        }

        private static Thread drain(InputStream in, List<String> into) {
            Thread t = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        into.add(line);
                    }
                } catch (IOException e) {
                    // the process ended
                }
            });
            t.setDaemon(true);
            t.start();
            return t;
        }
    }
}
