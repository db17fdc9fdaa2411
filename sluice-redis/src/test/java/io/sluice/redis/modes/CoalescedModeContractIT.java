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
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The store contract with every rule in coalesced mode, against one redis-server on the contract's manual clock:
 * a request decided in a batch call is decided as its own call would be, so every case holds unchanged.
 */
@ExtendWith(SharedRedis.class)
class CoalescedModeContractIT extends StoreContract {
    @Override
    protected Store newStore(ManualClock clock) {
        return RedisStore.builder().uri(RedisServer.shared().uri()).clock(clock)
                .timeout(StoreContract.PATIENT_TIMEOUT).build();
    }

    @Override
    protected Rule rule(String name, Limit... limits) {
        return Rule.of(name, limits).withMode(Mode.coalesced());
    }
}
