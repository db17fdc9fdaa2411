package io.sluice.redis;

import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.StoreContract;
import io.sluice.testkit.redis.RedisCluster;
import io.sluice.testkit.redis.SharedRedis;
import org.junit.jupiter.api.extension.ExtendWith;

/** The store contract against the 3-master cluster on the EVALSHA path ({@code scripting(EVAL)}), as Redis 6 runs it. */
@ExtendWith(SharedRedis.class)
class RedisClusterEvalContractIT extends StoreContract {
    @Override
    protected Store newStore(ManualClock clock) {
        return RedisStore.builder().uri(RedisCluster.shared().uri()).cluster(true).clock(clock)
                .timeout(StoreContract.PATIENT_TIMEOUT).scripting(Scripting.EVAL).build();
    }
}
