package io.slipstream.server.control;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.wire.RunView;
import io.slipstream.executor.Activity;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.scheduler.ClusterSnapshot;
import io.slipstream.scheduler.CycleResult;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.Placement;
import io.slipstream.scheduler.Scheduler;
import io.slipstream.server.config.RunLimits;
import io.slipstream.store.ConflictException;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.FaultState;
import io.slipstream.store.NodeDown;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane's single writer of run and instance state. Each cycle: apply what executors reported, bring
 * every active run one step closer to where it should be (cancel, fail, finish, launch what was placed), then ask
 * the scheduler for admissions over a snapshot built from the store. Decisions are persisted before any executor
 * is told to act, and every executor call is keyed by instance id, so repeating a cycle after a crash is harmless.
 *
 * <p>Runs on one thread; {@link #wakeUp()} may be called from any thread.
 */
public final class ControlLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlLoop.class);
    private static final Duration RETENTION_INTERVAL = Duration.ofMinutes(1);
    /** How long timeouts wait for adopted instances to report (an executor reports them within moments). */
    private static final Duration ADOPTION_WAIT = Duration.ofMinutes(1);
    /** How long after a first failure the peers' failures are awaited before judging (see {@link #settling}). */
    private static final Duration SETTLE = Duration.ofSeconds(1);

    private final Store store;
    private final Executor executor;
    private final Scheduler scheduler;
    private final Clock clock;
    private final RunLimits limits;
    /**
     * Queued runs whose victims are gone: the capacity they gave back is theirs, so the scheduler places them first.
     * Only in memory: after a restart such a run simply waits its turn.
     */
    private final java.util.Set<RunId> reclaimedOwners = new java.util.HashSet<>();
    private final Duration tick;
    private final Schedules schedules;
    private final Launcher launcher;
    private final Retention retention;
    private final FaultWatch faultWatch;
    /** Nodes declared down, as read at the start of the cycle. */
    private Map<String, NodeDown> downNodes = Map.of();
    private Instant nextSchedulesCheck = Instant.MIN;
    private Instant nextRetentionSweep = Instant.MIN;
    private final QueueStatus queueStatus = new QueueStatus();
    private final ConcurrentLinkedQueue<InstanceReport> reports = new ConcurrentLinkedQueue<>();
    private final Semaphore wakeUps = new Semaphore(0);
    /** Instances already told to stop in this process's life (a restart sends the signal again, harmlessly). */
    private final Set<InstanceId> terminationSent = ConcurrentHashMap.newKeySet();
    /**
     * Instances adopted after a restart that have not reported yet. An instance may have ended while the server was
     * down; until its report is in, its run's runtime is unknown, so it is not timed out.
     */
    private final Set<InstanceId> awaitingAdoption = ConcurrentHashMap.newKeySet();
    private Instant adoptionDeadline = Instant.MIN;
    private final ProgressReports progressReports = new ProgressReports();
    private volatile boolean running;
    private Thread thread;
    /** When the loop last completed a cycle ({@code null}: not yet); readiness reads it from other threads. */
    private volatile Instant lastCycleAt;

    /** When the loop last completed a cycle, or {@code null} if it has not yet. */
    public Instant lastCycleAt() {
        return lastCycleAt;
    }

    /** Where instances' progress reported through the API goes. */
    public ProgressReports progressReports() {
        return progressReports;
    }

    public ControlLoop(Store store, Executor executor, Scheduler scheduler, Clock clock, RunLimits limits, Duration tick) {
        this(store, executor, scheduler, clock, limits, tick, null);
    }

    /** @param runTokens gives each run's instances their run's token, or {@code null} for none */
    public ControlLoop(Store store, Executor executor, Scheduler scheduler, Clock clock, RunLimits limits, Duration tick,
                       io.slipstream.server.auth.RunTokens runTokens) {
        this(store, executor, scheduler, clock, limits, tick, runTokens, null);
    }

    /**
     * @param runTokens gives each run's instances their run's token, or {@code null} for none
     * @param secrets   the values of the Secrets node groups refer to, read at launch, or {@code null} for none
     */
    public ControlLoop(Store store, Executor executor, Scheduler scheduler, Clock clock, RunLimits limits, Duration tick,
                       io.slipstream.server.auth.RunTokens runTokens, LaunchSecrets secrets) {
        this.store = store;
        this.executor = executor;
        this.scheduler = scheduler;
        this.clock = clock;
        this.limits = limits;
        this.tick = tick;
        this.schedules = new Schedules(store, clock, new RunFactory(clock, limits));
        this.launcher = new Launcher(store, executor, clock, runTokens, secrets);
        this.retention = new Retention(store, executor, clock, limits.retention());
        this.faultWatch = new FaultWatch(executor, progressReports);
        executor.setListener(report -> {
            reports.add(report);
            wakeUp();
        });
    }

    /** Re-attaches to instances that ran before a restart, then starts cycling on a thread of its own. */
    public void start() {
        recover();
        running = true;
        thread = new Thread(this::loop, "slipstream-control");
        thread.setDaemon(true);
        thread.start();
    }

    /** Asks the executor about every instance the store says is running: each answers Running, Exited or Lost. */
    void recover() {
        Map<InstanceId, Map<String, String>> handles = new LinkedHashMap<>();
        for (InstanceRecord instance : store.activeInstances()) {
            if (instance.state() == InstanceState.RUNNING) {
                handles.put(instance.id(), instance.handle());
            }
        }
        if (!handles.isEmpty()) {
            LOG.info("adopting {} instance(s) that ran before this start", handles.size());
            awaitingAdoption.addAll(handles.keySet());
            adoptionDeadline = clock.instant().plus(ADOPTION_WAIT);
            executor.adopt(handles);
        }
    }

    public void wakeUp() {
        if (wakeUps.availablePermits() == 0) {
            wakeUps.release();
        }
    }

    public QueueStatus queueStatus() {
        return queueStatus;
    }

    private void loop() {
        while (running) {
            try {
                wakeUps.tryAcquire(tick.toMillis(), TimeUnit.MILLISECONDS);
                wakeUps.drainPermits();
                if (running) {
                    cycle();
                    lastCycleAt = clock.instant();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
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
        launcher.newCycle();
        downNodes = store.downNodes();
        applyReports();
        housekeeping();
        Map<RunId, List<InstanceRecord>> instances = store.instancesOfActiveRuns().stream()
                .collect(Collectors.groupingBy(i -> i.id().runId(), LinkedHashMap::new, Collectors.toList()));
        if (!downNodes.isEmpty() && loseInstancesOnDownNodes(instances)) {
            instances = store.instancesOfActiveRuns().stream()
                    .collect(Collectors.groupingBy(i -> i.id().runId(), LinkedHashMap::new, Collectors.toList()));
        }
        List<RunRecord> current = new ArrayList<>();
        boolean conflicted = false;
        for (RunRecord run : store.activeRuns()) {
            try {
                RunRecord now = reconcile(run, instances.getOrDefault(run.id(), List.of()));
                if (!now.state().isFinal()) {
                    current.add(now);
                }
            } catch (ConflictException e) {
                LOG.debug("run {} changed during the cycle; next cycle picks it up", run.id());
                conflicted = true;
            }
        }
        faultWatch.retainOnly(current.stream().map(RunRecord::id).collect(Collectors.toSet()));
        if (conflicted) {
            wakeUp(); // without that run the snapshot would show its resources free: schedule next cycle
            return;
        }
        // Instances may have ended or started during reconciling: read them again for an exact snapshot.
        Map<RunId, List<InstanceRecord>> fresh = store.instancesOfActiveRuns().stream()
                .collect(Collectors.groupingBy(i -> i.id().runId(), LinkedHashMap::new, Collectors.toList()));
        schedule(current, fresh);
        if (launcher.deferred()) {
            wakeUp(); // instances wait for the next cycle's launches: it follows at once
        }
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
            } catch (RuntimeException e) {
                LOG.warn("old runs could not be removed; trying again in a minute: {}", e.toString());
            }
        }
    }

    // --- reports ---

    /** A report is dropped only once it is applied: executors report an exit once, so losing it would strand the run. */
    private void applyReports() {
        InstanceReport report;
        while ((report = reports.peek()) != null) {
            try {
                apply(report);
            } catch (ConflictException e) {
                wakeUp(); // the instance changed meanwhile: apply it again next cycle
                return;
            } catch (RuntimeException e) {
                LOG.warn("could not record {}; retrying next cycle: {}", report, e.toString());
                return;
            }
            reports.remove();
        }
    }

    private void apply(InstanceReport report) {
        awaitingAdoption.remove(report.id());
        Optional<InstanceRecord> found = store.getInstance(report.id());
        if (found.isEmpty() || found.get().state().isFinal()) {
            return; // duplicate or late: reports arrive at least once
        }
        InstanceRecord instance = found.get();
        Instant now = clock.instant();
        if (report instanceof InstanceReport.Running running) {
            if (instance.state() == InstanceState.PENDING || !instance.handle().equals(running.handle())) {
                InstanceRecord updated = store.updateInstance(instance.running(running.handle(), now));
                if (instance.state() == InstanceState.PENDING) {
                    event(updated, "InstanceStarted", "Adopted", "running again after a restart of the server");
                }
            }
        } else if (report instanceof InstanceReport.Exited exited) {
            InstanceRecord updated;
            if (downNodes.containsKey(instance.node()) && (exited.terminated() || exited.exitCode() != 0)) {
                updated = instance.finished(InstanceState.NODE_LOST, exited.exitCode(), nodeLost(instance.node()), now);
            } else if (exited.terminated() && beingPreempted(instance)) {
                updated = instance.finished(InstanceState.RESOURCE_PREEMPTED, exited.exitCode(), "Preempted (exit code " + exited.exitCode() + ")", now);
            } else if (exited.terminated()) {
                updated = instance.finished(InstanceState.KILLED, exited.exitCode(), "Terminated (exit code " + exited.exitCode() + ")", now);
            } else if (exited.exitCode() == 0) {
                updated = instance.finished(InstanceState.SUCCEEDED, 0, "Completed", now);
            } else if (exited.reason() != null) {
                updated = instance.finished(InstanceState.FAILED, exited.exitCode(), exited.reason() + " (exit code " + exited.exitCode() + ")", now);
            } else {
                updated = instance.finished(InstanceState.FAILED, exited.exitCode(), "Exited with code " + exited.exitCode(), now);
            }
            store.inTransaction(tx -> {
                tx.updateInstance(updated);
                return event(tx, updated, "InstanceExited", updated.state().name(), updated.reason());
            });
        } else if (report instanceof InstanceReport.Ready) {
            if (instance.readyAt() == null) {
                InstanceRecord updated = store.updateInstance(instance.ready(now));
                event(updated, "InstanceReady", "Ready", "its startup probe passed");
                wakeUp(); // with InOrder startup, the next node group may start
            }
        } else if (report instanceof InstanceReport.ProbeFailed failed) {
            if (!instance.hasFailedProbe()) {
                InstanceRecord updated = store.updateInstance(instance.probeFailed(failed.reason()));
                event(updated, "InstanceProbeFailed", "StartupProbeFailed", failed.reason());
                wakeUp();
            }
        } else if (report instanceof InstanceReport.Lost lost) {
            InstanceRecord updated = lost.nodeLost()
                    ? instance.finished(InstanceState.NODE_LOST, null, lost.reason(), now)
                    : instance.finished(InstanceState.LOST, null, "Lost: " + lost.reason(), now);
            store.inTransaction(tx -> {
                tx.updateInstance(updated);
                return event(tx, updated, "InstanceLost", updated.state().name(), updated.reason());
            });
        }
    }

    private boolean beingPreempted(InstanceRecord instance) {
        return store.getRun(instance.id().runId())
                .map(run -> run.restartCause() == FaultState.RestartCause.PREEMPTION)
                .orElse(false);
    }

    private String nodeLost(String node) {
        NodeDown down = downNodes.get(node);
        return "NodeLost: node " + node + " is down" + (down == null ? "" : " (" + down.reason() + ")");
    }

    /**
     * Stops, at once, every instance on a node declared down: on a real cluster such a node is gone with its
     * processes; here they are killed so that nothing of the run goes on there. Returns whether any instance changed.
     */
    private boolean loseInstancesOnDownNodes(Map<RunId, List<InstanceRecord>> instances) {
        boolean changed = false;
        for (List<InstanceRecord> list : instances.values()) {
            for (InstanceRecord instance : list) {
                if (instance.state().isFinal() || !downNodes.containsKey(instance.node()) || terminationSent.contains(instance.id())) {
                    continue;
                }
                if (instance.handle().isEmpty()) {
                    InstanceRecord lost = instance.finished(InstanceState.NODE_LOST, null, nodeLost(instance.node()), clock.instant());
                    store.inTransaction(tx -> {
                        tx.updateInstance(lost);
                        return event(tx, lost, "InstanceLost", lost.state().name(), lost.reason());
                    });
                    changed = true;
                    continue;
                }
                executor.terminate(instance.id(), instance.handle(), Duration.ZERO, nodeLost(instance.node()));
                terminationSent.add(instance.id());
            }
        }
        return changed;
    }

    // --- reconciling one run ---

    private RunRecord reconcile(RunRecord run, List<InstanceRecord> instances) {
        Instant now = clock.instant();
        switch (run.state()) {
            case QUEUED -> {
                if (run.cancelRequestedAt() != null) {
                    return transition(run, run.moveTo(RunState.CANCELLED, "Cancelled before it started", now));
                }
                return run;
            }
            case STARTING, RUNNING -> {
                if (run.cancelRequestedAt() != null) {
                    return terminate(transition(run, run.terminating(RunState.CANCELLED, "CancelRequested")), instances);
                }
                List<InstanceRecord> failed = instances.stream()
                        .filter(i -> i.state() == InstanceState.FAILED || i.state() == InstanceState.LOST || i.state() == InstanceState.KILLED
                                || i.state() == InstanceState.NODE_LOST)
                        .toList();
                if (!failed.isEmpty()) {
                    if (settling(run, instances, failed, now)) {
                        return run; // the next tick judges, with the peers' failures in
                    }
                    return fault(run, instances, faultOf(rootCause(failed)));
                }
                Optional<InstanceRecord> unready = instances.stream().filter(InstanceRecord::hasFailedProbe).findFirst();
                if (unready.isPresent()) {
                    InstanceRecord first = unready.get();
                    String detail = first.reason().substring(first.reason().indexOf(": ") + 2);
                    String why = "StartupProbeFailed: " + first.displayName() + " (" + detail + ")";
                    return terminate(transition(run, run.terminating(RunState.FAILED, why)), instances);
                }
                // Checked after success and failure: a run whose instances succeeded has its own outcome, however late.
                String timeout = enoughSucceeded(run, instances) ? null : timeout(run, instances, now);
                if (timeout != null) {
                    return terminate(transition(run, run.terminating(RunState.TIMED_OUT, timeout)), instances);
                }
                if (faultWatch.due(run, now)) {
                    Map<InstanceId, Activity> activities = activities(instances);
                    FaultState progressed = faultWatch.progress(run, instances, activities);
                    if (!progressed.equals(run.faults())) {
                        run = store.updateRun(run.withFaults(progressed));
                    }
                    String hang = faultWatch.hung(run, instances, activities, now);
                    if (hang != null) {
                        return fault(run, instances, new RestartRules.Hung(hang));
                    }
                }
                List<InstanceRecord> current = launcher.launchWhatMayStart(run, instances);
                if (enoughSucceeded(run, current)) {
                    if (current.stream().allMatch(i -> i.state().isFinal())) {
                        RunRecord started = run.state() == RunState.STARTING ? run.moveTo(RunState.RUNNING, "AllInstancesRunning", now) : run;
                        return transition(run, started.moveTo(RunState.SUCCEEDED, "AllInstancesSucceeded", now));
                    }
                    // Every group has the successes it needs (minSuccessReplicas): the rest is stopped, and the run succeeds.
                    return terminate(transition(run, run.terminating(RunState.SUCCEEDED, "MinSuccessReplicasReached")), current);
                }
                if (current.stream().anyMatch(i -> i.state().isFinal() && i.state() != InstanceState.SUCCEEDED)) {
                    wakeUp(); // a launch failed: the next cycle fails the run
                    return run;
                }
                if (run.state() == RunState.STARTING && current.stream().noneMatch(i -> i.state() == InstanceState.PENDING)) {
                    return transition(run, run.moveTo(RunState.RUNNING, "AllInstancesRunning", now));
                }
                return run;
            }
            case TERMINATING -> {
                if (run.cancelRequestedAt() != null && run.outcome() == RunState.QUEUED) {
                    run = transition(run, run.terminating(RunState.CANCELLED, "CancelRequested"));
                }
                return terminate(run, instances);
            }
            default -> {
                return run;
            }
        }
    }

    private Map<InstanceId, Activity> activities(List<InstanceRecord> instances) {
        Map<InstanceId, Activity> activities = new HashMap<>();
        for (InstanceRecord instance : instances) {
            activities.put(instance.id(), faultWatch.activityOf(instance));
        }
        return activities;
    }

    /**
     * When one rank of a gang dies, its peers fail moments later with errors of their own ("lost a peer"), and their
     * reports may arrive first. A run that may be restarted by rule therefore waits {@link #SETTLE} after the first
     * failure (while others still run) so that the rules judge the root cause, not a symptom.
     */
    private static boolean settling(RunRecord run, List<InstanceRecord> instances, List<InstanceRecord> failed, Instant now) {
        FaultTolerance policy = run.spec().faultTolerance();
        boolean mayRetry = !policy.retryExitCodes().isEmpty() || !policy.retryPatterns().isEmpty()
                || policy.otherFailures() == FaultTolerance.FailureAction.Retry;
        Instant first = failed.stream().map(InstanceRecord::finishedAt).filter(java.util.Objects::nonNull).min(java.util.Comparator.naturalOrder())
                .orElse(null);
        return mayRetry && first != null && now.isBefore(first.plus(SETTLE)) && instances.stream().anyMatch(i -> !i.state().isFinal());
    }

    /** The failure that most likely caused the others: a lost node, then a rank killed by a signal, then the earliest. */
    private static InstanceRecord rootCause(List<InstanceRecord> failed) {
        java.util.Comparator<InstanceRecord> byKind = java.util.Comparator.comparingInt(i -> {
            if (i.state() == InstanceState.NODE_LOST || i.state() == InstanceState.LOST) {
                return 0;
            }
            return i.exitCode() != null && i.exitCode() > 128 ? 1 : 2;
        });
        return failed.stream().min(byKind.thenComparing(InstanceRecord::finishedAt, java.util.Comparator.nullsLast(java.util.Comparator.naturalOrder())))
                .orElseThrow();
    }

    private RestartRules.Fault faultOf(InstanceRecord instance) {
        if (instance.state() == InstanceState.NODE_LOST || instance.state() == InstanceState.LOST) {
            return new RestartRules.NodeLost(instance.displayName(), instance.reason());
        }
        return new RestartRules.InstanceFailed(instance.displayName(), instance.exitCode(), instance.reason(), faultWatch.lastLines(instance));
    }

    /** The run's policy decides: the whole gang restarts as a new attempt, or the run fails. */
    private RunRecord fault(RunRecord run, List<InstanceRecord> instances, RestartRules.Fault fault) {
        RestartRules.Verdict verdict = RestartRules.judge(run.spec().faultTolerance(), run.faults(), fault);
        RunRecord counted = run.withFaults(verdict.faults());
        RunRecord next = verdict.restart() ? counted.restarting(verdict.cause(), verdict.reason()) : counted.terminating(RunState.FAILED, verdict.reason());
        return terminate(transition(run, next), instances);
    }

    /** Whether every node group has as many succeeded instances as it needs (all, unless minSuccessReplicas says fewer). */
    private static boolean enoughSucceeded(RunRecord run, List<InstanceRecord> instances) {
        if (instances.isEmpty()) {
            return false;
        }
        Map<String, Long> succeeded = instances.stream().filter(i -> i.state() == InstanceState.SUCCEEDED)
                .collect(Collectors.groupingBy(InstanceRecord::nodeGroup, Collectors.counting()));
        return run.spec().nodeGroups().stream().allMatch(g -> succeeded.getOrDefault(g.name(), 0L) >= g.requiredSuccesses());
    }

    /** Why the run has run out of time, or {@code null}. Only time spent running counts, never time queued. */
    private String timeout(RunRecord run, List<InstanceRecord> instances, Instant now) {
        if (!awaitingAdoption.isEmpty()) {
            if (now.isAfter(adoptionDeadline)) {
                awaitingAdoption.clear();
            } else if (instances.stream().anyMatch(i -> awaitingAdoption.contains(i.id()))) {
                return null;
            }
        }
        Duration limit = limits.maxRuntimeOf(run.spec());
        Duration used = run.spec().maxRuntimePerAttempt() ? run.attemptRuntime(now) : run.runtime(now);
        if (used.compareTo(limit) >= 0) {
            return "Timeout: ran " + Durations.format(used.withNanos(0)) + ", longer than its maxRuntime of " + Durations.format(limit)
                    + (run.spec().maxRuntimePerAttempt() ? " per attempt" : "");
        }
        Map<String, Duration> groupLimits = new HashMap<>();
        run.spec().nodeGroups().forEach(g -> {
            if (g.maxRuntime() != null) {
                groupLimits.put(g.name(), g.maxRuntime());
            }
        });
        for (InstanceRecord instance : instances) {
            Duration groupLimit = groupLimits.get(instance.nodeGroup());
            if (groupLimit != null && instance.state() == InstanceState.RUNNING && instance.startedAt() != null
                    && Duration.between(instance.startedAt(), now).compareTo(groupLimit) >= 0) {
                return "Timeout: " + instance.displayName() + " ran longer than node group " + instance.nodeGroup() + "'s maxRuntime of "
                        + Durations.format(groupLimit);
            }
        }
        return null;
    }

    /** Sends every live instance of a terminating run the stop signal, and ends the run once all are gone. */
    private RunRecord terminate(RunRecord run, List<InstanceRecord> instances) {
        boolean allGone = true;
        for (InstanceRecord instance : instances) {
            if (instance.state().isFinal()) {
                continue;
            }
            if (instance.state() == InstanceState.PENDING) {
                Optional<Map<String, String>> handle = executor.find(instance.id());
                if (handle.isEmpty()) {
                    InstanceRecord killed = instance.finished(InstanceState.KILLED, null, "Never started", clock.instant());
                    store.inTransaction(tx -> {
                        tx.updateInstance(killed);
                        return event(tx, killed, "InstanceExited", killed.state().name(), killed.reason());
                    });
                    continue;
                }
                instance = store.updateInstance(instance.running(handle.get(), clock.instant()));
            }
            allGone = false;
            if (!terminationSent.contains(instance.id())) {
                executor.terminate(instance.id(), instance.handle(), graceFor(run), run.reason());
                terminationSent.add(instance.id()); // only once it was sent: a failed call is tried again next cycle
            }
        }
        if (!allGone) {
            return run;
        }
        instances.forEach(i -> terminationSent.remove(i.id()));
        if (run.outcome() == RunState.QUEUED || run.outcome() == RunState.FAILED || run.outcome() == RunState.TIMED_OUT) {
            run = accountWorkLost(run, instances);
        }
        if (run.outcome() == RunState.QUEUED) {
            if (run.reclaimFor() != null) {
                reclaimedOwners.add(run.reclaimFor()); // what it held now belongs to the run it was preempted for
            }
            return requeue(run);
        }
        faultWatch.forget(run);
        String why = switch (run.outcome()) {
            case CANCELLED -> "Cancelled: every instance stopped";
            case SUCCEEDED -> "MinSuccessReplicasReached: every node group has the successes it needs";
            default -> run.reason();
        };
        return transition(run, run.moveTo(run.outcome(), why, clock.instant()));
    }

    /**
     * Records the newest checkpoint the stopped attempt reported (its files are still there) and the work it loses:
     * what its instances did after that checkpoint.
     */
    private RunRecord accountWorkLost(RunRecord run, List<InstanceRecord> instances) {
        Instant now = clock.instant();
        FaultState progressed = faultWatch.progress(run, instances, activities(instances));
        long lost = FaultWatch.workLostMillis(progressed, instances, now);
        RunRecord updated = store.updateRun(run.withFaults(progressed.lost(lost)));
        String since = progressed.checkpointStep() == null ? "no checkpoint yet" : "the checkpoint of step " + progressed.checkpointStep();
        store.appendEvent(RunEvent.of(run.id(), now, "WorkLost", run.state().name(), "AttemptStopped",
                String.format(java.util.Locale.ROOT, "attempt %d lost %.1f instance-seconds of work (since %s)", run.attempt(), lost / 1000.0, since),
                null));
        return updated;
    }

    /** Queues a stopped run again for its next attempt, after the backoff its cause calls for; or fails it when out of budget. */
    private RunRecord requeue(RunRecord run) {
        Instant now = clock.instant();
        FaultTolerance policy = run.spec().faultTolerance();
        FaultState.RestartCause cause = run.restartCause();
        if (cause == FaultState.RestartCause.PREEMPTION && policy.maxPreemptions() != null && run.preemptions() >= policy.maxPreemptions()) {
            faultWatch.forget(run);
            return transition(run, run.moveTo(RunState.FAILED, "PreemptionBudgetExhausted: preempted " + run.preemptions()
                    + " time(s) before (faultTolerance.maxPreemptions: " + policy.maxPreemptions() + "); last: " + run.reason(), now));
        }
        Duration backoff = switch (cause) {
            case FAILURE -> policy.backoff(run.faults().failures() + 1);
            case HANG -> policy.backoff(run.faults().hangs() + 1);
            default -> Duration.ZERO;
        };
        String why = (cause == FaultState.RestartCause.PREEMPTION ? "Preempted: " : "Restarted: ") + run.reason();
        return transition(run, run.requeued(why, now, backoff.isZero() ? null : now.plus(backoff)));
    }

    /** A preempted run has its job's grace period (or the default) to save its work; anything else the default. */
    private Duration graceFor(RunRecord run) {
        if (run.outcome() == RunState.QUEUED && run.spec().preemptionGracePeriod() != null) {
            return run.spec().preemptionGracePeriod();
        }
        return limits.gracePeriod();
    }

    // --- scheduling ---

    private void schedule(List<RunRecord> runs, Map<RunId, List<InstanceRecord>> instances) {
        Map<RunId, RunRecord> byId = new HashMap<>();
        runs.forEach(run -> byId.put(run.id(), run));
        if (runs.isEmpty()) {
            queueStatus.replace(Map.of());
            return; // nothing to place, nothing to promote
        }
        Instant now = clock.instant();
        List<RunRecord> ready = new ArrayList<>();
        Map<RunId, RunView.QueueView> status = new HashMap<>();
        for (RunRecord run : runs) {
            Instant retryAt = run.faults().retryAt();
            if (run.state() == RunState.QUEUED && retryAt != null && now.isBefore(retryAt)) {
                status.put(run.id(), new RunView.QueueView("BackingOff", "restarts after " + retryAt + " (backoff)", 0));
            } else {
                ready.add(run);
            }
        }
        reclaimedOwners.removeIf(id -> !byId.containsKey(id) || byId.get(id).state() != RunState.QUEUED);
        ClusterSnapshot snapshot = SnapshotBuilder.build(executor.nodes(), downNodes.keySet(), store.listDocuments(Kind.Quota, null), ready,
                instances, reclaimedOwners);
        CycleResult result = scheduler.schedule(snapshot, now);
        java.util.Set<Integer> takenPorts = new java.util.HashSet<>();
        instances.values().forEach(list -> list.forEach(i -> {
            if (i.endpoint() != null && !i.state().isFinal()) {
                takenPorts.addAll(i.endpoint().ports());
            }
        }));
        for (Decision decision : result.decisions()) {
            RunRecord run = byId.get(decision.runId());
            try {
                if (decision instanceof Decision.Wait wait) {
                    status.put(wait.runId(), new RunView.QueueView(wait.reason(), wait.message(), wait.position()));
                } else if (decision instanceof Decision.Admit admit) {
                    admit(run, admit.placements(), admit.realTimeResources(), takenPorts);
                } else if (decision instanceof Decision.Preempt preempt) {
                    RunRecord preempting = transition(run, run.preempting(preempt.forRun(), preempt.reason()));
                    terminate(preempting, instances.getOrDefault(run.id(), List.of()));
                } else if (decision instanceof Decision.Promote) {
                    RunRecord promoted = store.updateRun(run.promoted());
                    store.appendEvent(RunEvent.of(run.id(), clock.instant(), "Promoted", promoted.state().name(), "Promoted",
                            "its quota has room: from now on it is guaranteed (InQuota)", null));
                    LOG.info("run {}: promoted to InQuota", run.id());
                }
            } catch (ConflictException e) {
                wakeUp(); // cancelled or changed meanwhile: decide again
            }
        }
        queueStatus.replace(status);
    }

    /**
     * Persists the placement (run STARTING, instances PENDING with the address and ports each will have) in one
     * transaction, then launches.
     *
     * @param takenPorts ports of live instances; those given here are added
     */
    private void admit(RunRecord run, List<Placement> placements, RealTimeResources where, java.util.Set<Integer> takenPorts) {
        Instant now = clock.instant();
        List<InstanceRecord> instances = new ArrayList<>();
        Map<Integer, String[]> groupOfRank = ranks(run);
        Map<String, NodeGroupSpec> groups = run.spec().nodeGroups().stream().collect(Collectors.toMap(NodeGroupSpec::name, g -> g));
        for (Placement placement : placements) {
            String[] group = groupOfRank.get(placement.rank());
            io.slipstream.api.run.Endpoint endpoint;
            try {
                endpoint = executor.endpoint(new InstanceId(run.id(), run.attempt(), placement.rank()), run.workspace(), group[0] + "-" + group[1],
                        placement.node(),
                        groups.get(group[0]).ports(), takenPorts);
            } catch (ExecutorException e) {
                LOG.warn("run {}: no address for rank {} on {}; trying again next cycle: {}", run.id(), placement.rank(), placement.node(),
                        e.getMessage());
                return;
            }
            takenPorts.addAll(endpoint.ports());
            instances.add(InstanceRecord.pending(new InstanceId(run.id(), run.attempt(), placement.rank()), group[0],
                    Integer.parseInt(group[1]), placement.node(), placement.gpus(), endpoint));
        }
        String nodes = placements.stream().map(Placement::node).distinct().sorted().collect(Collectors.joining(", "));
        // Node names stay out of the run's history: a run on idle capacity may not learn whose nodes it borrows.
        long nodeCount = placements.stream().map(Placement::node).distinct().count();
        RunRecord starting = run.admitted(where, "Admitted " + where + " on " + nodeCount + " node(s)", now);
        LOG.info("run {}: QUEUED -> STARTING (admitted to {}, {})", run.id(), nodes, where);
        List<InstanceRecord> stored = store.inTransaction(tx -> {
            RunRecord updated = tx.updateRun(starting);
            tx.appendEvent(RunEvent.of(run.id(), now, "StateChanged", updated.state().name(), updated.reason(), null, null));
            return tx.createInstances(instances);
        });
        RunRecord current = store.getRun(run.id()).orElseThrow();
        reconcile(current, stored);
    }

    private static Map<Integer, String[]> ranks(RunRecord run) {
        Map<Integer, String[]> ranks = new HashMap<>();
        int rank = 0;
        for (NodeGroupSpec group : run.spec().nodeGroups()) {
            for (int i = 0; i < group.replicas(); i++) {
                ranks.put(rank++, new String[] {group.name(), Integer.toString(i)});
            }
        }
        return ranks;
    }

    // --- persistence helpers ---

    /** Persists a run's state change with its event, in one transaction. */
    private RunRecord transition(RunRecord before, RunRecord after) {
        RunRecord stored = store.inTransaction(tx -> {
            RunRecord updated = tx.updateRun(after);
            tx.appendEvent(RunEvent.of(after.id(), clock.instant(), "StateChanged", after.state().name(), after.reason(),
                    before.state() + " -> " + after.state(), null));
            return updated;
        });
        LOG.info("run {}: {} -> {} ({})", after.id(), before.state(), after.state(), after.reason());
        return stored;
    }

    private RunEvent event(InstanceRecord instance, String type, String reason, String message) {
        return store.appendEvent(RunEvent.of(instance.id().runId(), clock.instant(), type, instance.state().name(), reason, message,
                instance.displayName()));
    }

    private RunEvent event(Store tx, InstanceRecord instance, String type, String state, String reason) {
        return tx.appendEvent(RunEvent.of(instance.id().runId(), clock.instant(), type, state, reason,
                instance.exitCode() == null ? null : "exit code " + instance.exitCode(), instance.displayName()));
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
    }
}
