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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store, timed and watched: every call is timed by operation ({@code slipstream_store_operation_seconds}), with
 * its outcome (ok, or the exception's simple name), and the runs it reads and writes are handed to {@link RunMetrics}
 * once their transaction has committed (a rolled-back write counts nothing). Each outermost transaction is timed too
 * ({@code slipstream_store_transaction_seconds}: how many commit, and how long each holds a connection, and on the
 * embedded store the one writer). A dynamic proxy, so that a method added to the SPI is timed without a change here.
 *
 * <p>A call made on this thread while one of its transactions is open joins that transaction (the {@link Store}
 * contract), whichever store it is made on: the transaction's own, this one (a {@code FencedStore} writes through
 * the store it wraps), or a nested {@code inTransaction}. So what is handed on is kept per thread, from the outermost
 * transaction's start to its commit. A run being written is marked as such from the call until it has been handed
 * on, so that a read of the committed write in between, on another thread, does not take it for another replica's.
 */
final class ObservedStore implements InvocationHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ObservedStore.class);
    private final Store target;
    private final Watch watch;

    /** What the proxies of one wrapped store share. */
    private static final class Watch {
        final MeterRegistry registry;
        final RunMetrics runs;
        final Map<String, Timer> ok = new ConcurrentHashMap<>();
        final Timer committed;
        /** The open transaction of each thread: what it read and wrote, handed on once it commits. */
        final ThreadLocal<Transaction> open = new ThreadLocal<>();

        Watch(MeterRegistry registry, RunMetrics runs) {
            this.registry = registry;
            this.runs = runs;
            this.committed = transactionTimer(registry, "ok");
        }
    }

    /** What a transaction read and wrote ({@code seen}), and the runs it writes, until it has handed them on. */
    private record Transaction(long generation, List<Runnable> seen, List<io.slipstream.api.run.RunId> writing) {
    }

    private ObservedStore(Store target, Watch watch) {
        this.target = target;
        this.watch = watch;
    }

    static Store wrap(Store target, MeterRegistry registry, RunMetrics runs) {
        return proxy(new ObservedStore(target, new Watch(registry, runs)));
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
        Object[] call = args;
        Transaction joined = watch.open.get();
        Transaction began = null;
        if (method.getName().equals("inTransaction") && args != null && args.length == 1 && args[0] instanceof Function<?, ?> work) {
            Function<Store, Object> inner = (Function<Store, Object>) work;
            call = new Object[] {(Function<Store, Object>) tx -> inner.apply(proxy(new ObservedStore(tx, watch)))};
            if (joined == null) {
                began = new Transaction(watch.runs.generation(), new ArrayList<>(), new ArrayList<>());
                watch.open.set(began);
            }
        }
        long since = joined != null ? joined.generation() : watch.runs.generation();
        io.slipstream.api.run.RunId writes = writes(method.getName(), args);
        if (writes != null) {
            // Before the call: once it commits, anyone may read the write before it is handed on below.
            watch.runs.writing(writes);
            if (joined != null) {
                joined.writing().add(writes);
            }
        }
        long start = System.nanoTime();
        String outcome = "ok";
        try {
            Object result;
            try {
                result = method.invoke(target, call);
            } finally {
                if (began != null) {
                    watch.open.remove();
                }
            }
            Runnable seen = seen(method.getName(), result, since);
            if (joined != null) {
                if (seen != null) {
                    joined.seen().add(seen);
                }
            } else {
                // Committed (or outside any transaction): the metrics must never fail a call whose work is done.
                try {
                    if (began != null) {
                        began.seen().forEach(Runnable::run);
                    }
                    if (seen != null) {
                        seen.run();
                    }
                } catch (RuntimeException e) {
                    LOG.warn("metrics: a run written could not be counted", e);
                }
            }
            return result;
        } catch (InvocationTargetException e) {
            outcome = e.getCause().getClass().getSimpleName();
            throw e.getCause();
        } finally {
            if (writes != null && joined == null) {
                watch.runs.doneWriting(writes);
            }
            if (began != null) {
                began.writing().forEach(watch.runs::doneWriting);
            }
            long nanos = System.nanoTime() - start;
            String operation = method.getName();
            Timer timer = outcome.equals("ok") ? watch.ok.computeIfAbsent(operation, op -> timer(op, "ok")) : timer(operation, outcome);
            timer.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
            if (began != null) {
                (outcome.equals("ok") ? watch.committed : transactionTimer(watch.registry, outcome)).record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
            }
        }
    }

    /** The run a call writes, if it writes one. */
    private static io.slipstream.api.run.RunId writes(String operation, Object[] args) {
        boolean write = operation.equals("updateRun") || operation.equals("createRun");
        return write && args != null && args.length > 0 && args[0] instanceof RunRecord run ? run.id() : null;
    }

    /** What the metrics learn from a call's result ({@code null}: nothing); {@code since}: when its read began. */
    @SuppressWarnings("unchecked")
    private Runnable seen(String operation, Object result, long since) {
        if ((operation.equals("updateRun") || operation.equals("createRun")) && result instanceof RunRecord run) {
            return () -> watch.runs.written(run);
        } else if (operation.equals("activeRuns") && result instanceof List<?> list) {
            List<RunRecord> active = (List<RunRecord>) list;
            return () -> watch.runs.readActive(active, since);
        } else if (operation.equals("getRun") && result instanceof Optional<?> run && run.isPresent()) {
            return () -> watch.runs.read((RunRecord) run.get());
        }
        return null;
    }

    /**
     * The timer of outermost transactions with an outcome; a single call outside a transaction (a submission's
     * {@code createRun}) commits on its own and is counted by its operation alone.
     */
    private static Timer transactionTimer(MeterRegistry registry, String outcome) {
        return Timer.builder("slipstream.store.transaction").description("Outermost store transactions, by outcome (ok: committed)")
                .tag("outcome", outcome).register(registry);
    }

    private Timer timer(String operation, String outcome) {
        return Timer.builder("slipstream.store.operation").description("Store calls, by operation and outcome")
                .tag("operation", operation).tag("outcome", outcome).register(watch.registry);
    }
}
