package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's main job for the server, as a user runs it: {@code sluice serve} from the runnable jar with no
 * arguments starts on the bundled rules and answers {@code /health}, and stops gracefully on SIGTERM. The
 * default ports 8080 and 8081 may be taken on a shared machine, so the test moves them to free ones through
 * the environment (SLUICE_HTTP_PORT, SLUICE_GRPC_PORT), which leaves the command line empty.
 */
class ServeJarIT {

    @Test
    void serveWithoutArgumentsStartsAnswersHealthAndStops() throws Exception {
        Path jar = Path.of("target", "sluice.jar");
        assertThat(jar).exists();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-jar", jar.toString(), "serve").redirectErrorStream(true);
        pb.environment().put("SLUICE_HTTP_PORT", "0");
        pb.environment().put("SLUICE_GRPC_PORT", "0");
        pb.environment().remove("SLUICE_TOKEN");
        Process p = pb.start();
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
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
        reader.start();
        try {
            int port = awaitPort(p, lines);
            assertThat(String.join("\n", lines))
                    .contains("sluice serve: store memory")
                    .contains("sluice serve: rules examples/server-rules.yaml (bundled), examples/envoy-rules.yaml"
                            + " (bundled): 3 rules (api: api_burst + api_per_minute, login: login_attempts, uploads:"
                            + " uploads_in_flight), 1 envoy domain (messaging)")
                    .contains("sluice serve: gRPC on 127.0.0.1:");
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            HttpResponse<String> health = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/health")).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).isEqualTo("{\"status\":\"ok\"}");
            HttpResponse<String> check = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/v1/check")).POST(HttpRequest.BodyPublishers.ofString(
                            "{\"rule\": \"api\", \"key\": \"user:42\"}"))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(check.statusCode()).isEqualTo(200);
            assertThat(check.headers().firstValue("RateLimit-Policy"))
                    .hasValue("\"api_burst\";q=20;w=2, \"api_per_minute\";q=300;w=60");
        } finally {
            // SIGTERM through the handle: Process.destroy() would also close our end of its output, losing the
            // lines the graceful stop prints.
            p.toHandle().destroy();
            boolean exited = p.waitFor(60, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly();
            }
            reader.join(10_000);
            assertThat(exited).as("stopped within 60 s after SIGTERM").isTrue();
        }
        // 128 + SIGTERM: the JVM's status after its shutdown hooks (the graceful stop) ran.
        assertThat(p.exitValue()).isEqualTo(143);
        assertThat(lines).contains("sluice serve: stopped");
    }

    /** The HTTP port, once the server has printed its ready line (the lines before it are then all there). */
    private static int awaitPort(Process p, List<String> lines) throws InterruptedException {
        Pattern http = Pattern.compile("^sluice serve: HTTP on http://127\\.0\\.0\\.1:(\\d+) ");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline && p.isAlive()) {
            synchronized (lines) {
                if (lines.stream().anyMatch(line -> line.startsWith("sluice serve: ready"))) {
                    for (String line : lines) {
                        Matcher m = http.matcher(line);
                        if (m.find()) {
                            return Integer.parseInt(m.group(1));
                        }
                    }
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("sluice serve did not report its port and readiness:\n" + String.join("\n", lines));
    }
}
