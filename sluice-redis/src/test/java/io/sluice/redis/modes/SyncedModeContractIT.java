package io.sluice.redis.modes;

import io.sluice.redis.RedisStore;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.StoreContract;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The store contract with every rule in synced mode where the rule can be synced, against one redis-server on the
 * contract's manual clock. A rule synced mode refuses (an algorithm outside {@link Mode#SYNCABLE}) runs exactly.
 * The sync interval is an hour of the manual clock, so no round runs unless a test's clock passes it: each node
 * decides on the view it pulled on its first request, which for one node is exact.
 */
@ExtendWith(SharedRedis.class)
class SyncedModeContractIT extends StoreContract {
    @Override
    protected Store newStore(ManualClock clock) {
        return RedisStore.builder().uri(RedisServer.shared().uri()).clock(clock)
                .timeout(StoreContract.PATIENT_TIMEOUT).build();
    }

    @Override
    protected Rule rule(String name, Limit... limits) {
        Rule rule = Rule.of(name, limits);
        for (Limit l : limits) {
            if (!Mode.SYNCABLE.contains(l.algorithm())) {
                return rule;
            }
        }
        return rule.withMode(Mode.synced(Duration.ofHours(1)));
    }
}
