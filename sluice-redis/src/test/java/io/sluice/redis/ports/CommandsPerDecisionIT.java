package io.sluice.redis.ports;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.TokenBucket;
import io.sluice.redis.RedisStore;
import io.sluice.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Redis commands one exact-mode decision runs, counted by Redis itself ({@code INFO commandstats}) on a
 * server of this class's own, so no other test's traffic counts: the request key's GET, TIME, one GET per state,
 * one SET per written state (with its expiry), and the request key's SET when something was written. The bare
 * token-bucket script of the benchmark runs five (EVALSHA, TIME, HMGET, HSET, PEXPIRE); an admitting decision
 * of one limit runs six, the sixth buying replay safety (docs/redis-script-protocol.md: why one MGET for the
 * request key and the states was measured and not adopted).
 */
class CommandsPerDecisionIT {

    private static RedisServer redis;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        redis.close();
    }

    /** Commands per command name that ran while {@code decisions} did, after a warm-up decision on another key. */
    private static Map<String, Long> commands(Rule rule, String key, int decisions) {
        try (RedisStore store = RedisStore.builder().uri(redis.uri()).build();
             RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            limiter.tryAcquire("warm-up");
            redis.call("CONFIG", "RESETSTAT");
            for (int i = 0; i < decisions; i++) {
                limiter.tryAcquire(key);
            }
            return commandStats();
        }
    }

    private static Map<String, Long> commandStats() {
        String info = (String) redis.call("INFO", "commandstats");
        Map<String, Long> calls = new TreeMap<>();
        Matcher m = Pattern.compile("cmdstat_([a-z|]+):calls=(\\d+)").matcher(info);
        while (m.find()) {
            if (!m.group(1).startsWith("config") && !m.group(1).equals("info")) {
                calls.put(m.group(1), Long.parseLong(m.group(2)));
            }
        }
        return calls;
    }

    @Test
    void anAdmittingDecisionOfOneLimitRunsSixCommands() {
        Map<String, Long> calls = commands(Rule.of("one", TokenBucket.of(100, 10, Duration.ofSeconds(1))), "k", 1);
        assertThat(calls).containsExactlyInAnyOrderEntriesOf(Map.of("fcall", 1L, "get", 2L, "time", 1L,
                "set", 2L));
    }

    @Test
    void aRejectionThatChangesNothingRunsFourCommands() {
        Rule rule = Rule.of("reject", FixedWindow.of(1, Duration.ofHours(1)));
        try (RedisStore store = RedisStore.builder().uri(redis.uri()).build();
             RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            assertThat(limiter.tryAcquire("k").allowed()).isTrue();
            redis.call("CONFIG", "RESETSTAT");
            assertThat(limiter.tryAcquire("k").allowed()).isFalse();
            assertThat(commandStats()).containsExactlyInAnyOrderEntriesOf(Map.of("fcall", 1L, "get", 2L,
                    "time", 1L));
        }
    }

    @Test
    void aRuleOfThreeLimitsIsOneScriptCallOfTenCommands() {
        Rule rule = Rule.of("three", TokenBucket.of(100, 10, Duration.ofSeconds(1)),
                Gcra.of(1_000, Duration.ofMinutes(1)), FixedWindow.of(10_000, Duration.ofHours(1)));
        Map<String, Long> calls = commands(rule, "k", 1);
        assertThat(calls).containsExactlyInAnyOrderEntriesOf(Map.of("fcall", 1L, "get", 4L, "time", 1L,
                "set", 4L));
    }
}
