package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A library user's first decision on Redis prints nothing on stderr: in particular no SLF4J "no providers"
 * warning, which an application without an SLF4J binding used to get from the store's own logger and from
 * Netty's logger probe. The application runs in its own JVM on exactly the module's runtime dependencies (as
 * Maven resolves them into {@code target/runtime-classpath.txt}), so a dependency that brings such a warning
 * back fails this test.
 */
@ExtendWith(SharedRedis.class)
class LibraryLoggingIT {

    @Test
    void aDecisionOnRedisPrintsNoWarning() throws Exception {
        String runtime = Files.readString(Path.of("target", "runtime-classpath.txt")).trim();
        String classPath = String.join(File.pathSeparator, Path.of("target", "classes").toString(),
                Path.of("target", "test-classes").toString(), runtime);
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", classPath, LibraryUserMain.class.getName(), RedisServer.shared().uri()).start();
        byte[] stderr = p.getErrorStream().readAllBytes();
        String stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(new String(stderr, StandardCharsets.UTF_8)).isZero();
        assertThat(stdout).isEqualTo("allowed=true" + System.lineSeparator());
        assertThat(new String(stderr, StandardCharsets.UTF_8)).as("stderr").isEmpty();
    }
}
