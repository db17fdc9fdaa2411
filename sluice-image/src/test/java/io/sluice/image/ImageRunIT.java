package io.sluice.image;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Runs the image the build wrote with podman (Debian's, daemonless; ./run-tests installs it), as a user would:
 * loaded from the tarball, its HTTP port published on a free loopback port, a SLUICE_* variable given with
 * {@code -e}; then {@code /health}, {@code POST /v1/check}, the image's own health check, and a graceful stop.
 * Podman runs as the user running the tests: rootless for a user, rootful (still without a daemon) for root.
 *
 * <p>The podman options beyond the defaults are for machines like the one this suite was written on, and harmless
 * elsewhere: runc rather than crun (crun refuses a host whose cgroups are mounted in hybrid mode, v1 controllers
 * beside a v2 tree) with cgroupfs as the manager (no systemd), and open-file and process limits no higher than
 * the test's own (podman's defaults raise them, which a root without CAP_SYS_RESOURCE may not).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ImageRunIT {

    private static final String TOKEN = "image-it-token";
    /** A guard against a hung start on a loaded machine, not a measurement. */
    private static final Duration START_DEADLINE = Duration.ofMinutes(4);

    private static final String NAME = "sluice-image-it-" + ProcessHandle.current().pid();
    private static String imageId;
    private static int port;
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    static void loadAndStart() throws Exception {
        assertThat(ImageTarball.PATH).as("the image tarball, written by mvn package").exists();
        imageId = Files.readString(Path.of("target", "jib-image.id")).trim();
        Result load = podman("load", "-q", "-i", ImageTarball.PATH.toString());
        assertThat(load.exit).as("podman load: %s", load.output).isZero();
        port = freeLoopbackPort();
        Result run = podman("--runtime", "runc", "--cgroup-manager", "cgroupfs", "run", "-d", "--name", NAME,
                "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
                "-p", "127.0.0.1:" + port + ":8080", "-e", "SLUICE_TOKEN=" + TOKEN, imageId);
        assertThat(run.exit).as("podman run: %s", run.output).isZero();
        awaitHealth();
    }

    @AfterAll
    static void remove() throws Exception {
        podman("rm", "-f", NAME);
        if (imageId != null) {
            // Not forced: a forced removal would also remove another run's container of the same image.
            podman("rmi", imageId);
        }
    }

    @Test
    @Order(1)
    void itServesChecksOnThePublishedPortWithTheBundledRulesAndTheTokenFromTheEnvironment() throws Exception {
        HttpResponse<String> health = get("/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).isEqualTo("{\"status\":\"ok\"}");

        HttpResponse<String> anonymous = check(null);
        assertThat(anonymous.statusCode()).as("SLUICE_TOKEN given with -e applies").isEqualTo(401);
        HttpResponse<String> check = check(TOKEN);
        assertThat(check.statusCode()).isEqualTo(200);
        assertThat(check.body()).contains("\"allowed\":true").contains("\"limit\":\"login_attempts\"");
        assertThat(check.headers().firstValue("RateLimit-Policy")).hasValue("\"login_attempts\";q=5;w=60");

        String logs = podman("logs", NAME).output;
        assertThat(logs).contains("sluice serve: store memory")
                .contains("examples/server-rules.yaml (bundled)")
                .contains("sluice serve: HTTP on http://0.0.0.0:8080");
    }

    @Test
    @Order(2)
    void theImagesHealthCheckPassesInsideTheContainer() throws Exception {
        Result health = podman("healthcheck", "run", NAME);
        assertThat(health.exit).as("podman healthcheck run: %s", health.output).isZero();
        Result user = podman("exec", NAME, "/opt/java/bin/java", "-XX:TieredStopAtLevel=1", "-Xmx16m",
                "-XshowSettings:properties", "-version");
        assertThat(user.output).as("the container's processes run as the image's user").contains("user.name = sluice");
    }

    @Test
    @Order(3)
    void itStopsGracefullyOnSigterm() throws Exception {
        Result stop = podman("stop", "-t", "60", NAME);
        assertThat(stop.exit).as("podman stop: %s", stop.output).isZero();
        assertThat(podman("inspect", "--format", "{{.State.ExitCode}}", NAME).output.trim())
                .as("the JVM's status after SIGTERM").isEqualTo("143");
        assertThat(podman("logs", NAME).output).contains("sluice serve: stopped");
    }

    private static void awaitHealth() throws Exception {
        long deadline = System.nanoTime() + START_DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (get("/health").statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            String state = podman("inspect", "--format", "{{.State.Status}}", NAME).output.trim();
            if (!state.equals("running") && !state.equals("created")) {
                throw new AssertionError("the container is " + state + "; its log:\n" + podman("logs", NAME).output);
            }
            Thread.sleep(500);
        }
        throw new AssertionError("no answer on /health within " + START_DEADLINE + "; the container's log:\n"
                + podman("logs", NAME).output);
    }

    private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> check(String token) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/check"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"rule\": \"login\", \"key\": \"user:42\"}"))
                .timeout(Duration.ofSeconds(30));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private record Result(int exit, String output) {
    }

    /** Runs podman with these arguments; its standard output and error together. */
    private static Result podman(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("podman");
        command.addAll(List.of(args));
        Path out = Files.createTempFile("podman", ".out");
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            // A guard against a hung podman, not a measurement.
            if (!p.waitFor(5, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " did not finish");
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
