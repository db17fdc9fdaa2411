package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.internal.algorithm.Algorithm;
import io.sluice.internal.algorithm.Algorithms;
import io.sluice.internal.algorithm.Step;
import io.sluice.redis.RedisStore;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.RespConnection;
import io.sluice.testkit.redis.SharedRedis;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.StringJoiner;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * sliding_log's Lua module keeps a long log as the stored text and rewrites only its ends
 * (algorithms/sliding_log.lua). Here logs of thousands of entries, built by real requests through the Redis store,
 * must give the decisions of the Java transition and, after every request, exactly the stored string that
 * encoding the Java state's whole log gives ({@code <fingerprint>|<base-36 integers joined by ','>}).
 *
 * <p>The requests mix what the text has to survive: mostly one permit (the entries the count removes in C) and
 * some of up to 20, requests in the same microsecond (merged into the newest entry), rejections, with
 * countRejected the cap (the oldest entry trimmed), jumps of half a window (a long prefix dropped), a log whose
 * times gain a base-36 digit (10 to 11 digits at 36^10 microseconds, in 2085), and one that starts at time 0.
 *
 * <p>The three logs are independent (a rule of their own each) and run in parallel (sluice-redis's
 * junit-platform.properties); each reads its stored log over one connection of its own rather than a new
 * connection per read (7,000 reads per log).
 */
@ExtendWith(SharedRedis.class)
class SlidingLogLongLogIT {

    private static final long SEC = 1_000_000;

    @ParameterizedTest(name = "start {0}, countRejected {1}")
    @Execution(ExecutionMode.CONCURRENT)
    @CsvSource({
            "1767225600000000, false",    // 2026: 10-digit times
            "3656158140062976, true",     // 36^10 - 300 s: the times gain a digit half-way
            "0, true",                    // from the epoch: the first entry is at time 0
    })
    void aLongLogDecidesAndIsStoredAsTheJavaTransitionSays(long start, boolean countRejected, RedisServer redis)
            throws Exception {
        SlidingLog limit = new SlidingLog("per_hour", 5_000, Duration.ofMinutes(10), Duration.ZERO, countRejected);
        Algorithm<Object> java = Algorithms.of(limit);
        String fingerprint = LimitParams.fingerprint("sliding_log", LimitParams.encode(limit));
        String rule = "longlog-" + UUID.randomUUID();
        ManualClock clock = new ManualClock(start);
        Random random = new Random(start ^ 0x5eed);
        Object state = null;
        int longest = 0;
        int rejected = 0;
        String key = null;
        try (RedisStore store = RedisStore.builder().uri(redis.uri()).clock(clock).build();
             RespConnection reads = RespConnection.open(RedisServer.HOST, redis.port(), Duration.ofSeconds(10));
             RateLimiter limiter = RateLimiter.builder(Rule.of(rule, limit)).store(store).build()) {
            for (int i = 0; i < 7_000; i++) {
                long gap = switch (random.nextInt(10)) {
                    case 0 -> 0;                                   // same microsecond: merged into the newest
                    case 1 -> 1 + random.nextInt(3);
                    default -> random.nextInt(200_000);
                };
                if (i == 5_000) {
                    gap = 5 * 60 * SEC;                            // half a window: a long prefix leaves at once
                }
                clock.advanceMicros(gap);
                long now = clock.nowMicros();
                boolean peek = i > 0 && random.nextInt(20) == 0;
                long permits = peek ? 0 : switch (random.nextInt(50)) {
                    case 0 -> 2 + random.nextInt(19);
                    case 1, 2 -> 2 + random.nextInt(4);
                    default -> 1;
                };
                if (state != null && now >= java.expiresAt(state)) {
                    state = null;
                }
                Step<Object> step = java.step(state, now, permits, 0);
                Decision d = peek ? limiter.peek("k", 0) : limiter.tryAcquire("k", permits);
                String as = "request " + i + " at " + now + " for " + permits + " with " + entries(state) + " entries";
                assertThat(d.allowed()).as(as + ": allowed").isEqualTo(step.allowed());
                assertThat(d.remaining()).as(as + ": remaining").isEqualTo(step.remaining());
                assertThat(d.retryAfterMicros()).as(as + ": retry-after").isEqualTo(step.retryAfterMicros());
                assertThat(d.resetAfterMicros()).as(as + ": reset-after").isEqualTo(step.resetAfterMicros());
                if (!peek) {
                    state = step.allowed() ? step.admitted() : step.rejected();
                }
                rejected += step.allowed() ? 0 : 1;
                longest = Math.max(longest, entries(state));
                if (key == null) {
                    key = stateKey(redis, rule);
                }
                assertThat(reads.call("GET", key)).as(as + ": the stored log")
                        .isEqualTo(fingerprint + "|" + encode(log(state)));
            }
        }
        assertThat(longest).as("the longest log, in entries").isGreaterThan(3_000);
        assertThat(rejected).as("requests rejected").isPositive();
    }

    private static String stateKey(RedisServer redis, String rule) {
        List<?> keys = (List<?>) redis.call("KEYS", "*{" + rule + ":k}:per_hour");
        assertThat(keys).hasSize(1);
        return (String) keys.get(0);
    }

    /** The straightforward encoding: every integer in base 36, joined by ','. */
    private static String encode(long[] log) {
        StringJoiner out = new StringJoiner(",");
        for (long x : log) {
            out.add(Long.toString(x, 36));
        }
        return out.toString();
    }

    private static int entries(Object state) throws Exception {
        return state == null ? 0 : log(state).length / 2;
    }

    /** SlidingLogAlgorithm.State's log: time, permits, time, permits, ... */
    private static long[] log(Object state) throws Exception {
        Method accessor = state.getClass().getRecordComponents()[0].getAccessor();
        accessor.setAccessible(true);
        return (long[]) accessor.invoke(state);
    }
}
