package io.slipstream.server.control;

import io.slipstream.model.usage.UsageChanges;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.run.WaitReason;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.wire.RunView;
import io.slipstream.executor.Executor;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.lifecycle.LifecycleLimits;
import io.slipstream.model.lifecycle.Observation;
import io.slipstream.model.lifecycle.RunLifecycle;
import io.slipstream.scheduler.ClusterSnapshot;
import io.slipstream.scheduler.CycleResult;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.Scheduler;
import io.slipstream.server.auth.RunTokens;
import io.slipstream.server.config.RunLimits;
import io.slipstream.store.ConflictException;
import io.slipstream.store.UnreadableRecordException;
import io.slipstream.store.NodeDown;
import io.slipstream.store.FencedException;
import io.slipstream.store.Store;
import io.slipstream.store.StoreUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane's single writer of run and instance state. Each cycle reads, decides, persists, then acts: it
 * records what executors reported, takes every active run through the steps its {@link RunLifecycle} decides (see
 * {@link RunSteps}), and applies what the scheduler decides over a snapshot built from the store. Decisions are
 * persisted before any executor is told to act, and every executor call is keyed by instance id, so repeating a
 * cycle after a crash is harmless.
 *
 * <p>Runs on one thread; {@link #wakeUp()} may be called from any thread.
 */
public final class ControlLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlLoop.class);
    private static final Duration RETENTION_INTERVAL = Duration.ofMinutes(1);
    /** How long timeouts wait for adopted instances to report (an executor reports them within moments). */
    private static final Duration ADOPTION_WAIT = Duration.ofMinutes(1);

    private final Store store;
    private final Executor executor;
    private final Scheduler scheduler;
    private final Clock clock;
    private final RunLifecycle lifecycle;
    private final Duration tick;
    private final Schedules schedules;
    private final Launcher launcher;
    private final Admissions admissions;
    private final Lending lending;
    private final Retention retention;
    private final FaultWatch faultWatch;
    private final ProgressReports progressReports;
    private final QueueStatus queueStatus;
    private final Semaphore wakeUps = new Semaphore(0);
    /** How many admitted runs launch at once (each waits mostly for its processes to start, not for a core). */
    static final int PARALLEL_LAUNCHES = 8;
    private final java.util.concurrent.ExecutorService launchers = java.util.concurrent.Executors.newFixedThreadPool(PARALLEL_LAUNCHES, runnable -> {
        Thread thread = new Thread(runnable, "slipstream-launch");
        thread.setDaemon(true);
        return thread;
    });
    private final ReportIntake reports;
    /** Nodes declared down, as read at the start of the cycle. */
    private Map<String, NodeDown> downNodes = Map.of();
    /**
     * Runs whose decision (admission, preemption, promotion) met a conflict in the last cycle. A conflict is decided
     * again at once; a second one in a row is logged and waits for the tick, so that a conflict that keeps coming back
     * (a bug, or a store that refuses the write) cannot spin the loop and says what it is.
     */
    private Set<RunId> conflictedLastCycle = Set.of();
    private Instant nextSchedulesCheck = Instant.MIN;
    private Instant nextRetentionSweep = Instant.MIN;
    private volatile boolean running;
    private Thread thread;
    /** When the loop last completed a cycle ({@code null}: not yet); readiness reads it from other threads. */
    private volatile Instant lastCycleAt;
    private volatile java.util.function.Consumer<Duration> cycleTimes = took -> {
    };
    /** When the store became unreachable to the loop ({@code null}: it is reachable); for one log line per outage. */
    private Instant outageSince;

    public ControlLoop(Store store, Executor executor, Scheduler scheduler, Clock clock, RunLimits limits, Duration tick) {
        this(store, executor, scheduler, clock, limits, tick, null);
    }

    /** @param runTokens gives each run's instances their run's token, or {@code null} for none */
    public ControlLoop(Store store, Executor executor, Scheduler scheduler, Clock clock, RunLimits limits, Duration tick, RunTokens runTokens) {
        this(store, executor, scheduler, clock, limits, tick, runTokens, null);
    }

    /**
     * @param runTokens gives each run's instances their run's token, or {@code null} for none
     * @param secrets   the values of the Secrets node groups refer to, read at launch, or {@code null} for none
     */
    public ControlLoop(Store store, Executor executor, Scheduler scheduler, Clock clock, RunLimits limits, Duration tick,
                       RunTokens runTokens, LaunchSecrets secrets) {
        this(store, executor, scheduler, clock, limits, tick, runTokens, secrets, new ProgressReports(), new QueueStatus());
    }

    /**
     * @param progressReports where instances' progress reported through the API is kept: it outlives one loop (a
     *                        replica's loop runs only while it leads)
     * @param queueStatus     why each queued run waits, as the last cycle saw it
     */
    public ControlLoop(Store store, Executor executor, Scheduler scheduler, Clock clock, RunLimits limits, Duration tick,
                       RunTokens runTokens, LaunchSecrets secrets, ProgressReports progressReports, QueueStatus queueStatus) {
        this.progressReports = progressReports;
        this.queueStatus = queueStatus;
        this.store = store;
        this.executor = executor;
        this.scheduler = scheduler;
        this.clock = clock;
        this.lifecycle = new RunLifecycle(new LifecycleLimits(limits.gracePeriod(), limits.maxRuntime()));
        this.tick = tick;
        this.schedules = new Schedules(store, clock, new RunFactory(clock, limits, executor.restartsInPlace()));
        this.launcher = new Launcher(store, executor, clock, runTokens, secrets);
        this.admissions = new Admissions(store, executor, clock, runTokens);
        this.lending = new Lending(store);
        this.retention = new Retention(store, executor, clock, limits.retention());
        this.faultWatch = new FaultWatch(executor, progressReports);
        this.reports = new ReportIntake(store, clock, this::wakeUp);
        executor.setListener(reports::offer);
    }

    /** Whether its thread has ended (or never started): after {@link #close}, a thread stuck in a call may not have. */
    public boolean stopped() {
        Thread current = thread;
        return current == null || !current.isAlive();
    }

    /** Whether the loop cycles (it stops by itself when it finds that its replica no longer leads). */
    public boolean running() {
        return running;
    }

    /** When the loop last completed a cycle, or {@code null} if it has not yet. */
    /** Tells {@code listener} how long each completed cycle took (the metrics' cycle histogram). */
    public ControlLoop observeCycles(java.util.function.Consumer<Duration> listener) {
        this.cycleTimes = listener;
        return this;
    }

    public Instant lastCycleAt() {
        return lastCycleAt;
    }

    /** Where instances' progress reported through the API goes. */
    public ProgressReports progressReports() {
        return progressReports;
    }

    public QueueStatus queueStatus() {
        return queueStatus;
    }

    /**
     * Starts cycling on a thread of its own, which first re-attaches to instances that ran before a restart: no cycle
     * runs before that is done, but the server need not wait for it (the API can serve meanwhile; what it asks of the
     * loop waits for the first cycle, as it would for any cycle).
     */
    public void start() {
        running = true;
        thread = new Thread(this::recoverThenLoop, "slipstream-control");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Asks the executor about every instance the store says is running (each answers Running, Exited or Lost), and
     * tells again those told to stop before: the previous process may have died before their grace period ended.
     */
    void recover() {
        Map<InstanceId, Map<String, String>> handles = new LinkedHashMap<>();
        List<InstanceRecord> stopping = new ArrayList<>();
        for (InstanceRecord instance : store.activeInstances()) {
            if (instance.state() == InstanceState.RUNNING) {
                handles.put(instance.id(), instance.handle());
                if (instance.stopRequestedAt() != null) {
                    stopping.add(instance);
                }
            }
        }
        if (handles.isEmpty()) {
            return;
        }
        LOG.info("adopting {} instance(s) that ran before this start", handles.size());
        // Until an adopted instance's report is in, its run's runtime is unknown: it is not timed out meanwhile.
        reports.awaitAdopted(handles.keySet(), clock.instant().plus(ADOPTION_WAIT));
        executor.adopt(handles);
        Map<String, NodeDown> down = store.downNodes();
        for (InstanceRecord instance : stopping) {
            try {
                RunRecord run = store.getRun(instance.id().runId()).orElseThrow();
                Duration grace = down.containsKey(instance.node()) ? Duration.ZERO : lifecycle.graceFor(run);
                executor.terminate(instance.id(), instance.handle(), grace, run.reason());
            } catch (RuntimeException e) {
                LOG.warn("could not tell {} to stop again after the restart; its run's next cycle will: {}", instance.id(), e.toString());
                resendLater(instance);
            }
        }
    }

    private void resendLater(InstanceRecord instance) {
        try {
            store.updateInstance(instance.stopToResend());
        } catch (RuntimeException e) {
            LOG.warn("could not record that {} is to be told to stop again: {}", instance.id(), e.toString());
        }
    }

    public void wakeUp() {
        if (wakeUps.availablePermits() == 0) {
            wakeUps.release();
        }
    }

    /** Recovery is retried until it is done (a store that is away for a moment): cycles never run without it. */
    private void recoverThenLoop() {
        while (running) {
            try {
                recover();
                wakeUp(); // the first cycle follows at once, not a tick later
                break;
            } catch (FencedException e) {
                LOG.warn("this replica no longer leads; its control loop stops before adopting: {}", e.getMessage());
                running = false;
                return;
            } catch (StoreUnavailableException e) {
                LOG.warn("the instances of a previous start are adopted once the store can be reached: {}", e.getMessage());
                pause();
            } catch (RuntimeException e) {
                LOG.error("could not adopt the instances that ran before this start; retrying", e);
                pause();
            }
        }
        loop();
    }

    private void loop() {
        while (running) {
            try {
                wakeUps.tryAcquire(tick.toMillis(), TimeUnit.MILLISECONDS);
                wakeUps.drainPermits();
                if (running) {
                    long start = System.nanoTime();
                    cycle();
                    lastCycleAt = clock.instant();
                    cycleTimes.accept(Duration.ofNanos(System.nanoTime() - start));
                }
                if (outageSince != null) {
                    LOG.info("the store is reachable again after {} s; the control loop resumes",
                            Duration.between(outageSince, clock.instant()).toSeconds());
                    outageSince = null;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (FencedException e) {
                // Another replica leads now: stop before anything else is decided (its writes would fail anyway).
                LOG.warn("this replica no longer leads; its control loop stops: {}", e.getMessage());
                running = false;
                return;
            } catch (StoreUnavailableException e) {
                // Nothing is decided that cannot be persisted: the cycle stopped at its first read or write that failed.
                if (outageSince == null) {
                    outageSince = clock.instant();
                    LOG.warn("the control loop pauses until the store can be reached again: {}", e.getMessage());
                }
                pause();
            } catch (RuntimeException e) {
                LOG.error("control loop cycle failed; retrying", e);
                pause();
            }
        }
    }

    private static void pause() {
        try {
            TimeUnit.MILLISECONDS.sleep(500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One full cycle. Package-private so tests can drive the loop step by step. */
    void cycle() {
        downNodes = store.downNodes();
        reports.applyAll(downNodes);
        housekeeping();
        Map<RunId, List<InstanceRecord>> instances = instancesByRun();
        boolean conflicted = false;
        boolean deferred = false;
        Observation seen = observation(); // one moment for every run of the cycle: built once, not per run
        for (RunRecord run : store.activeRuns()) {
            // JSON logs carry the run each line is about as a field of its own (mdc.run).
            try (var ignored = org.slf4j.MDC.putCloseable("run", run.id().value())) {
                RunSteps steps = new RunSteps(store, executor, launcher, faultWatch, clock, run, instances.getOrDefault(run.id(), List.of()));
                steps.take(lifecycle, seen);
                deferred |= steps.deferred();
            } catch (ConflictException e) {
                LOG.debug("run {} changed during the cycle; next cycle picks it up", run.id());
                conflicted = true;
            } catch (UnreadableRecordException e) {
                // A run it depends on (the owner it makes room for) cannot be read; the store logged why. The others go on.
                LOG.debug("run {} skipped this cycle: {}", run.id(), e.getMessage());
            }
        }
        if (conflicted) {
            wakeUp(); // without that run the snapshot would show its resources free: schedule next cycle
            return;
        }
        // Runs and instances changed while the runs stepped (a victim gone marks its owner): read them again.
        List<RunRecord> active = store.activeRuns().stream().filter(run -> !run.state().isFinal()).toList();
        faultWatch.retainOnly(active.stream().map(RunRecord::id).collect(Collectors.toSet()));
        deferred |= schedule(active, instancesByRun());
        if (deferred) {
            wakeUp(); // instances wait for the next cycle's launches: it follows at once
        }
    }

    private Map<RunId, List<InstanceRecord>> instancesByRun() {
        return store.instancesOfActiveRuns().stream()
                .collect(Collectors.groupingBy(i -> i.id().runId(), LinkedHashMap::new, Collectors.toList()));
    }

    /** What every decision of this moment sees: the time, the nodes down, the instances not heard of since the start. */
    private Observation observation() {
        Instant now = clock.instant();
        Map<String, String> down = new HashMap<>();
        downNodes.forEach((node, why) -> down.put(node, why.reason()));
        return new Observation(now, down, reports.unconfirmed(now), null, Map.of());
    }

    /**
     * Schedules are looked at every second at most, retention once a minute: both read every job or finished run.
     * Neither may hold up the runs: a failure is logged and tried again later.
     */
    private void housekeeping() {
        Instant now = clock.instant();
        if (!now.isBefore(nextSchedulesCheck)) {
            nextSchedulesCheck = now.plusSeconds(1);
            try {
                schedules.tick();
            } catch (StoreUnavailableException | FencedException e) {
                throw e; // the loop pauses (an outage) or stops (fenced): logged there
            } catch (RuntimeException e) {
                LOG.warn("schedules could not be checked; trying again in a second: {}", e.toString());
            }
        }
        if (!now.isBefore(nextRetentionSweep)) {
            nextRetentionSweep = now.plus(RETENTION_INTERVAL);
            try {
                if (retention.sweep() == Retention.BATCH) {
                    nextRetentionSweep = now; // more to remove: go on next cycle
                }
            } catch (StoreUnavailableException | FencedException e) {
                throw e;
            } catch (RuntimeException e) {
                LOG.warn("old runs could not be removed; trying again in a minute: {}", e.toString());
            }
        }
    }

    // --- scheduling ---

    /** Applies the scheduler's decisions; returns whether launches were left for the next cycle. */
    private boolean schedule(List<RunRecord> runs, Map<RunId, List<InstanceRecord>> instances) {
        if (runs.isEmpty()) {
            queueStatus.replace(Map.of());
            lending.record(null, clock.instant());
            return false; // nothing to place, nothing to promote
        }
        Map<RunId, RunRecord> byId = new HashMap<>();
        runs.forEach(run -> byId.put(run.id(), run));
        Instant now = clock.instant();
        List<RunRecord> ready = new ArrayList<>();
        Map<RunId, RunView.QueueView> status = new HashMap<>();
        for (RunRecord run : runs) {
            Instant retryAt = run.faults().retryAt();
            if (run.state() == RunState.QUEUED && retryAt != null && now.isBefore(retryAt)) {
                status.put(run.id(), new RunView.QueueView(WaitReason.BackingOff.name(), "restarts after " + retryAt + " (backoff)", 0));
            } else {
                ready.add(run);
            }
        }
        Set<String> closed = new HashSet<>(downNodes.keySet());
        closed.addAll(UnreadableRuns.heldNodes(instances, byId.keySet()));
        ClusterSnapshot snapshot = SnapshotBuilder.build(executor.nodes(), closed, store.listDocuments(Kind.Quota, null), ready,
                instances, reclaimedOwners(runs));
        lending.record(snapshot, now);
        CycleResult result = scheduler.schedule(snapshot, now);
        Set<Integer> takenPorts = new HashSet<>();
        instances.values().forEach(list -> list.forEach(i -> {
            if (i.endpoint() != null && !i.state().isFinal()) {
                takenPorts.addAll(i.endpoint().ports());
            }
        }));
        boolean deferred = false;
        Set<RunId> conflicted = new java.util.HashSet<>();
        List<Admissions.Request> admits = new ArrayList<>();
        for (Decision decision : result.decisions()) {
            RunRecord run = byId.get(decision.runId());
            try (var ignored = org.slf4j.MDC.putCloseable("run", decision.runId().value())) {
                if (decision instanceof Decision.Wait wait) {
                    status.put(wait.runId(), new RunView.QueueView(wait.reason().name(), wait.message(), wait.position()));
                } else if (decision instanceof Decision.Admit admit) {
                    admits.add(new Admissions.Request(run, admit.placements(), admit.realTimeResources()));
                } else if (decision instanceof Decision.Preempt preempt) {
                    // A move (defragmentation) is a preemption like a reclaim: notice, grace period, queued again. Neither is
                    // a failure: RunRecord.preempting counts it in preemptions, never in the restart budget.
                    RunRecord preempting = run.preempting(preempt.forRun(), preempt.reason());
                    // The victim's reason does not name the run it makes room for (another team's): the operator's log does.
                    switch (preempt.kind()) {
                        case Reclaim -> LOG.info("run {}: preempted for run {} ({})", run.id(), preempt.forRun(), preempt.reason());
                        case Move -> LOG.info("run {}: moved, to start again elsewhere, for run {} that needs whole nodes", run.id(), preempt.forRun());
                    }
                    RunSteps steps = new RunSteps(store, executor, launcher, faultWatch, clock, run, instances.getOrDefault(run.id(), List.of()));
                    steps.transitionTo(preempting);
                    steps.take(lifecycle, observation());
                } else if (decision instanceof Decision.Promote) {
                    Instant at = clock.instant();
                    store.inTransaction(tx -> {
                        RunRecord updated = tx.updateRun(run.promoted());
                        tx.recordUsage(UsageChanges.between(run, updated, at));
                        tx.appendEvent(RunEvent.of(run.id(), at, EventType.Promoted, updated.state().name(), "Promoted",
                                "its quota has room: from now on it is guaranteed (InQuota)", null));
                        return updated;
                    });
                    LOG.info("run {}: promoted to InQuota", run.id());
                } else {
                    throw new IllegalStateException("a decision of a kind this loop does not know: " + decision);
                }
            } catch (ConflictException e) {
                conflicted.add(decision.runId());
                if (conflictedLastCycle.contains(decision.runId())) {
                    LOG.warn("run {}: its {} conflicted again ({}); deciding again next tick", decision.runId(),
                            decision.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT), e.getMessage());
                } else {
                    wakeUp(); // cancelled or changed meanwhile: decide again
                }
            }
        }
        Admissions.Outcome outcome = admissions.admit(admits, takenPorts);
        Set<RunId> refused = new HashSet<>(outcome.conflicted());
        deferred |= launchAdmitted(outcome.admitted(), refused);
        for (RunId id : refused) {
            conflicted.add(id);
            if (conflictedLastCycle.contains(id)) {
                LOG.warn("run {}: its admission conflicted again; deciding again next tick", id);
            } else {
                wakeUp(); // cancelled or changed meanwhile: decide again
            }
        }
        conflictedLastCycle = conflicted;
        queueStatus.replace(status);
        return deferred;
    }

    /**
     * Just-admitted runs launch what may start at once (not a cycle later), each with the same steps as every other
     * run, all at once: a launch mostly waits for processes to start, and one run's launch must not wait for another's.
     * Returns whether launches were left for the next cycle; a run that changed meanwhile is added to {@code conflicted}.
     */
    private boolean launchAdmitted(List<Admissions.Admitted> admitted, Set<RunId> conflicted) {
        if (admitted.isEmpty()) {
            return false;
        }
        Observation seen = observation();
        List<java.util.concurrent.Future<Boolean>> launches = new ArrayList<>();
        for (Admissions.Admitted one : admitted) {
            launches.add(launchers.submit(() -> {
                try (var ignored = org.slf4j.MDC.putCloseable("run", one.run().id().value())) {
                    RunSteps steps = new RunSteps(store, executor, launcher, faultWatch, clock, one.run(), one.instances());
                    steps.take(lifecycle, seen);
                    return steps.deferred();
                }
            }));
        }
        boolean deferred = false;
        RuntimeException failed = null;
        for (int i = 0; i < launches.size(); i++) {
            try {
                deferred |= Futures.await(launches.get(i));
            } catch (ConflictException e) {
                conflicted.add(admitted.get(i).run().id());
            } catch (RuntimeException e) {
                failed = failed == null ? e : failed; // every launch is waited for before the cycle fails
            }
        }
        if (failed != null) {
            throw failed;
        }
        return deferred;
    }

    /** Queued runs whose victims are gone: the capacity those gave back is theirs, so the scheduler places them first. */
    private static Set<RunId> reclaimedOwners(List<RunRecord> runs) {
        return runs.stream().filter(r -> r.state() == RunState.QUEUED && r.capacityReclaimed()).map(RunRecord::id).collect(Collectors.toSet());
    }

    @Override
    public void close() {
        running = false;
        wakeUp();
        if (thread != null) {
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        launchers.shutdown(); // a launch under way ends by itself (its cycle waits for it)
    }
}
