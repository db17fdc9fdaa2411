package io.sluice.testkit;

import io.sluice.Store;

/** Per-key tiers against the in-memory store. */
class MemoryTierContractTest extends TierContract {
    @Override
    protected Store newStore(ManualClock clock) {
        return Store.memory().clock(clock).build();
    }
}
