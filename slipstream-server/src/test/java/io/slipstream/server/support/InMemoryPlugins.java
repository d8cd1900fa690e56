package io.slipstream.server.support;

import io.slipstream.api.spec.FieldReader;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorContext;
import io.slipstream.executor.ExecutorFactory;
import io.slipstream.executor.ExecutorSettings;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.server.config.Plugins;
import io.slipstream.store.Store;
import io.slipstream.store.StoreContext;
import io.slipstream.store.StoreFactory;
import io.slipstream.store.StoreSettings;
import io.slipstream.store.memory.InMemoryStore;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The plug-ins of {@link TestServer#startInMemory}: the in-memory store (held to the store contract) and the lifelike
 * fake executor (held to the executor contract) over four nodes of 8 GPUs, as the default config's. Given to the server
 * by name, as any plug-in is; they are on no class path's service list, so no real server can be configured with them.
 */
final class InMemoryPlugins {
    static final String STORE = "memory";
    static final String EXECUTOR = "fake";

    /**
     * The plug-ins of one server; its fake executor, once made, goes to {@code made}, for the test to drive. The stores
     * of the class path are there too: a server on the fake executor may keep its records in the embedded H2 store.
     */
    static Plugins plugins(AtomicReference<FakeExecutor> made) {
        List<StoreFactory> stores = new ArrayList<>(List.of(new MemoryStoreFactory()));
        ServiceLoader.load(StoreFactory.class).forEach(stores::add);
        return new Plugins(List.of(new FakeExecutorFactory(made)), stores);
    }

    private InMemoryPlugins() {
    }

    record MemorySettings() implements StoreSettings {
        @Override
        public String store() {
            return STORE;
        }
    }

    record FakeSettings() implements ExecutorSettings {
        @Override
        public String executor() {
            return EXECUTOR;
        }
    }

    private static final class MemoryStoreFactory implements StoreFactory {
        @Override
        public String name() {
            return STORE;
        }

        @Override
        public StoreSettings read(FieldReader store) {
            return new MemorySettings();
        }

        @Override
        public Store create(StoreSettings settings, StoreContext context) {
            return new InMemoryStore();
        }
    }

    private static final class FakeExecutorFactory implements ExecutorFactory {
        private final AtomicReference<FakeExecutor> made;

        FakeExecutorFactory(AtomicReference<FakeExecutor> made) {
            this.made = made;
        }

        @Override
        public String name() {
            return EXECUTOR;
        }

        @Override
        public Set<String> configFields() {
            return Set.of();
        }

        @Override
        public ExecutorSettings read(FieldReader config) {
            return new FakeSettings();
        }

        @Override
        public Executor create(ExecutorSettings settings, ExecutorContext context) {
            FakeExecutor executor = new FakeExecutor(new FakeExecutor.Cluster(4, 8), context.clock(), FakeExecutor.Mode.LIFELIKE);
            made.set(executor);
            return executor;
        }
    }
}
