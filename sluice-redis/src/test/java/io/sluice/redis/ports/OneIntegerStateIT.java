package io.sluice.redis.ports;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.TokenBucket;
import io.sluice.internal.algorithm.Arith;
import io.sluice.redis.RedisStore;
import io.sluice.redis.StoredState;
import io.sluice.redis.Topology;
import io.sluice.redis.internal.LimitParams;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * gcra's state stored as ONE integer, {@code <TAT><3 fingerprint digits>} (lib/state_int.lua,
 * docs/redis-script-protocol.md "A state of one integer"): what it costs in Redis (MEMORY USAGE, pinned: bytes are
 * deterministic on the Redis version the tests start), that a state written in the earlier format still decides
 * exactly as the Java transition does, and what the three digits mean when a limit changes: a version the call
 * knows migrates, another one is dropped unless its digits are the same (then its TAT is kept, which never admits
 * more than the reset would).
 */
@ExtendWith(SharedRedis.class)
class OneIntegerStateIT {

    private static final long NOW = 1_767_225_612_345_678L;

    /** A 6-character prefix, as long as the default "sluice", so the keys measure like the benchmark's. */
    private final String prefix = "o" + UUID.randomUUID().toString().substring(0, 5);
    private final ManualClock clock = new ManualClock(NOW);

    private RedisStore redis() {
        // The script's own answers, not a cached repeat of a denial.
        return Topology.STANDALONE.builder().prefix(prefix).clock(clock).cacheDenials(false).build();
    }

    private Store memory() {
        return Store.memory().clock(clock).build();
    }

    private RateLimiter limiter(Rule rule, Store store) {
        return RateLimiter.builder(rule).store(store).sleeper(clock).build();
    }

    private String key(String rule, String key, String limit) {
        return prefix + ":{" + rule + ":" + key + "}:" + limit;
    }

    private static String fingerprint(Limit limit) {
        return LimitParams.fingerprint(limit.algorithm(), LimitParams.encode(limit));
    }

    private static String digits(Limit limit) {
        return StoredState.fingerprintDigits(fingerprint(limit));
    }

    private static Object call(String... command) {
        return RedisServer.shared().call(command);
    }

    /** The same call on both limiters: equal decisions, returned. */
    private static Decision both(RateLimiter mem, RateLimiter red, Function<RateLimiter, Decision> call, String as) {
        Decision expected = call.apply(mem);
        assertThat(call.apply(red)).as(as).isEqualTo(expected);
        return expected;
    }

    /** A mix of requests, 37 ms apart, on both limiters. */
    private void decideAlike(RateLimiter mem, RateLimiter red, String key, int requests) {
        for (int i = 0; i < requests; i++) {
            String as = "request " + i;
            switch (i % 4) {
                case 0 -> both(mem, red, l -> l.tryAcquire(key), as);
                case 1 -> both(mem, red, l -> l.peek(key, 1), as);
                case 2 -> both(mem, red, l -> l.reserve(key, 2, Duration.ofMillis(300)), as);
                default -> both(mem, red, l -> l.tryAcquireAtMost(key, 3), as);
            }
            clock.advanceMillis(37);
        }
    }

    @Test
    void aGcraKeyOfTheBenchmarkTakes72BytesAndItsTatIsTheIntegerRedisKeepsInsideTheObject() {
        Gcra limit = Gcra.of(1000, Duration.ofSeconds(1)).withBurst(100);
        Rule rule = Rule.of("bench", limit.named("gcra"), limit.named("gcra_1234567"),
                TokenBucket.of(100, 1000, Duration.ofSeconds(1)).named("token_bucket"));
        try (RedisStore store = redis(); RateLimiter l = limiter(rule, store)) {
            assertThat(l.tryAcquire("user:1234").allowed()).isTrue();
            String gcra = key("bench", "user:1234", "gcra");
            String longer = key("bench", "user:1234", "gcra_1234567");
            String tokenBucket = key("bench", "user:1234", "token_bucket");
            assertThat(gcra).hasSize(29);
            assertThat(longer).hasSize(37);
            assertThat(tokenBucket).hasSize(37);
            // TAT = now + T (T = 1,000 µs), then the digits of the version's fingerprint.
            String tat = StoredState.encodeInteger(fingerprint(limit.named("gcra")), NOW + 1_000);
            assertThat(call("GET", gcra)).isEqualTo(tat);
            assertThat(call("OBJECT", "ENCODING", gcra)).isEqualTo("int");
            // 24 (dictionary entry) + 32 (a key of 29 characters) + 16 (the object holding the integer)
            assertThat(call("MEMORY", "USAGE", gcra, "SAMPLES", "0")).isEqualTo(72L);
            // 24 + 48 (37 characters) + 16
            assertThat(call("MEMORY", "USAGE", longer, "SAMPLES", "0")).isEqualTo(88L);
            // token_bucket keeps its string of three fields (docs/redis-memory.md says why): 24 + 48 + 48
            assertThat(call("OBJECT", "ENCODING", tokenBucket)).isEqualTo("embstr");
            assertThat((Long) call("MEMORY", "USAGE", tokenBucket, "SAMPLES", "0")).isEqualTo(120L);
            assertThat((Long) call("PTTL", gcra)).isPositive();
        }
    }

    @Test
    void aStateWrittenInTheEarlierFormatDecidesAsTheJavaTransitionAndIsRewrittenAsOneInteger() {
        Gcra limit = Gcra.of(10, Duration.ofSeconds(1)).withBurst(10).named("g");   // T = 100 ms, B = 1 s
        Rule rule = Rule.of("compat", limit);
        String key = key("compat", "k", "g");
        try (Store memory = memory(); RedisStore redis = redis();
             RateLimiter mem = limiter(rule, memory); RateLimiter red = limiter(rule, redis)) {
            both(mem, red, l -> l.tryAcquire("k", 7), "before");
            clock.advanceMillis(30);
            both(mem, red, l -> l.tryAcquire("k", 2), "before");
            StoredState written = Topology.STANDALONE.state(key);
            assertThat(written.oneInteger()).isTrue();
            long tat = written.integer(0);
            assertThat(tat).isEqualTo(NOW + 900_000);
            // The value an earlier version wrote for the same state: fingerprint, TAT - B and B in base 36.
            call("SET", key, StoredState.encode(fingerprint(limit), tat - 1_000_000, 1_000_000), "PX", "60000");
            Decision first = both(mem, red, l -> l.tryAcquire("k", 2), "read from the earlier format");
            assertThat(first.allowed()).as("9 of 10 used 30 ms ago: 1 left, no reset at the upgrade").isFalse();
            assertThat(Topology.STANDALONE.state(key).oneInteger()).as("a rejection writes nothing").isFalse();
            decideAlike(mem, red, "k", 60);
            StoredState after = Topology.STANDALONE.state(key);
            assertThat(after.oneInteger()).as("written again as one integer").isTrue();
            assertThat(after.fingerprint()).isEqualTo(digits(limit));
        }
    }

    @Test
    void aVersionTheCallKnowsMigratesFromOneIntegerLikeInMemory() {
        Gcra v1 = Gcra.of(10, Duration.ofSeconds(1)).withBurst(10).named("g");
        Gcra v2 = Gcra.of(20, Duration.ofSeconds(1)).withBurst(4).named("g");
        assertThat(digits(v1)).isNotEqualTo(digits(v2));
        Rule rule = Rule.of("known", v1);
        try (Store memory = memory(); RedisStore redis = redis();
             RateLimiter mem = limiter(rule, memory); RateLimiter red = limiter(rule, redis)) {
            both(mem, red, l -> l.tryAcquire("k", 8), "v1");
            mem.updateLimit(v2);
            red.updateLimit(v2);
            Decision kept = both(mem, red, l -> l.tryAcquire("k"), "v1 -> v2");
            assertThat(kept.allowed()).as("the TAT of 8 permits of 100 ms is kept: 800 ms > B = 200 ms").isFalse();
            decideAlike(mem, red, "k", 40);
        }
    }

    @Test
    void aVersionTheCallDoesNotKnowIsDroppedWhenItsDigitsDifferAndKeptWhenTheyAreTheSame() {
        Gcra v1 = Gcra.of(10, Duration.ofSeconds(1)).withBurst(10).named("g");
        Gcra other = null;
        Gcra same = null;
        for (long n = 11; same == null || other == null; n++) {
            Gcra candidate = Gcra.of(n, Duration.ofSeconds(1)).withBurst(10).named("g");
            if (digits(candidate).equals(digits(v1))) {
                same = candidate;
            } else if (other == null) {
                other = candidate;
            }
        }
        assertThat(fingerprint(same)).isNotEqualTo(fingerprint(v1));
        for (Gcra v2 : new Gcra[] {other, same}) {
            String user = "u" + v2.limit();
            try (RedisStore first = redis(); RedisStore second = redis(); Store memory = memory();
                 RateLimiter old = limiter(Rule.of("unknown", v1), first);
                 RateLimiter current = limiter(Rule.of("unknown", v2), second);
                 RateLimiter fresh = limiter(Rule.of("unknown", v2), memory)) {
                assertThat(old.tryAcquire(user, 10).allowed()).isTrue();          // TAT = now + 1 s
                Decision d = current.tryAcquire(user);
                if (v2 == other) {
                    assertThat(d).as("reset: decides as a new key").isEqualTo(fresh.tryAcquire(user));
                } else {
                    // The documented misread: v1's TAT read as v2's. B2 = 10 T2 < 1 s, so the key waits until
                    // TAT - B2 + T2 instead of starting afresh: never more permissive than the reset.
                    long t2 = Arith.ceilDiv(1_000_000, v2.limit());
                    assertThat(d.allowed()).as("kept TAT of v1 (v2 = %s)", v2).isFalse();
                    assertThat(d.retryAfterMicros()).isEqualTo(1_000_000 - 10 * t2 + t2);
                    assertThat(fresh.tryAcquire(user).allowed()).isTrue();
                }
            }
        }
    }

    @Test
    void aTatPastTwoToThe53KeepsTheFieldsAndDecidesAsInMemory() {
        clock.setMicros(Arith.MAX_TIME - 10_000_000);
        Gcra limit = Gcra.of(1, Duration.ofHours(1)).withBurst(3).named("g");
        Rule rule = Rule.of("late", limit);
        try (Store memory = memory(); RedisStore redis = redis();
             RateLimiter mem = limiter(rule, memory); RateLimiter red = limiter(rule, redis)) {
            both(mem, red, l -> l.tryAcquire("k"), "TAT = now + 1 h, past 2^53");
            StoredState state = Topology.STANDALONE.state(key("late", "k", "g"));
            assertThat(state.oneInteger()).isFalse();
            assertThat(state.fields()).hasSize(2);
            decideAlike(mem, red, "k", 12);
        }
    }

    @Test
    void anotherAlgorithmUnderTheSameNameDropsTheIntegerAndDecidesAsANewKey() {
        Rule gcra = Rule.of("switch", Gcra.of(10, Duration.ofSeconds(1)).withBurst(10).named("l"));
        Rule bucket = Rule.of("switch", TokenBucket.of(10, 1, Duration.ofSeconds(1)).named("l"));
        try (RedisStore first = redis(); RedisStore second = redis(); Store memory = memory();
             RateLimiter before = limiter(gcra, first); RateLimiter after = limiter(bucket, second);
             RateLimiter fresh = limiter(bucket, memory)) {
            assertThat(before.tryAcquire("k", 10).allowed()).isTrue();
            assertThat(Topology.STANDALONE.state(key("switch", "k", "l")).oneInteger()).isTrue();
            for (int i = 0; i < 12; i++) {
                assertThat(after.tryAcquire("k")).as("request " + i).isEqualTo(fresh.tryAcquire("k"));
            }
        }
    }
}
