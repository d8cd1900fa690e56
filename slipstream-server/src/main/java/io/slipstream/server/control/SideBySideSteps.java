package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.model.lifecycle.Observation;
import io.slipstream.store.ConflictException;
import io.slipstream.store.UnreadableRecordException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Takes runs through their steps: those just admitted side by side, each run's steps in order on one thread (a launch
 * mostly waits for processes to start, and one run's must not hold up another's); the others in order on the caller's
 * thread ({@link #inOrder}), since two of them may write the same record (the usage roll-up of one team's hour, the
 * owner that two victims made room for), which side by side would conflict and cost a cycle's scheduling. With one
 * thread every run is stepped in order on the caller's thread, as a seeded test needs.
 *
 * <p>One run's step that fails (its executor refusing, a bug, one run's bad data) never keeps the others from theirs:
 * it is logged, and what it wrote is stored whole (each step is a transaction), so the next cycle takes it on. A
 * failure that is the whole loop's ({@link #concernsAll}: the store down, this server fenced) stops the stepping at
 * once (no run is started after it) and is rethrown once the steps under way have ended.
 */
final class SideBySideSteps implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SideBySideSteps.class);

    private final RunStepper stepper;
    private final int parallel;
    private final ExecutorService threads;

    SideBySideSteps(RunStepper stepper, int parallel) {
        this.stepper = stepper;
        this.parallel = parallel;
        this.threads = parallel == 1 ? null : Executors.newFixedThreadPool(parallel, runnable -> {
            Thread thread = new Thread(runnable, "slipstream-steps");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** A run and its instances, as the cycle read them. */
    record Run(RunRecord run, List<InstanceRecord> instances) {
    }

    /**
     * Whether any run has more to do this cycle left for the next (launches past the budget); the runs that changed
     * meanwhile; the runs whose records may have changed (they did more than stay, or their steps failed): the others
     * are as they were read; of those, the runs their steps ended.
     */
    record Outcome(boolean deferred, Set<RunId> conflicted, Set<RunId> moved, Set<RunId> ended) {
    }

    /** Steps every run of {@code runs} side by side and returns once all have ended their steps of this cycle. */
    Outcome sideBySide(List<Run> runs, Observation seen) {
        return step(runs, seen, threads != null && runs.size() > 1);
    }

    /** Steps every run of {@code runs} in order, on the caller's thread. */
    Outcome inOrder(List<Run> runs, Observation seen) {
        return step(runs, seen, false);
    }

    private Outcome step(List<Run> runs, Observation seen, boolean together) {
        if (runs.isEmpty()) {
            return new Outcome(false, Set.of(), Set.of(), Set.of());
        }
        Results results = new Results();
        if (!together) {
            for (int i = 0; i < runs.size() && results.concernsAll.get() == null; i++) {
                results.step(runs.get(i), seen);
            }
        } else {
            AtomicInteger next = new AtomicInteger();
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < Math.min(parallel, runs.size()); w++) {
                workers.add(threads.submit(() -> {
                    // as on the loop's thread: its runs' steps not waited for one by one, before it ends or acts (Store#deferDurability)
                    try (var deferred = stepper.store().deferDurability()) {
                        for (int i = next.getAndIncrement(); i < runs.size() && results.concernsAll.get() == null; i = next.getAndIncrement()) {
                            results.step(runs.get(i), seen);
                        }
                    }
                }));
            }
            Throwable failed = null;
            for (Future<?> worker : workers) { // every worker ended before anything is rethrown: no run is stepped twice at once
                try {
                    Futures.await(worker);
                } catch (RuntimeException | Error e) {
                    failed = failed == null ? e : failed;
                }
            }
            if (failed instanceof Error error) {
                throw error;
            }
            if (failed != null) {
                throw (RuntimeException) failed;
            }
        }
        if (results.concernsAll.get() != null) {
            throw results.concernsAll.get();
        }
        return new Outcome(results.deferred, results.conflicted, results.moved, results.ended);
    }

    /** What the runs' steps came to, gathered from every worker. */
    private final class Results {
        private boolean deferred;
        private final Set<RunId> conflicted = new LinkedHashSet<>();
        private final Set<RunId> moved = new LinkedHashSet<>();
        private final Set<RunId> ended = new LinkedHashSet<>();
        private final AtomicReference<RuntimeException> concernsAll = new AtomicReference<>();

        void step(Run one, Observation seen) {
            RunId id = one.run().id();
            boolean stayed = false;
            try (var ignored = MDC.putCloseable("run", id.value())) {
                RunSteps steps = stepper.of(one.run(), one.instances());
                boolean over = steps.take(stepper.lifecycle(), seen).state().isFinal();
                stayed = !steps.moved();
                if (over) {
                    synchronized (this) {
                        ended.add(id);
                    }
                }
                if (steps.deferred()) {
                    synchronized (this) {
                        deferred = true;
                    }
                }
            } catch (ConflictException e) {
                LOG.debug("run {} changed during the cycle; next cycle picks it up", id);
                synchronized (this) {
                    conflicted.add(id);
                }
            } catch (UnreadableRecordException e) {
                // A run it depends on (the owner it makes room for) cannot be read; the store logged why. The others go on.
                LOG.debug("run {} skipped this cycle: {}", id, e.getMessage());
            } catch (RuntimeException e) {
                if (concernsAll(e)) {
                    concernsAll.compareAndSet(null, e);
                } else if (e instanceof io.slipstream.executor.ExecutorException) {
                    LOG.warn("run {}: its next step failed this cycle: {}", id, e.getMessage());
                } else {
                    LOG.error("run {}: its next step failed this cycle", id, e);
                }
            } finally {
                if (!stayed) {
                    synchronized (this) {
                        moved.add(id);
                    }
                }
            }
        }
    }

    /** Whether a failure is the whole loop's (the store, this server's leadership), not one run's. */
    static boolean concernsAll(RuntimeException e) {
        return e instanceof io.slipstream.store.StoreUnavailableException || e instanceof io.slipstream.store.StoreDamagedException
                || e instanceof io.slipstream.store.FencedException || e instanceof io.slipstream.executor.EpochSupersededException;
    }

    /** Steps under way end by themselves (the cycle waits for them). */
    @Override
    public void close() {
        if (threads != null) {
            threads.shutdown();
        }
    }
}
