package io.sluice.redis;

import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.StoreContract;
import io.sluice.testkit.redis.RedisCluster;
import io.sluice.testkit.redis.SharedRedis;
import org.junit.jupiter.api.extension.ExtendWith;

/** The settlement contract against the 3-master cluster: a ticket's key shares its limits' hash slot. */
@ExtendWith(SharedRedis.class)
class RedisClusterSettleContractIT extends RedisSettleContractIT {
    @Override
    protected Store newStore(ManualClock clock) {
        return RedisStore.builder().uri(RedisCluster.shared().uri()).cluster(true).clock(clock)
                .timeout(StoreContract.PATIENT_TIMEOUT).build();
    }
}
