package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.wire.RunView;
import io.slipstream.executor.Executor;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.model.lifecycle.Observation;
import io.slipstream.scheduler.ClusterSnapshot;
import io.slipstream.scheduler.CycleResult;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.Scheduler;
import io.slipstream.store.ConflictException;
import io.slipstream.store.NodeCondition;
import io.slipstream.store.NodeDown;
import io.slipstream.store.NodeMode;
import io.slipstream.store.Store;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * One cycle of the control loop: record what executors reported, do the housekeeping, take every active run through
 * the steps its lifecycle decides ({@link RunSteps}), then schedule: the scheduler decides over a snapshot built
 * from the store, and {@link DecisionApplier} persists each decision before any executor is told to act. Every
 * executor call is keyed by instance id, so repeating a cycle after a crash is harmless.
 *
 * <p>Runs on the loop's thread only; it wakes the loop (from any thread) when the next cycle should not wait.
 */
final class ControlCycle implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlCycle.class);

    private final Store store;
    private final Executor executor;
    private final Scheduler scheduler;
    private final Clock clock;
    private final ReportIntake reports;
    private final Housekeeping housekeeping;
    private final RunStepper stepper;
    private final Admissions admissions;
    private final SideBySideSteps steps;
    private final Lending lending;
    private final QueueStatus queueStatus;
    private final RepeatedConflicts conflicts;
    private final IdentityRefresh identity;
    private final Runnable wakeUp;
    /** Whether the last cycle left launches for the next (a run's instances past a cycle's budget): it follows at once. */
    private boolean launchesLeft;
    /** Nodes declared down, draining or cordoned, as read at the start of the cycle: nothing new is placed on them. */
    private Map<String, NodeCondition> conditions = Map.of();
    /** Of those, the nodes declared down. */
    private Map<String, NodeDown> downNodes = Map.of();

    ControlCycle(LoopParts parts, ReportIntake reports, RunStepper stepper, IdentityRefresh identity, Runnable wakeUp) {
        this.store = parts.store();
        this.executor = parts.executor();
        this.scheduler = parts.scheduler();
        this.clock = parts.clock();
        this.reports = reports;
        this.stepper = stepper;
        this.housekeeping = new Housekeeping(
                new Schedules(store, clock, new RunFactory(clock, parts.limits(), executor.restartsInPlace())),
                new Retention(store, executor, clock, parts.limits().retention()));
        this.admissions = new Admissions(store, executor, clock, parts.runTokens());
        this.steps = new SideBySideSteps(stepper, parts.parallelLaunches());
        this.lending = new Lending(store);
        this.queueStatus = parts.queueStatus();
        this.conflicts = new RepeatedConflicts(wakeUp);
        this.identity = identity;
        this.wakeUp = wakeUp;
    }

    void run() {
        launchesLeft = false;
        conditions = store.runs().nodeConditions();
        downNodes = new HashMap<>();
        conditions.values().stream().filter(c -> c.mode() == NodeMode.Down).forEach(c -> downNodes.put(c.node(), c.asDown()));
        reports.applyAll(downNodes);
        housekeeping.run(clock.instant());
        Map<RunId, List<InstanceRecord>> instances = instancesByRun();
        Observation seen = observation(); // one moment for every run of the cycle: built once, not per run
        List<SideBySideSteps.Run> stepped = store.runs().active().stream()
                .map(run -> new SideBySideSteps.Run(run, instances.getOrDefault(run.id(), List.of()))).toList();
        SideBySideSteps.Outcome outcome = steps.inOrder(stepped, seen);
        boolean conflicted = !outcome.conflicted().isEmpty();
        boolean deferred = outcome.deferred();
        // Runs and instances changed while the runs stepped (a victim gone marks its owner): read them again.
        List<RunRecord> active = store.runs().active().stream().filter(run -> !run.state().isFinal()).toList();
        Map<RunId, RunRecord> byId = new HashMap<>(active.size() * 4 / 3 + 1); // one map of them a cycle: with 100,000 queued each costs
        active.forEach(run -> byId.put(run.id(), run));
        Map<RunId, List<InstanceRecord>> instancesNow = instancesAfter(instances, outcome, active);
        // Even in a cycle that ends early: one run conflicting every cycle must not keep every run's tokens from renewal.
        identity.refreshDue(active, byId.keySet(), instancesNow, clock.instant());
        if (conflicted) {
            launchesLeft = deferred;
            wakeUp.run(); // without that run the snapshot would show its resources free: schedule next cycle
            return;
        }
        stepper.faultWatch().retainOnly(byId.keySet());
        deferred |= schedule(active, byId, instancesNow);
        launchesLeft = deferred;
        if (deferred) {
            wakeUp.run(); // instances wait for the next cycle's launches: it follows at once
        }
    }

    /** Whether the last cycle left launches for the next, which then follows at once (no rest: {@link ControlLoop}). */
    boolean launchesLeft() {
        return launchesLeft;
    }

    /**
     * The instances after the runs' steps: those of the runs that moved read again, the others' as read before (only
     * a run's own steps change its instances during a cycle, on this thread; executors' reports are recorded at its
     * start). With thousands of runs running, reading every instance twice a cycle was most of the cycle.
     */
    private Map<RunId, List<InstanceRecord>> instancesAfter(Map<RunId, List<InstanceRecord>> before, SideBySideSteps.Outcome stepped,
                                                           List<RunRecord> active) {
        Set<RunId> moved = stepped.moved();
        if (moved.isEmpty()) {
            return before;
        }
        Map<RunId, RunRecord> movedNow = new HashMap<>();
        active.stream().filter(run -> moved.contains(run.id())).forEach(run -> movedNow.put(run.id(), run));
        Map<RunId, List<InstanceRecord>> after = new LinkedHashMap<>(before);
        Map<RunId, List<InstanceRecord>> read = store.runs().currentInstancesOf(
                movedNow.values().stream().filter(run -> run.state().holdsResources()).toList()); // in one go, not a read a run
        for (RunId id : moved) {
            RunRecord run = movedNow.get(id);
            if (run == null && !stepped.ended().contains(id)) {
                continue; // its record cannot be read now: what it held as read stays held (its nodes closed to others)
            }
            List<InstanceRecord> now = read.getOrDefault(id, List.of());
            if (now.isEmpty()) {
                after.remove(id);
            } else {
                after.put(id, now); // in place: the runs stay in the order they were read
            }
        }
        return after;
    }

    private Map<RunId, List<InstanceRecord>> instancesByRun() {
        return store.runs().instancesOfActiveRuns().stream()
                .collect(Collectors.groupingBy(i -> i.id().runId(), LinkedHashMap::new, Collectors.toList()));
    }

    /** What every decision of this moment sees: the time, the nodes down or draining, the instances not heard of since the start. */
    private Observation observation() {
        Instant now = clock.instant();
        Map<String, String> down = new HashMap<>();
        Map<String, String> draining = new HashMap<>();
        conditions.values().forEach(c -> {
            switch (c.mode()) {
                case Down -> down.put(c.node(), c.reason());
                case Draining -> draining.put(c.node(), c.reason());
                case Cordoned -> { } // what runs there keeps running
            }
        });
        return new Observation(now, down, draining, reports.unconfirmed(now), null, Map.of());
    }

    /** Applies the scheduler's decisions; returns whether launches were left for the next cycle. */
    private boolean schedule(List<RunRecord> runs, Map<RunId, RunRecord> byId, Map<RunId, List<InstanceRecord>> instances) {
        Instant now = clock.instant();
        if (runs.isEmpty()) {
            queueStatus.replace(Map.of());
            lending.record(null, now);
            return false; // nothing to place, nothing to promote
        }
        BackoffGate gate = BackoffGate.of(runs, now);
        Set<String> closed = new HashSet<>(conditions.keySet()); // down, draining or cordoned
        closed.addAll(UnreadableRuns.heldNodes(instances, byId.keySet()));
        ClusterTopology topology = ClusterTopology.read(store);
        List<io.slipstream.executor.NodeInfo> nodes = executor.nodes();
        stepper.launcher().useTopology(topology, nodes);
        ClusterSnapshot snapshot = SnapshotBuilder.build(nodes, closed, store.documents().list(Kind.Quota, null), gate.ready(),
                instances, reclaimedOwners(runs, instances), topology);
        lending.record(snapshot, now);
        CycleResult result = scheduler.schedule(snapshot, now);
        PortsInUse ports = PortsInUse.of(executor, byId, instances); // as they were before any decision
        Map<RunId, RunView.QueueView> status = new HashMap<>(runs.size() * 4 / 3 + 1); // taken over by queueStatus, never copied
        status.putAll(gate.backingOff());
        DecisionApplier applier = new DecisionApplier(store, clock, stepper, this::observation, byId, instances, status,
                new WorldDecisions(store, executor, clock, ports));
        conflicts.begin();
        for (Decision decision : result.decisions()) {
            if (decision instanceof Decision.Wait wait) {
                applier.waiting(wait); // a reason in a map, nothing logged: no run in the log's context (most of a long queue's decisions)
                continue;
            }
            try (var ignored = MDC.putCloseable("run", decision.runId().value())) {
                decision.accept(applier);
            } catch (ConflictException e) {
                conflicts.conflicted(decision.runId(), decision.getClass().getSimpleName().toLowerCase(Locale.ROOT), e.getMessage());
            } catch (RuntimeException e) {
                if (SideBySideSteps.concernsAll(e)) {
                    throw e; // the store down or damaged, this server fenced: the loop handles it as for any other write
                }
                // One decision that cannot be applied (a bug, one run's bad data) never keeps the others from theirs.
                LOG.error("run {}: {} not applied: {}", decision.runId(), decision.getClass().getSimpleName(), e.toString(), e);
            }
        }
        Admissions.Outcome outcome = admissions.admit(applier.admissions(), ports);
        Set<RunId> refused = new HashSet<>(outcome.conflicted());
        // Just-admitted runs launch what may start at once, not a cycle later.
        SideBySideSteps.Outcome launched = steps.sideBySide(outcome.admitted().stream()
                .map(admitted -> new SideBySideSteps.Run(admitted.run(), admitted.instances())).toList(), observation());
        refused.addAll(launched.conflicted());
        boolean deferred = launched.deferred();
        refused.forEach(id -> conflicts.conflicted(id, "admission", "the run changed meanwhile"));
        conflicts.endCycle();
        queueStatus.replace(status);
        return deferred;
    }

    /**
     * Queued runs whose victims are gone: the capacity those gave back is theirs, so the scheduler places them first. An
     * elastic run's slots a shrink removed are such victims as soon as each is gone, while its survivors still save (the
     * run they were removed for is marked so in the store only once the new world starts).
     */
    private static Set<RunId> reclaimedOwners(List<RunRecord> runs, Map<RunId, List<InstanceRecord>> instances) {
        Set<RunId> owners = runs.stream().filter(r -> r.state() == RunState.QUEUED && r.capacityReclaimed()).map(RunRecord::id)
                .collect(Collectors.toCollection(HashSet::new));
        for (RunRecord run : runs) {
            ElasticWorld world = run.world();
            if (world == null || !world.changing() || world.leaving().isEmpty()) {
                continue;
            }
            for (InstanceRecord instance : instances.getOrDefault(run.id(), List.of())) {
                ElasticWorld.Leaving leaving = world.leavingOf(instance.id().rank());
                if (leaving != null && leaving.forRun() != null && instance.state().isFinal()) {
                    owners.add(leaving.forRun()); // only a queued run is ever looked up in it
                }
            }
        }
        return owners;
    }

    @Override
    public void close() {
        steps.close();
    }
}
