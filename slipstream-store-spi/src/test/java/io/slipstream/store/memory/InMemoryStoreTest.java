package io.slipstream.store.memory;

import io.slipstream.store.BaseStoreContractTest;
import io.slipstream.store.Store;

/** The in-memory store is held to the same contract as the JDBC ones. */
class InMemoryStoreTest extends BaseStoreContractTest {
    @Override
    protected Store createStore() {
        return new InMemoryStore(java.time.Duration.ofSeconds(2)); // the two tests that wait out the lock wait 2 s, not 10
    }
}
