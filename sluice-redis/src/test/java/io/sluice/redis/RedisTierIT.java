package io.sluice.redis;

import io.sluice.Store;
import java.time.Duration;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.TierContract;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Per-key tiers against one redis-server, in client-time mode on the contract's manual clock. A generous timeout:
 * the cases assert decisions, never speed, and a busy machine must not fail the first connection.
 */
@ExtendWith(SharedRedis.class)
class RedisTierIT extends TierContract {
    @Override
    protected Store newStore(ManualClock clock) {
        return RedisStore.builder().uri(RedisServer.shared().uri()).clock(clock)
                .timeout(Duration.ofSeconds(10)).build();
    }
}
