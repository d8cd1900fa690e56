package io.slipstream.server.config;

import io.slipstream.executor.ExecutorFactory;
import io.slipstream.store.StoreFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;

/**
 * The executors and stores of this build, by name: the {@link ExecutorFactory} and {@link StoreFactory}
 * implementations {@link ServiceLoader} finds on the class path. The server knows none of them by class.
 */
public final class Plugins {
    /** The config file's fields that are the server's; no executor may claim them. */
    static final Set<String> SERVER_FIELDS = Set.of("server", "store", "executor", "runs", "secrets", "tokens",
            "instances.gracePeriod", "instances.maxGracePeriod");

    private static volatile Plugins installed;

    private final Map<String, ExecutorFactory> executors;
    private final Map<String, StoreFactory> stores;

    /**
     * @throws IllegalStateException when two have one name, or an executor claims a field it may not have
     */
    public Plugins(List<? extends ExecutorFactory> executors, List<? extends StoreFactory> stores) {
        this.executors = new TreeMap<>();
        for (ExecutorFactory factory : executors) {
            if (this.executors.put(factory.name(), factory) != null) {
                throw new IllegalStateException("two executors are named " + factory.name() + " on the class path");
            }
            for (String field : factory.configFields()) {
                String[] parts = field.split("\\.", -1);
                if (parts.length > 2 || parts.length == 2 && !parts[0].equals("instances") || field.equals("instances")
                        || SERVER_FIELDS.contains(field) || List.of(parts).contains("")) {
                    throw new IllegalStateException("executor " + factory.name() + " claims the config field " + field
                            + ": an executor has top-level fields and fields of instances:, none of the server's");
                }
            }
        }
        this.stores = new TreeMap<>();
        for (StoreFactory factory : stores) {
            if (this.stores.put(factory.name(), factory) != null) {
                throw new IllegalStateException("two stores are named " + factory.name() + " on the class path");
            }
        }
    }

    /** What the class path holds (found once). */
    public static Plugins installed() {
        Plugins plugins = installed;
        if (plugins == null) {
            List<ExecutorFactory> executors = new ArrayList<>();
            ServiceLoader.load(ExecutorFactory.class).forEach(executors::add);
            List<StoreFactory> stores = new ArrayList<>();
            ServiceLoader.load(StoreFactory.class).forEach(stores::add);
            plugins = new Plugins(executors, stores);
            installed = plugins;
        }
        return plugins;
    }

    /** The executor of this name, or {@code null}. */
    public ExecutorFactory executor(String name) {
        return executors.get(name);
    }

    /** The store of this name, or {@code null}. */
    public StoreFactory store(String name) {
        return stores.get(name);
    }

    public List<ExecutorFactory> executors() {
        return List.copyOf(executors.values());
    }

    /** The names of the executors, sorted, e.g. {@code "kubernetes, local"}. */
    public String executorNames() {
        return executors.isEmpty() ? "none" : String.join(", ", executors.keySet());
    }

    public String storeNames() {
        return stores.isEmpty() ? "none" : String.join(", ", stores.keySet());
    }

    /** The executor of these settings' name. @throws IllegalStateException if this build has none of that name */
    public ExecutorFactory executorOf(String name) {
        ExecutorFactory factory = executor(name);
        if (factory == null) {
            throw new IllegalStateException("executor '" + name + "' is not in this build (available: " + executorNames() + ")");
        }
        return factory;
    }

    public StoreFactory storeOf(String name) {
        StoreFactory factory = store(name);
        if (factory == null) {
            throw new IllegalStateException("store '" + name + "' is not in this build (available: " + storeNames() + ")");
        }
        return factory;
    }
}
