package io.slipstream.server.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The store, timed and watched: every call is timed by operation ({@code slipstream_store_operation_seconds}), with
 * its outcome (ok, or the exception's simple name), and the runs it writes are handed to {@link RunMetrics} once
 * their transaction has committed (a rolled-back write counts nothing). A dynamic proxy, so that a method added to
 * the SPI is timed without a change here.
 */
final class ObservedStore implements InvocationHandler {
    private final Store target;
    private final MeterRegistry registry;
    private final RunMetrics runs;
    /** Writes of the transaction this proxy stands for ({@code null}: outside one, handed on at once). */
    private final List<RunRecord> pending;
    private final Map<String, Timer> ok = new ConcurrentHashMap<>();

    private ObservedStore(Store target, MeterRegistry registry, RunMetrics runs, List<RunRecord> pending) {
        this.target = target;
        this.registry = registry;
        this.runs = runs;
        this.pending = pending;
    }

    static Store wrap(Store target, MeterRegistry registry, RunMetrics runs) {
        return proxy(new ObservedStore(target, registry, runs, null));
    }

    private static Store proxy(ObservedStore handler) {
        return (Store) Proxy.newProxyInstance(Store.class.getClassLoader(), new Class<?>[] {Store.class}, handler);
    }

    @Override
    @SuppressWarnings("unchecked")
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        if (method.getDeclaringClass() == Object.class) {
            return switch (method.getName()) {
                case "equals" -> proxy == args[0];
                case "hashCode" -> System.identityHashCode(proxy);
                default -> "observed " + target;
            };
        }
        List<RunRecord> written = new ArrayList<>();
        Object[] call = args;
        if (method.getName().equals("inTransaction") && args != null && args.length == 1 && args[0] instanceof Function<?, ?> work) {
            Function<Store, Object> inner = (Function<Store, Object>) work;
            call = new Object[] {(Function<Store, Object>) tx -> inner.apply(proxy(new ObservedStore(tx, registry, runs, written)))};
        }
        long start = System.nanoTime();
        String outcome = "ok";
        try {
            Object result = method.invoke(target, call);
            observe(method.getName(), result, written);
            if (pending != null) {
                pending.addAll(written);
            } else {
                written.forEach(runs::written);
            }
            return result;
        } catch (InvocationTargetException e) {
            outcome = e.getCause().getClass().getSimpleName();
            throw e.getCause();
        } finally {
            long nanos = System.nanoTime() - start;
            String operation = method.getName();
            Timer timer = outcome.equals("ok") ? ok.computeIfAbsent(operation, op -> timer(op, "ok")) : timer(operation, outcome);
            timer.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        }
    }

    private void observe(String operation, Object result, List<RunRecord> written) {
        if ((operation.equals("updateRun") || operation.equals("createRun")) && result instanceof RunRecord run) {
            written.add(run);
        } else if (operation.equals("activeRuns") && result instanceof List<?> list) {
            list.forEach(run -> runs.read((RunRecord) run));
        } else if (operation.equals("getRun") && result instanceof Optional<?> run && run.isPresent()) {
            runs.read((RunRecord) run.get());
        }
    }

    private Timer timer(String operation, String outcome) {
        return Timer.builder("slipstream.store.operation").description("Store calls, by operation and outcome")
                .tag("operation", operation).tag("outcome", outcome).register(registry);
    }
}
