package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.CalendarWindow;
import io.sluice.Charge;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.Settlement;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.Store;
import io.sluice.Ticket;
import io.sluice.TokenBucket;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.Seeds;
import io.sluice.testkit.StoreContract;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Lua ports of each algorithm's {@code mark} and {@code settle} against the Java (RedisMemoryEquivalenceIT's
 * pattern): the same seeded sequence of tries, estimated charges, settlements (refunds, extra charges, repeats)
 * and clock steps runs on the in-memory store and on Redis, and every decision and settlement must be equal.
 */
@ExtendWith(SharedRedis.class)
class SettleEquivalenceIT {

    static Stream<Limit> limits() {
        return Stream.of(
                FixedWindow.of(10, Duration.ofSeconds(2)),
                CalendarWindow.of(12, CalendarWindow.Period.MINUTE, ZoneOffset.UTC),
                SlidingWindow.of(10, Duration.ofSeconds(2)),
                SlidingLog.of(10, Duration.ofSeconds(2)),
                SlidingLog.of(6, Duration.ofSeconds(2)).withMinGap(Duration.ofMillis(150)),
                RollingWindow.of(10, Duration.ofSeconds(2), Duration.ofMillis(300)),
                Gcra.of(10, Duration.ofSeconds(2)).withBurst(10),
                Gcra.of(7, Duration.ofSeconds(3)).withBurst(6),
                TokenBucket.of(10, 3, Duration.ofSeconds(2)),
                TokenBucket.of(10, 4, Duration.ofSeconds(1)).withRefill(TokenBucket.Refill.INTERVAL),
                TokenBucket.of(8, 2, Duration.ofSeconds(1)).withRefill(TokenBucket.Refill.INTERVAL_ALIGNED)
                        .withInitialTokens(3));
    }

    @ParameterizedTest
    @MethodSource("limits")
    void memoryAndRedisDecideAndSettleAlike(Limit limit) {
        Rule rule = Rule.of("settle_eq_" + UUID.randomUUID().toString().substring(0, 8), limit);
        ManualClock clock = new ManualClock();
        Random random = new Random(Seeds.of("SettleEquivalenceIT." + limit));
        try (Store memory = Store.memory().clock(clock).build();
             Store redis = RedisStore.builder().uri(RedisServer.shared().uri()).clock(clock).cacheDenials(false)
                     .timeout(StoreContract.PATIENT_TIMEOUT).build();
             RateLimiter m = RateLimiter.builder(rule).store(memory).build();
             RateLimiter r = RateLimiter.builder(rule).store(redis).build()) {
            List<Ticket[]> open = new ArrayList<>();
            for (int step = 0; step < 300; step++) {
                String at = "step " + step + " at " + clock.nowMicros() + " (" + limit + ")";
                switch (random.nextInt(6)) {
                    case 0 -> clock.advanceMicros(random.nextInt(700_000));
                    case 1 -> {
                        long permits = 1 + random.nextInt(3);
                        assertThat(r.tryAcquire("k", permits)).as(at).isEqualTo(m.tryAcquire("k", permits));
                    }
                    case 2, 3 -> {
                        long estimate = 1 + random.nextInt(6);
                        Charge cm = m.tryCharge("k", estimate);
                        Charge cr = r.tryCharge("k", estimate);
                        assertThat(cr.decision()).as(at).isEqualTo(cm.decision());
                        if (cm.allowed()) {
                            open.add(new Ticket[] {cm.ticket(), cr.ticket()});
                        }
                    }
                    default -> {
                        if (!open.isEmpty()) {
                            int i = random.nextInt(open.size());
                            Ticket[] t = open.get(i);
                            if (random.nextInt(5) > 0) {
                                open.remove(i);    // else settled twice: the second must do nothing in both
                            }
                            long actual = random.nextInt((int) t[0].estimate() * 2 + 1);
                            Settlement sm = m.settle(t[0], actual);
                            Settlement sr = r.settle(t[1], actual);
                            assertThat(sr).as(at).isEqualTo(sm);
                        }
                    }
                }
                assertThat(r.peek("k", 1)).as(at).isEqualTo(m.peek("k", 1));
            }
        }
    }
}
