package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Compiles and runs the Java example of the README's Redis section against a real redis-server, and checks
 * that the README (README.md, or README-redis.md until it is merged) shows exactly this code.
 */
@ExtendWith(SharedRedis.class)
class RedisReadmeExampleIT {

    private final String apiKey = UUID.randomUUID().toString();
    private final List<String> responses = new ArrayList<>();

    private String redisUri() {
        return RedisServer.shared().uri();
    }

    private void serve() {
        responses.add("200");
    }

    private void respond429(long retryAfterSeconds) {
        responses.add("429 Retry-After: " + retryAfterSeconds);
    }

    private void respond503() {
        responses.add("503");
    }

    @Test
    void exampleRuns() {
        // README-BEGIN
        // 100 calls a minute per API key, counted once for all instances of the service.
        Rule perKey = Rule.of("api", FixedWindow.of(100, Duration.ofMinutes(1)).named("per_minute"));

        try (RedisStore store = RedisStore.builder()
                     .uri(redisUri())                   // e.g. "redis://10.0.0.5:6379"
                     .timeout(Duration.ofMillis(500))   // bound on every Redis call; default 1 s
                     .build();
             RateLimiter limiter = RateLimiter.builder(perKey).store(store).build()) {
            for (int i = 0; i < 101; i++) {
                Decision d;
                try {
                    d = limiter.tryAcquire("key:" + apiKey);
                } catch (RedisStoreException e) {
                    respond503();                       // Redis down or slow: the store never guesses; your policy
                    continue;
                }
                if (d.allowed()) {
                    serve();
                } else {
                    respond429(d.retryAfterSeconds());
                }
            }
        }
        // README-END
        long served = responses.stream().filter("200"::equals).count();
        // 100, and one 429; 101 when the run straddled a minute boundary (the window is epoch-aligned).
        assertThat(responses).hasSize(101).doesNotContain("503");
        assertThat(served).isBetween(100L, 101L);
        if (served == 100) {
            assertThat(responses.get(100)).matches("429 Retry-After: ([1-9]|[1-5][0-9]|60)");
        }
    }

    @Test
    void readmeShowsThisExample() throws IOException {
        Path root = Path.of("").toAbsolutePath();
        Path dir = Files.exists(root.resolve("README.md")) ? root : root.getParent();
        String source = Files.readString(Path.of("src/test/java/io/sluice/redis/RedisReadmeExampleIT.java"));
        String snippet = source.substring(source.indexOf("// README-BEGIN") + "// README-BEGIN".length(),
                source.indexOf("// README-END"));
        String code = snippet.lines().map(l -> l.length() >= 8 ? l.substring(8) : l.strip())
                .reduce((a, b) -> a + "\n" + b).orElseThrow().strip();
        String readme = Files.readString(dir.resolve("README.md"));
        Path section = dir.resolve("README-redis.md");
        if (!readme.contains(code) && Files.exists(section)) {
            readme = Files.readString(section);
        }
        assertThat(readme).contains(code);
    }
}
