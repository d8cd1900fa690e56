package io.slipstream.store.jdbc;

import io.slipstream.store.BaseStoreContractTest;
import io.slipstream.store.Store;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

class H2StoreTest extends BaseStoreContractTest {
    @TempDir
    Path dataDir;

    @Override
    protected Store createStore() {
        return JdbcStore.openH2(dataDir);
    }
}
