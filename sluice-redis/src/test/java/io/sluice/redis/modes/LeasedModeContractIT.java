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
import java.util.Map;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The store contract with every rule in leased mode where the rule can be leased, against one redis-server on the
 * contract's manual clock. A rule leased mode refuses (an algorithm outside {@link Mode#LEASABLE}) runs exactly,
 * as the store would run it in exact mode.
 */
@ExtendWith(SharedRedis.class)
class LeasedModeContractIT extends StoreContract {
    @Override
    protected Store newStore(ManualClock clock) {
        return RedisStore.builder().uri(RedisServer.shared().uri()).clock(clock)
                .timeout(StoreContract.PATIENT_TIMEOUT).build();
    }

    /**
     * A leased decision reports as remaining what the node's lease still holds, not what Redis has left for the
     * fleet (docs/leased-mode.md): a cold key leases just the permits the request needs, so it reports 0 where an
     * exact decision reports the limit's remaining count. Admissions and rejections are the contract's.
     */
    @Override
    protected Map<String, String> casesNotApplicable() {
        String why = "leased mode reports remaining as what the node's lease holds (0 on a cold key), not Redis's count";
        return Map.of("fixedWindowAdmitsLimitPerEpochAlignedWindow", why, "gcraReportsRedisRateValues", why);
    }

    @Override
    protected Rule rule(String name, Limit... limits) {
        Rule rule = Rule.of(name, limits);
        for (Limit l : limits) {
            if (!Mode.LEASABLE.contains(l.algorithm())) {
                return rule;
            }
        }
        return rule.withMode(Mode.leased());
    }
}
