package io.sluice.redis.modes;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.redis.RedisStore;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.StoreContract;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
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
     * A decision spent from a lease reports as remaining what the node's lease still holds, not what Redis has
     * left for the fleet (docs/leased-mode.md): a cold key leases just the permits the request needs, so it reports
     * fewer than an exact decision would. What the lease holds was charged in Redis within the limit, so it is
     * never more than the exact count: the node never holds permits past the limit. A decision Redis made
     * (a rule leased mode refuses) reports the exact count.
     */
    @Override
    public void assertAdmittedWithRemaining(Decision decision, long exactRemaining) {
        assertThat(decision.allowed()).isTrue();
        if (decision.source() == Decision.Source.LEASE) {
            assertThat(decision.remaining()).isBetween(0L, exactRemaining);
        } else {
            super.assertAdmittedWithRemaining(decision, exactRemaining);
        }
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
