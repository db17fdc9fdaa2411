package io.sluice.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.redis.RedisStore;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Redis store's example program (docs/operations/redis.md), compiled from the page and run twice against a
 * real redis-server: the second run finds the count the first left in Redis, as two processes would.
 */
@ExtendWith(SharedRedis.class)
class RedisExampleIT {

    @TempDir
    Path tmp;

    @Test
    void twoRunsShareOneLimitInRedis() throws Exception {
        JavaSnippet example = JavaSnippet.declaring(Docs.docsDir().resolve("operations/redis.md"), "SharedApiLimit");
        assertThat(example.compileInto(tmp)).isEmpty();
        String uri = RedisServer.shared().uri();
        // Load Lettuce and Netty once with a generous timeout, so that the example's first connection, bounded
        // by the default 1 s, does not also pay for class loading on a busy machine.
        RedisStore.builder().uri(uri).timeout(Duration.ofSeconds(30)).build().close();

        long minuteBefore = System.currentTimeMillis() / 60_000;   // redis-server runs on this machine's clock
        List<String> first = example.runMain(tmp, uri).lines().toList();
        List<String> second = example.runMain(tmp, uri).lines().toList();
        long minuteAfter = System.currentTimeMillis() / 60_000;

        assertThat(first).noneMatch(l -> l.startsWith("503"));
        assertThat(second).noneMatch(l -> l.startsWith("503"));
        if (minuteBefore == minuteAfter) {
            // Both runs in one window: 100 served in all, the first run's last call and all of the second's refused.
            assertThat(served(first)).isEqualTo(100);
            assertThat(served(second)).isZero();
            assertThat(first).hasSize(2).first().asString().matches("429, Retry-After: ([1-9]|[1-5][0-9]|60)");
            assertThat(second).hasSize(102);
            assertThat(second.subList(0, 101)).allMatch(l -> l.matches("429, Retry-After: ([1-9]|[1-5][0-9]|60)"));
        } else {
            // A minute boundary fell between the runs or inside one: each window still served at most 100.
            assertThat(served(first) + served(second)).isBetween(100, 200);
        }
    }

    private static int served(List<String> lines) {
        String last = lines.get(lines.size() - 1);
        assertThat(last).matches("\\d+ served");
        return Integer.parseInt(last.substring(0, last.indexOf(' ')));
    }
}
