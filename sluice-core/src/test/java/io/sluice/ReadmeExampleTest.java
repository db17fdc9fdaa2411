package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Compiles and runs the README's Java example, and checks the README shows exactly this code. */
class ReadmeExampleTest {

    private final AtomicLong fakeNow = new AtomicLong(1_767_225_600_000_000L);
    private final List<String> responses = new ArrayList<>();

    private Clock clock() {
        return fakeNow::get;
    }

    private void callPartnerApi() {
        responses.add("200");
    }

    private void respond429(long retryAfterSeconds) {
        responses.add("429 Retry-After: " + retryAfterSeconds);
    }

    @Test
    void exampleRuns() {
        // README-BEGIN
        // 30 calls a minute per user to a partner API, and no more than 5 in any second.
        Rule partnerApi = Rule.of("partner_api",
                SlidingLog.of(30, Duration.ofMinutes(1)).named("per_minute"),
                TokenBucket.of(5, 5, Duration.ofSeconds(1)).named("per_second"));

        try (RateLimiter limiter = RateLimiter.builder(partnerApi)
                .store(Store.memory().clock(clock()).build())   // omit clock() for the system clock
                .build()) {
            for (int i = 0; i < 7; i++) {
                Decision d = limiter.tryAcquire("user:42");
                if (d.allowed()) {
                    callPartnerApi();
                } else {
                    respond429(d.retryAfterSeconds());          // rounded up, never down
                }
            }
        }
        // README-END
        assertThat(responses).containsExactly("200", "200", "200", "200", "200",
                "429 Retry-After: 1", "429 Retry-After: 1");
    }

    @Test
    void readmeShowsThisExample() throws IOException {
        Path root = Path.of("").toAbsolutePath();
        Path readme = Files.exists(root.resolve("README.md")) ? root.resolve("README.md") : root.resolveSibling("README.md");
        String source = Files.readString(Path.of("src/test/java/io/sluice/ReadmeExampleTest.java"));
        String snippet = source.substring(source.indexOf("// README-BEGIN") + "// README-BEGIN".length(),
                source.indexOf("// README-END"));
        String code = snippet.lines().map(l -> l.length() >= 8 ? l.substring(8) : l.strip())
                .reduce((a, b) -> a + "\n" + b).orElseThrow().strip();
        assertThat(Files.readString(readme)).contains(code);
    }
}
