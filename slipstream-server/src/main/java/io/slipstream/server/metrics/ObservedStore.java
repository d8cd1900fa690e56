package io.slipstream.server.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.slipstream.api.run.RunId;
import io.slipstream.model.RunRecord;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.store.InterceptedStore;
import io.slipstream.store.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store, timed and watched: every call is timed by operation ({@code slipstream_store_operation_seconds}: a read
 * by its facet and name, {@code runs.active}; a transaction as {@code write} or {@code read}, and each call made in it,
 * a write by its name, {@code updateRun}), with its outcome (ok, or the exception's simple name). Each write
 * transaction is timed once more as a whole, where it is opened ({@code slipstream_store_transaction_seconds}: how many
 * commit, and how long each holds a connection, and on the embedded store the one writer).
 *
 * <p>The runs a transaction reads and writes are handed to {@link RunMetrics} once it has committed (a rolled-back
 * write counts nothing), those read outside one at once; so are the measured usage of the instances whose end it
 * records, to {@link InstanceMetrics}. A run being written is marked as such from the call until it
 * has been handed on, so that a read of the committed write in between, on another thread, does not take it for
 * another replica's.
 */
final class ObservedStore implements InterceptedStore.Interceptor {
    private static final Logger LOG = LoggerFactory.getLogger(ObservedStore.class);

    private final Meters meters;
    private final RunMetrics runs;
    private final InstanceMetrics instances;

    private ObservedStore(Meters meters, RunMetrics runs, InstanceMetrics instances) {
        this.meters = meters;
        this.runs = runs;
        this.instances = instances;
    }

    static Store wrap(Store target, MeterRegistry registry, RunMetrics runs) {
        return new InterceptedStore(target, new ObservedStore(new Meters(registry), runs, new InstanceMetrics(registry)));
    }

    /** A call outside any transaction: what it reads of runs is handed on at once. */
    @Override
    public Object call(String operation, Object[] args, Callable<Object> proceed) throws Exception {
        long since = runs.generation();
        Object result = meters.timed(operation, proceed);
        Runnable seen = seen(runs, operation, result, since);
        if (seen != null) {
            handOn(List.of(seen));
        }
        return result;
    }

    @Override
    public InterceptedStore.Interceptor transaction() {
        return new Transaction(meters, runs, instances);
    }

    /** One transaction: its calls timed, what they read and write of runs kept until it has committed. */
    private static final class Transaction implements InterceptedStore.Interceptor {
        private final Meters meters;
        private final RunMetrics runs;
        private final InstanceMetrics instances;
        private final long generation;
        private final List<Runnable> seen = new ArrayList<>();
        private final List<RunId> writing = new ArrayList<>();

        Transaction(Meters meters, RunMetrics runs, InstanceMetrics instances) {
            this.meters = meters;
            this.runs = runs;
            this.instances = instances;
            this.generation = runs.generation();
        }

        @Override
        public Object call(String operation, Object[] args, Callable<Object> proceed) throws Exception {
            if (operation.equals("write") || operation.equals("read")) {
                return open(operation, proceed);
            }
            RunId writes = (operation.equals("updateRun") || operation.equals("createRun")) && args.length > 0 && args[0] instanceof RunRecord run
                    ? run.id() : null;
            if (writes != null) {
                // Before the call: once it commits, anyone may read the write before it is handed on.
                runs.writing(writes);
                writing.add(writes);
            }
            Object result = meters.timed(operation, proceed);
            Runnable learnt = seen(runs, operation, result, generation);
            if (learnt != null) {
                seen.add(learnt);
            }
            if (operation.equals("recordUsage") && args.length > 0 && args[0] instanceof List<?> changes) {
                changes.stream().filter(UsageChange.Measured.class::isInstance).map(UsageChange.Measured.class::cast)
                        .forEach(measured -> seen.add(() -> instances.ended(measured)));
            }
            return result;
        }

        /** The transaction itself: timed (a write also as a transaction), and what it saw handed on once it has committed. */
        private Object open(String operation, Callable<Object> proceed) throws Exception {
            long start = System.nanoTime();
            String outcome = "ok";
            try {
                Object result = proceed.call();
                handOn(seen);
                return result;
            } catch (Exception | Error e) {
                outcome = e.getClass().getSimpleName();
                throw e;
            } finally {
                writing.forEach(runs::doneWriting);
                long nanos = System.nanoTime() - start;
                meters.record(operation, outcome, nanos);
                if (operation.equals("write")) {
                    meters.transaction(outcome).record(nanos, TimeUnit.NANOSECONDS);
                }
            }
        }
    }

    /** What the metrics learn from a call's result ({@code null}: nothing); {@code since}: when its read began. */
    @SuppressWarnings("unchecked")
    private static Runnable seen(RunMetrics runs, String operation, Object result, long since) {
        if ((operation.equals("updateRun") || operation.equals("createRun")) && result instanceof RunRecord run) {
            return () -> runs.written(run);
        } else if (operation.equals("runs.active") && result instanceof List<?> list) {
            List<RunRecord> active = (List<RunRecord>) list;
            return () -> runs.readActive(active, since);
        } else if (operation.equals("runs.get") && result instanceof Optional<?> run && run.isPresent()) {
            return () -> runs.read((RunRecord) run.get());
        }
        return null;
    }

    /** Committed (or read outside any transaction): the metrics must never fail a call whose work is done. */
    private static void handOn(List<Runnable> seen) {
        try {
            seen.forEach(Runnable::run);
        } catch (RuntimeException e) {
            LOG.warn("metrics: a run written could not be counted", e);
        }
    }

    /** The timers, by operation and outcome. */
    private static final class Meters {
        private final MeterRegistry registry;
        private final Map<String, Timer> ok = new ConcurrentHashMap<>();
        private final Timer committed;

        Meters(MeterRegistry registry) {
            this.registry = registry;
            this.committed = transactionTimer("ok");
        }

        Object timed(String operation, Callable<Object> call) throws Exception {
            long start = System.nanoTime();
            String outcome = "ok";
            try {
                return call.call();
            } catch (Exception | Error e) {
                outcome = e.getClass().getSimpleName();
                throw e;
            } finally {
                record(operation, outcome, System.nanoTime() - start);
            }
        }

        void record(String operation, String outcome, long nanos) {
            Timer timer = outcome.equals("ok") ? ok.computeIfAbsent(operation, op -> timer(op, "ok")) : timer(operation, outcome);
            timer.record(nanos, TimeUnit.NANOSECONDS);
        }

        /** The timer of write transactions with an outcome. */
        Timer transaction(String outcome) {
            return outcome.equals("ok") ? committed : transactionTimer(outcome);
        }

        private Timer transactionTimer(String outcome) {
            return Timer.builder("slipstream.store.transaction").description("Write transactions, by outcome (ok: committed)")
                    .tag("outcome", outcome).register(registry);
        }

        private Timer timer(String operation, String outcome) {
            return Timer.builder("slipstream.store.operation").description("Store calls, by operation and outcome")
                    .tag("operation", operation).tag("outcome", outcome).register(registry);
        }
    }
}
