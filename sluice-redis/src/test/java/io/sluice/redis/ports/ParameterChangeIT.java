package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.StoredState;
import io.sluice.redis.RedisStore;
import io.sluice.redis.BatchRequest;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.redis.internal.LimitParams;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A limit's parameters change (RateLimiter.updateLimit): a store that saw the version a state was written under
 * migrates it exactly as the in-memory store does; a store that never saw it, or a fingerprint of no version at
 * all, resets the key explicitly (decides as a fresh key) and never misreads it.
 */
@ExtendWith(SharedRedis.class)
class ParameterChangeIT {

    private final String prefix = "pc-" + UUID.randomUUID().toString().substring(0, 8);
    private final ManualClock clock = new ManualClock();

    private RedisStore redis() {
        // The script's own answer, not a cached repeat of a denial (RedisDenialCacheIT tests those).
        return Topology.STANDALONE.builder().prefix(prefix).clock(clock).cacheDenials(false).build();
    }

    private Store memory() {
        return Store.memory().clock(clock).build();
    }

    private RateLimiter limiter(Rule rule, Store store) {
        return RateLimiter.builder(rule).store(store).sleeper(clock).build();
    }

    private static FixedWindow perMinute(long limit) {
        return FixedWindow.of(limit, Duration.ofMinutes(1)).named("l");
    }

    private String key(String rule, String key) {
        return prefix + ":{" + rule + ":" + key + "}:l";
    }

    /** The same call on both limiters: equal decisions, returned. */
    private static Decision both(RateLimiter mem, RateLimiter red, Function<RateLimiter, Decision> call, String as) {
        Decision expected = call.apply(mem);
        assertThat(call.apply(red)).as(as).isEqualTo(expected);
        return expected;
    }

    private static void update(Limit limit, RateLimiter... limiters) {
        for (RateLimiter l : limiters) {
            l.updateLimit(limit);
        }
    }

    @Test
    void aStateWrittenUnderAVersionTheStoreSawIsMigratedLikeInMemory() {
        Rule v1 = Rule.of("mig", perMinute(5));
        try (Store memory = memory(); RedisStore redis = redis();
             RateLimiter mem = limiter(v1, memory); RateLimiter red = limiter(v1, redis)) {
            both(mem, red, l -> l.tryAcquire("k", 4), "v1");
            both(mem, red, l -> l.tryAcquire("old", 3), "v1");
            both(mem, red, l -> l.tryAcquire("batch", 2), "v1");
            update(perMinute(8), mem, red);                                     // v2: same window, keeps counts
            assertThat(both(mem, red, l -> l.tryAcquire("k"), "v1 -> v2").remaining()).isEqualTo(8 - 4 - 1);
            update(FixedWindow.of(8, Duration.ofMinutes(2)).named("l"), mem, red); // v3: another window
            update(perMinute(10), mem, red);                                    // v4: the first window again
            // "old" was last written under v1 and "k" under v2: each migrates from its own version to v4 directly.
            assertThat(both(mem, red, l -> l.tryAcquire("old"), "v1 -> v4").remaining()).isEqualTo(10 - 3 - 1);
            assertThat(both(mem, red, l -> l.tryAcquire("k"), "v2 -> v4").remaining()).isEqualTo(10 - 5 - 1);
            String v4 = LimitParams.fingerprint("fixed_window", "10 60000000 epoch 0");
            assertThat(Topology.STANDALONE.state(key("mig", "old")).fingerprint()).isEqualTo(v4);
            assertThat(Topology.STANDALONE.state(key("mig", "old")).count()).isEqualTo(4);
            // In a batch, behind another rule's limit, the previous versions still reach the right limit.
            Rule other = Rule.of("other", FixedWindow.of(1000, Duration.ofMinutes(1)).named("l"));
            Decision batched = redis.decideAll(List.of(BatchRequest.allOf(Request.tryAcquire(1),
                    new BatchRequest.Target(other, "batch"), new BatchRequest.Target(red.rule(), "batch")))).get(0);
            assertThat(batched.allowed()).isTrue();
            assertThat(Topology.STANDALONE.state(key("mig", "batch")).count()).as("v1 -> v4, kept").isEqualTo(3);
            assertThat(mem.tryAcquire("batch").remaining()).isEqualTo(10 - 3);
        }
    }

    @Test
    void aStoreThatNeverSawTheOldVersionResetsTheKeyExplicitly() {
        Rule v1 = Rule.of("fresh", perMinute(5));
        Rule v2 = Rule.of("fresh", perMinute(8));
        try (RedisStore first = redis(); RedisStore second = redis(); Store memory = memory();
             RateLimiter old = limiter(v1, first); RateLimiter current = limiter(v2, second);
             RateLimiter newKey = limiter(v2, memory)) {
            old.tryAcquire("k", 4);
            // A store that had seen v1 would keep the count of 4 (remaining 3); this one never saw v1.
            for (int i = 0; i < 10; i++) {
                assertThat(current.tryAcquire("k")).as("request " + i).isEqualTo(newKey.tryAcquire("k"));
                clock.advanceMillis(7_000);
            }
            StoredState state = Topology.STANDALONE.state(key("fresh", "k"));
            assertThat(state.fingerprint()).isEqualTo(LimitParams.fingerprint("fixed_window", "8 60000000 epoch 0"));
        }
    }

    @Test
    void aFingerprintOfNoVersionIsDroppedNotMisread() {
        Rule v1 = Rule.of("alien", perMinute(5));
        String stranger = "AAAAAA";
        String windowStart = Long.toString(clock.nowMicros() - clock.nowMicros() % 60_000_000L, 36);
        try (RedisStore redis = redis(); Store memory = memory();
             RateLimiter red = limiter(v1, redis); RateLimiter newKey = limiter(v1, memory)) {
            red.tryAcquire("warm-up");
            update(perMinute(6), red, newKey); // so the call carries a previous version, which does not match either
            assertThat(stranger).isNotIn(LimitParams.fingerprint("fixed_window", "5 60000000 epoch 0"),
                    LimitParams.fingerprint("fixed_window", "6 60000000 epoch 0"));
            String key = key("alien", "k");
            // Misread, count 99 would reject everything until the window ends.
            Topology.STANDALONE.call(key, "SET", key, stranger + "|" + windowStart + "|2r", "PX", "60000");
            assertThat(red.peek("k", 0)).isEqualTo(newKey.peek("k", 0));
            Topology.STANDALONE.call(key, "SET", key, stranger + "|" + windowStart + "|2r", "PX", "60000");
            for (int i = 0; i < 8; i++) {
                assertThat(red.tryAcquire("k")).as("request " + i).isEqualTo(newKey.tryAcquire("k"));
            }
        }
    }

    @Test
    void onlyTheLastEightPreviousVersionsAreKnown() {
        Rule v0 = Rule.of("hist", perMinute(20));
        try (Store memory = memory(); RedisStore redis = redis(); Store freshMemory = memory();
             RateLimiter mem = limiter(v0, memory); RateLimiter red = limiter(v0, redis)) {
            both(mem, red, l -> l.tryAcquire("recent", 3), "v0");
            both(mem, red, l -> l.tryAcquire("ancient", 3), "v0");
            for (int i = 1; i <= 8; i++) {
                update(perMinute(20 + i), mem, red);
                both(mem, red, l -> l.peek("elsewhere", 0), "v" + i); // the store sees each version
            }
            assertThat(both(mem, red, l -> l.tryAcquire("recent"), "v0 is 8 versions back").remaining())
                    .isEqualTo(28 - 3 - 1);
            update(perMinute(29), mem, red);
            // v0 is now 9 versions back: forgotten, the key resets (the memory store, unbounded, migrates it).
            try (RateLimiter newKey = limiter(red.rule(), freshMemory)) {
                Decision reset = red.tryAcquire("ancient");
                assertThat(reset).isEqualTo(newKey.tryAcquire("ancient"));
                assertThat(reset.remaining()).isEqualTo(29 - 1);
                assertThat(mem.tryAcquire("ancient").remaining()).isEqualTo(29 - 3 - 1);
            }
        }
    }

    @Test
    void twoVersionsInUseAtOnceMigrateBackAndForthLikeInMemory() {
        Rule a = Rule.of("flip", perMinute(5));
        Rule b = Rule.of("flip", FixedWindow.of(3, Duration.ofMinutes(1)).withCountRejected(true).named("l"));
        Rule c = Rule.of("flip", FixedWindow.of(4, Duration.ofMinutes(2)).named("l"));
        try (Store memory = memory(); RedisStore redis = redis()) {
            List<RateLimiter[]> pairs = new ArrayList<>();
            for (Rule rule : List.of(a, b, c)) {
                pairs.add(new RateLimiter[] {limiter(rule, memory), limiter(rule, redis)});
            }
            for (int step = 0; step < 60; step++) {
                RateLimiter[] pair = pairs.get((step * 7 + step / 5) % 3);
                String key = "k" + step % 2;
                Decision expected = pair[0].tryAcquire(key, 1 + step % 2);
                assertThat(pair[1].tryAcquire(key, 1 + step % 2)).as("step " + step).isEqualTo(expected);
                clock.advanceMillis(step % 3 == 0 ? 9_000 : 500);
            }
            for (RateLimiter[] pair : pairs) {
                pair[0].close();
                pair[1].close();
            }
        }
    }
}
