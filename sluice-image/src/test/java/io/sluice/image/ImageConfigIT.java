package io.sluice.image;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The image the build wrote (target/sluice-image.tar), read without a container runtime: its configuration
 * (entrypoint, user, ports, environment, health check) and the files that configuration relies on. An IT
 * because the tarball is made in the package phase; ImageRunIT runs it.
 */
class ImageConfigIT {

    private static ImageTarball image;

    @BeforeAll
    static void read() throws Exception {
        assertThat(ImageTarball.PATH).as("the image tarball, written by mvn package").exists();
        image = ImageTarball.read();
    }

    @Test
    void theEntrypointRunsServeFromTheLauncherJarOnTheImagesJava() {
        assertThat(strings(image.container().get("Entrypoint")))
                .containsExactly("/opt/java/bin/java", "-jar", "/app/sluice.jar", "serve");
        // No Cmd: the arguments of `docker run IMAGE ...` are serve's options, and without any it runs the
        // bundled rules on the memory store.
        assertThat(image.container().path("Cmd").isNull() || image.container().path("Cmd").isMissingNode()
                || image.container().path("Cmd").isEmpty()).isTrue();
        assertThat(image.file("opt/java/bin/java").executable()).isTrue();
        assertThat(image.file("app/sluice.jar").size()).isGreaterThan(1 << 20);
        // The loader the runtime's binaries name, and the C library; without them nothing starts.
        assertThat(image.files).containsKeys("lib64/ld-linux-x86-64.so.2", "lib/x86_64-linux-gnu/libc.so.6",
                "lib/x86_64-linux-gnu/libz.so.1");
        // Their licences travel with them (Debian's copyright files), the JDK's in its legal directory.
        assertThat(image.file("usr/share/doc/libc6/copyright").text()).contains("GNU Lesser General Public");
        assertThat(image.files).containsKeys("usr/share/doc/zlib1g/copyright", "opt/java/legal/java.base/LICENSE");
    }

    @Test
    void itRunsAsANonRootUserNamedByNumber() {
        String user = image.container().get("User").asText();
        Matcher m = Pattern.compile("(\\d+):(\\d+)").matcher(user);
        assertThat(m.matches()).as("User %s is uid:gid in numbers", user).isTrue();
        assertThat(Long.parseLong(m.group(1))).isNotZero();
        assertThat(Long.parseLong(m.group(2))).isNotZero();
        // Named in /etc/passwd too, so that tools showing the process's user have a name for it.
        assertThat(image.file("etc/passwd").text()).contains("sluice:x:" + m.group(1) + ":" + m.group(2) + ":");
        // A writable /tmp (sticky, for everyone): Netty unpacks its native transport there.
        assertThat(image.file("tmp").mode() & 01777).isEqualTo(01777);
        // Nothing the user runs belongs to it: the image's files are root's and read-only to the server.
        assertThat(image.file("app/sluice.jar").uid()).isZero();
        assertThat(image.file("app/sluice.jar").mode() & 0022).isZero();
    }

    @Test
    void itExposesTheHttpAndGrpcPorts() {
        List<String> ports = new ArrayList<>();
        image.container().get("ExposedPorts").fieldNames().forEachRemaining(ports::add);
        assertThat(ports).containsExactlyInAnyOrder("8080/tcp", "8081/tcp");
    }

    @Test
    void itBindsEveryInterfaceThroughTheEnvironmentAndSetsNoOtherSluiceVariable() {
        List<String> env = strings(image.container().get("Env"));
        // Only SLUICE_BIND, so that every SLUICE_* variable a user sets (docker run -e) applies as it does for the
        // launcher, and SLUICE_BIND itself can be overridden.
        assertThat(env.stream().filter(e -> e.startsWith("SLUICE_"))).containsExactly("SLUICE_BIND=0.0.0.0");
        assertThat(env).noneMatch(e -> e.startsWith("JAVA_TOOL_OPTIONS=") || e.startsWith("JDK_JAVA_OPTIONS="));
    }

    @Test
    void theHealthCheckRunsTheProbeThatTheImageCarries() {
        JsonNode health = image.container().get("Healthcheck");
        assertThat(health).as("a Docker-format health check").isNotNull();
        List<String> test = strings(health.get("Test"));
        assertThat(test.get(0)).isEqualTo("CMD");
        assertThat(test.get(1)).isEqualTo("/opt/java/bin/java");
        assertThat(test).endsWith("-cp", "/app/classes", HealthProbe.class.getName());
        assertThat(image.files).containsKey("app/classes/io/sluice/image/HealthProbe.class");
        long second = 1_000_000_000L;
        assertThat(health.get("Interval").asLong()).isEqualTo(30 * second);
        assertThat(health.get("Timeout").asLong()).isEqualTo(10 * second);
        assertThat(health.get("StartPeriod").asLong()).isEqualTo(30 * second);
        assertThat(health.get("Retries").asInt()).isEqualTo(3);
    }

    @Test
    void theRuntimeHoldsTheServersModulesAndNotTheChartsDesktopModule() {
        String release = image.file("opt/java/release").text();
        Matcher m = Pattern.compile("(?m)^MODULES=\"([^\"]*)\"").matcher(release);
        assertThat(m.find()).as("MODULES in %s", release).isTrue();
        List<String> modules = Arrays.asList(m.group(1).split(" "));
        assertThat(modules).contains("java.base", "java.management", "java.naming", "java.sql", "jdk.crypto.ec",
                "jdk.unsupported").doesNotContain("java.desktop", "jdk.compiler", "jdk.jfr");
    }

    @Test
    void theConfigDescribesExactlyTheLayersTheTarballHolds() {
        assertThat(strings(image.config.get("rootfs").get("diff_ids"))).isEqualTo(image.diffIds);
        assertThat(image.config.get("os").asText()).isEqualTo("linux");
        assertThat(image.config.get("architecture").asText()).isEqualTo("amd64");
        assertThat(strings(image.manifest.get(0).get("RepoTags"))).singleElement().asString()
                .startsWith("sluice:");
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }
}
