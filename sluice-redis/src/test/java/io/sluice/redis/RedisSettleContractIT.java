package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.Mode;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.SettleContract;
import io.sluice.testkit.StoreContract;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Estimated charges and settlements against one redis-server (exact mode, client time on the contract's clock):
 * the same contract as the in-memory store, so the Lua ports of each algorithm's settle behave as the Java does.
 * The local-first modes are refused.
 */
@ExtendWith(SharedRedis.class)
class RedisSettleContractIT extends SettleContract {

    @Override
    protected Store newStore(ManualClock clock) {
        return RedisStore.builder().uri(RedisServer.shared().uri()).clock(clock)
                .timeout(StoreContract.PATIENT_TIMEOUT).build();
    }

    @Test
    void theLocalFirstModesAreRefusedByName() {
        RateLimiter coalesced = limiter(Rule.of("settle_coalesced", FixedWindow.of(10, Duration.ofMinutes(1)))
                .withMode(Mode.coalesced()));
        assertThatThrownBy(() -> coalesced.tryCharge("k", 1)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("coalesced mode");
    }
}
