package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Lua ports decide exactly as the Java transitions: random rules and request sequences, replayed on the
 * in-memory store and on Redis with the same manual clock, must give equal decisions step by step. Each port
 * adds a generator of its limits to {@link #PORTED}.
 */
@ExtendWith(SharedRedis.class)
class RedisMemoryEquivalenceIT {

    /** A random limit of each ported algorithm, named by the caller. */
    private static final List<Function<Random, Limit>> PORTED = List.of(RedisMemoryEquivalenceIT::fixedWindow);

    private static final long[] WINDOWS_MICROS = {1, 7, 1_000, 250_000, 1_000_000, 60_000_000,
            31_622_400_000_000L};

    private static Limit fixedWindow(Random r) {
        long limit = r.nextInt(4) == 0 ? Limit.MAX_COUNT - r.nextInt(3) : 1 + r.nextInt(8);
        return new FixedWindow("fixed_window", limit, Duration.ofNanos(1_000 * pick(r, WINDOWS_MICROS)),
                r.nextBoolean() ? FixedWindow.Align.EPOCH : FixedWindow.Align.FIRST_REQUEST, r.nextBoolean());
    }

    private static long pick(Random r, long[] values) {
        return values[r.nextInt(values.length)];
    }

    @Test
    void randomScenariosDecideIdentically() {
        // -Dsluice.seed=<seed from a failure message> replays a failing run.
        long seed = Long.getLong("sluice.seed", new Random().nextLong());
        Random r = new Random(seed);
        ManualClock clock = new ManualClock();
        String prefix = "eq-" + UUID.randomUUID().toString().substring(0, 8);
        try (Store memory = Store.memory().clock(clock).build();
             RedisStore redis = Topology.STANDALONE.builder().prefix(prefix).clock(clock).build()) {
            for (int scenario = 0; scenario < 60; scenario++) {
                run(r, clock, memory, redis, "s" + scenario, "seed " + seed + ", scenario " + scenario);
            }
        }
    }

    private static void run(Random r, ManualClock clock, Store memory, Store redis, String name, String context) {
        Rule rule = Rule.of(name, randomLimits(r));
        try (RateLimiter mem = RateLimiter.builder(rule).store(memory).sleeper(clock).build();
             RateLimiter red = RateLimiter.builder(rule).store(redis).sleeper(clock).build()) {
            for (int step = 0; step < 60; step++) {
                advance(r, clock);
                String at = context + ", step " + step + ", t=" + clock.nowMicros() + ", rule " + mem.rule();
                String key = "k" + r.nextInt(2);
                int what = r.nextInt(20);
                if (what == 0) {
                    Limit changed = PORTED.get(0).apply(r);
                    Limit target = mem.rule().limits().get(r.nextInt(mem.rule().limits().size()));
                    if (target.getClass() == changed.getClass()) {
                        mem.updateLimit(changed.named(target.name()));
                        red.updateLimit(changed.named(target.name()));
                    }
                    continue;
                }
                if (what == 1) {
                    mem.reset(key);
                    red.reset(key);
                    continue;
                }
                long max = Math.min(mem.rule().maxPermits(), Limit.MAX_COUNT);
                long permits = 1 + (r.nextBoolean() ? r.nextInt((int) Math.min(max, 5)) : (long) (r.nextDouble() * max));
                permits = Math.min(permits, max);
                Decision expected;
                Decision actual;
                switch (what % 4) {
                    case 0 -> {
                        expected = mem.tryAcquireAtMost(key, permits);
                        actual = red.tryAcquireAtMost(key, permits);
                    }
                    case 1 -> {
                        long peeked = r.nextBoolean() ? 0 : permits;
                        expected = mem.peek(key, peeked);
                        actual = red.peek(key, peeked);
                    }
                    case 2 -> {
                        Duration maxWait = Duration.ofSeconds(r.nextInt(3));
                        expected = mem.reserve(key, permits, maxWait);
                        actual = red.reserve(key, permits, maxWait);
                    }
                    default -> {
                        expected = mem.tryAcquire(key, permits);
                        actual = red.tryAcquire(key, permits);
                    }
                }
                assertThat(actual).as(at).isEqualTo(expected);
                Decision peekExpected = mem.peek(key, 0);
                assertThat(red.peek(key, 0)).as(at + " (peek after)").isEqualTo(peekExpected);
            }
        }
    }

    private static List<Limit> randomLimits(Random r) {
        int n = 1 + r.nextInt(3);
        List<Limit> limits = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            limits.add(PORTED.get(r.nextInt(PORTED.size())).apply(r).named("l" + i));
        }
        return limits;
    }

    private static void advance(Random r, ManualClock clock) {
        switch (r.nextInt(6)) {
            case 0 -> { }
            case 1 -> clock.advanceMicros(r.nextInt(10));
            case 2 -> clock.advanceMillis(r.nextInt(1_500));
            case 3 -> clock.advanceMicros(-r.nextInt(2_000)); // clocks step back
            case 4 -> clock.advance(Duration.ofSeconds(r.nextInt(120)));
            default -> clock.advanceMicros(r.nextInt(1_000_000));
        }
    }
}
