package io.sluice.testkit;

import io.sluice.Store;

/** Estimated charges and their settlements against the in-memory store. */
class MemorySettleContractTest extends SettleContract {
    @Override
    protected Store newStore(ManualClock clock) {
        return Store.memory().clock(clock).build();
    }
}
