package io.sluice.testkit;

import io.sluice.Store;

/** The contract suite against the in-memory store. */
class MemoryStoreContractTest extends StoreContract {
    @Override
    protected Store newStore(ManualClock clock) {
        return Store.memory().clock(clock).build();
    }
}
