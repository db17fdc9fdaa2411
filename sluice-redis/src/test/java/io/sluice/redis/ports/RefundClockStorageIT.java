package io.sluice.redis.ports;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Gcra;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.Ticket;
import io.sluice.TokenBucket;
import io.sluice.redis.RedisStore;
import io.sluice.redis.StoredState;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.StoreContract;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * gcra's and token_bucket's refund clock (docs/reference/settle.md) in the stored value: an extra field only once
 * a key is refunded into, so a token_bucket key never refunded into keeps the value earlier versions wrote and read
 * (a gcra key its TAT as one integer, lib/state_int.lua), and a value of either shape reads back.
 */
@ExtendWith(SharedRedis.class)
class RefundClockStorageIT {

    private static final String RULE = "refund_clock_" + UUID.randomUUID().toString().substring(0, 8);

    private static StoredState stored(String limit) {
        return StoredState.parse(RedisServer.shared().call("GET", "sluice:{" + RULE + ":k}:" + limit));
    }

    @Test
    void theClockIsAnExtraFieldOnlyOnceAKeyIsRefundedInto() {
        ManualClock clock = new ManualClock();
        clock.setMicros(1_800_000_000_000_000L);
        Rule rule = Rule.of(RULE, Gcra.of(10, Duration.ofMinutes(1)).withBurst(10).named("g"),
                TokenBucket.of(10, 1, Duration.ofSeconds(6)).named("t"));
        try (Store redis = RedisStore.builder().uri(RedisServer.shared().uri()).clock(clock).cacheDenials(false)
                .timeout(StoreContract.PATIENT_TIMEOUT).build();
             RateLimiter limiter = RateLimiter.builder(rule).store(redis).build()) {
            Ticket ticket = limiter.tryCharge("k", 6).ticket();
            assertThat(stored("g").oneInteger()).as("gcra never refunded into: its TAT alone, one integer").isTrue();
            assertThat(stored("t").fields()).hasSize(3);

            assertThat(limiter.settle(ticket, 1).refunded()).isEqualTo(5);
            assertThat(stored("g").fields()).hasSize(3);
            assertThat(stored("g").integer(2)).as("5 permits of T = 6 s").isEqualTo(30_000_000L);
            assertThat(stored("t").fields()).hasSize(4);
            assertThat(stored("t").integer(3)).as("5 tokens of 6 s each").isEqualTo(30_000_000L);

            assertThat(limiter.tryAcquire("k", 9).allowed()).as("the three- and four-field values read back").isTrue();
            assertThat(limiter.tryAcquire("k", 1).allowed()).isFalse();
            assertThat(stored("g").fields()).as("the clock rides along").hasSize(3);
        }
    }
}
