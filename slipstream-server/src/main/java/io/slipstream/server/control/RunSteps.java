package io.slipstream.server.control;

import io.slipstream.model.usage.UsageChanges;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunState;
import io.slipstream.executor.Executor;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.lifecycle.InstanceActivity;
import io.slipstream.model.lifecycle.Observation;
import io.slipstream.model.lifecycle.RunLifecycle;
import io.slipstream.model.lifecycle.Step;
import io.slipstream.model.lifecycle.WorkLost;
import io.slipstream.store.Store;
import io.slipstream.store.StoreTx;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes one run through the steps its lifecycle decides, in one cycle: observe what the decision needs, decide,
 * persist what the step carries, then act (launch, stop), and decide again until the run stays. Each step is
 * persisted before the executor is told to act, except that a stop is recorded as sent only once it was: sending
 * it twice is harmless, never sending it would strand the run. Launches are recorded with the step that follows them
 * (a run's STARTING -> RUNNING with its instances' launches: one transaction, not two), or on their own before a step
 * that writes instances (decided again on them as stored), when the run's steps end, and when anything fails.
 */
final class RunSteps implements Step.Handler<Boolean> {
    private static final Logger LOG = LoggerFactory.getLogger(RunSteps.class);
    /**
     * A bound, never reached by a run that behaves: each step changes something, and few follow one another, but
     * an InOrder run without probes launches each of its node groups (up to 64) in a step of its own.
     */
    static final int MAX_STEPS = 128;

    private final Store store;
    private final Executor executor;
    private final Launcher launcher;
    private final FaultWatch faultWatch;
    private final Clock clock;
    private RunRecord run;
    private List<InstanceRecord> instances;
    /** Looked at once per cycle at most: each look costs I/O. */
    private Map<InstanceId, InstanceActivity> activities;
    private int launchesLeft = Launcher.LAUNCHES_PER_CYCLE;
    private boolean deferred;
    /** Whether a step other than staying was decided: what the run's instances are may have changed. */
    private boolean moved;
    /** Launched (or failed to start) and not yet recorded: {@link #instances} has them as they are now. */
    private final List<InstanceRecord> unrecorded = new ArrayList<>();

    RunSteps(Store store, Executor executor, Launcher launcher, FaultWatch faultWatch, Clock clock, RunRecord run, List<InstanceRecord> instances) {
        this.store = store;
        this.executor = executor;
        this.launcher = launcher;
        this.faultWatch = faultWatch;
        this.clock = clock;
        this.run = run;
        this.instances = instances;
    }

    /** Steps the run until it stays; returns it as stored afterwards. {@code seen} is the cycle's observation. */
    RunRecord take(RunLifecycle lifecycle, Observation seen) {
        try {
            for (int i = 0; i < MAX_STEPS && !run.state().isFinal(); i++) {
                Step step = lifecycle.next(run, instances, observe(seen));
                moved |= !(step instanceof Step.Stay);
                if (!unrecorded.isEmpty() && !takesUnrecordedLaunches(step)) {
                    // The step carries instances as decided on before their launches were stored (a stop, a restart):
                    // written as they are, they would conflict with what the launches' records moved on. Decide again.
                    recordLaunches();
                    step = lifecycle.next(run, instances, observe(seen));
                }
                if (!step.accept(this)) {
                    recordLaunches();
                    return run;
                }
            }
            recordLaunches();
        } catch (RuntimeException | Error e) {
            try {
                recordLaunches(); // whatever went wrong after them, what was launched is recorded
            } catch (RuntimeException notRecorded) {
                e.addSuppressed(notRecorded);
            }
            throw e;
        }
        if (!run.state().isFinal()) {
            LOG.warn("run {}: still changing after {} steps; going on next cycle", run.id(), MAX_STEPS);
            deferred = true;
        }
        return run;
    }

    /**
     * Whether a step may be taken while launches are not recorded yet: it writes no instance (a transition records
     * them in its own transaction), or launches more. Any other step, and any step added later, has them recorded first.
     */
    private static boolean takesUnrecordedLaunches(Step step) {
        return step instanceof Step.Stay || step instanceof Step.Transition || step instanceof Step.Launch || step instanceof Step.Requeue
                || step instanceof Step.End;
    }

    /** Records the launches not recorded yet, in a transaction of their own. */
    private void recordLaunches() {
        if (unrecorded.isEmpty()) {
            return;
        }
        List<InstanceRecord> stored = launcher.record(List.copyOf(unrecorded));
        unrecorded.clear(); // only once stored: a failed write leaves them to be tried again (take's catch)
        stored.forEach(this::replace);
    }

    /** Moves the run as the scheduler decided (a preemption), before its lifecycle takes it on. */
    void transitionTo(RunRecord next) {
        run = transition(next, null);
    }

    /** Whether any step but staying was decided (its records may have changed); {@code false}: the run stayed as read. */
    boolean moved() {
        return moved;
    }

    /** Whether the run has more to do that this cycle left for the next one (launches past the budget). */
    boolean deferred() {
        return deferred;
    }

    private Observation observe(Observation seen) {
        RunLifecycle.Wants wants = RunLifecycle.wants(run, instances);
        Observation observed = seen;
        if (wants.activities()) {
            if (activities == null && (wants.activitiesNow() || faultWatch.due(run, seen.now()))) {
                activities = faultWatch.activities(instances);
            }
            observed = activities == null ? observed : observed.withActivities(activities);
        }
        if (wants.logsOf() != null) {
            observed = observed.withLogLines(wants.logsOf().id(), faultWatch.lastLines(wants.logsOf()));
        }
        return observed;
    }

    @Override
    public Boolean stay(Step.Stay step) {
        return false;
    }

    @Override
    public Boolean transition(Step.Transition step) {
        run = transition(step.next(), null);
        return true;
    }

    @Override
    public Boolean recordProgress(Step.RecordProgress step) {
        run = store.write(tx -> tx.updateRun(step.next()));
        return true;
    }

    @Override
    public Boolean terminate(Step.Terminate step) {
        boolean changed = !step.next().equals(run);
        if (changed) {
            run = transition(step.next(), null);
        }
        if (!step.stops().isEmpty()) {
            stop(step.stops());
            return true;
        }
        return changed;
    }

    @Override
    public Boolean loseInstances(Step.LoseInstances step) {
        store.commit(tx -> {
            for (InstanceRecord lost : step.lost()) {
                replace(tx.updateInstance(lost));
                tx.appendEvent(instanceEvent(EventType.InstanceLost, lost));
            }
        });
        return true;
    }

    @Override
    public Boolean launch(Step.Launch step) {
        if (launchesLeft == 0) {
            deferred = true;
            return false;
        }
        Launcher.Launched launched = launcher.launch(run, instances, step.instances(), launchesLeft);
        instances = launched.instances();
        unrecorded.addAll(launched.unrecorded());
        launchesLeft -= launched.count();
        deferred |= launched.count() < step.instances().size();
        // Instances that cannot start yet (an image being pulled) are tried again at the next tick, not at once.
        return launched.changed();
    }

    /** Records the restart (the rank pending again, the run's count, the event) in one transaction; the next step launches it. */
    @Override
    public Boolean restartInstance(Step.RestartInstance step) {
        Instant now = clock.instant();
        RunRecord before = run;
        run = store.write(tx -> {
            replace(tx.updateInstance(step.instance()));
            tx.appendEvent(RunEvent.of(before.id(), now, EventType.InstanceRestarted, step.instance().state().name(), "RestartedInPlace",
                    step.message(), step.instance().displayName()));
            return tx.updateRun(step.next());
        });
        LOG.info("run {}: {}", run.id(), step.message());
        return true;
    }

    /**
     * Records the start of an elastic run's new world (its members pending again in place, the run's world no longer
     * changing, the event) in one transaction; the next steps launch the members. What the slots removed held now goes
     * to the runs they were removed for.
     */
    @Override
    public Boolean changeWorld(Step.ChangeWorld step) {
        Instant now = clock.instant();
        RunRecord before = run;
        run = store.write(tx -> {
            step.restarted().forEach(restarted -> replace(tx.updateInstance(restarted)));
            tx.appendEvent(RunEvent.of(before.id(), now, EventType.WorldChanged, before.state().name(), "WorldStarted", step.message(), null));
            for (ElasticWorld.Leaving leaving : before.world().leaving()) {
                if (leaving.forRun() != null) {
                    tx.runs().get(leaving.forRun()).filter(owner -> owner.state() == RunState.QUEUED && !owner.capacityReclaimed())
                            .ifPresent(owner -> tx.updateRun(owner.withCapacityReclaimed()));
                }
            }
            RunRecord updated = tx.updateRun(step.next());
            tx.recordUsage(UsageChanges.between(before, updated, now));
            return updated;
        });
        LOG.info("run {}: {}", run.id(), step.message());
        return true;
    }

    @Override
    public Boolean requeue(Step.Requeue step) {
        run = transition(step.next(), step.workLost());
        return true;
    }

    @Override
    public Boolean end(Step.End step) {
        run = transition(step.next(), step.workLost());
        faultWatch.forget(run);
        return false;
    }

    /**
     * Tells each instance to stop and records, as soon as it was told, that it was (if a later one cannot be told,
     * those told are not told again); one the executor never heard of never started.
     */
    private void stop(List<Step.Stop> stops) {
        Instant now = clock.instant();
        store.awaitDurable(); // the run's step that decided the stops (its TERMINATING, a world's change) first
        for (Step.Stop stop : stops) {
            InstanceRecord instance = stop.instance();
            if (instance.state() == InstanceState.PENDING) {
                // A rank restarted in place and not yet launched again: what the executor finds is its ended process.
                int restarts = instance.restarts();
                Optional<Map<String, String>> handle = executor.find(instance.id()).filter(found -> Executor.restartOf(found) == restarts);
                if (handle.isEmpty()) {
                    InstanceRecord killed = instance.finished(InstanceState.KILLED, null, "Never started", now);
                    store.commit(tx -> {
                        replace(tx.updateInstance(killed));
                        tx.appendEvent(instanceEvent(EventType.InstanceExited, killed));
                    });
                    continue;
                }
                InstanceRecord running = instance.running(handle.get(), now);
                instance = store.write(tx -> tx.updateInstance(running));
                replace(instance);
            }
            executor.terminate(instance.id(), instance.handle(), stop.grace(), stop.reason());
            InstanceRecord told = instance.stopRequested(now);
            replace(store.write(tx -> tx.updateInstance(told)));
        }
    }

    private void replace(InstanceRecord updated) {
        List<InstanceRecord> next = new ArrayList<>(instances.size());
        for (InstanceRecord instance : instances) {
            next.add(instance.id().equals(updated.id()) ? updated : instance);
        }
        instances = next;
    }

    /** A run's change as stored, with the launches recorded in its transaction. */
    private record Transitioned(RunRecord run, List<InstanceRecord> launches) {
    }

    /**
     * Persists the run's change with its events (the work its attempt lost, if counted) and the launches not recorded
     * yet in one transaction; if that fails, the launches are still to be recorded (on their own, by {@link #take}).
     */
    private RunRecord transition(RunRecord after, WorkLost lost) {
        RunRecord before = run;
        Instant now = clock.instant();
        List<InstanceRecord> launches = List.copyOf(unrecorded);
        Transitioned stored = store.write(tx -> {
            List<InstanceRecord> recorded = launcher.record(tx, launches, now); // their events before the run's
            return new Transitioned(transition(tx, before, after, lost, now), recorded);
        });
        unrecorded.clear();
        stored.launches().forEach(this::replace);
        LOG.info("run {}: {} -> {} ({})", after.id(), before.state(), after.state(), after.reason());
        return stored.run();
    }

    private static RunRecord transition(StoreTx tx, RunRecord before, RunRecord after, WorkLost lost, Instant now) {
        RunRecord updated = tx.updateRun(after);
        tx.recordUsage(UsageChanges.between(before, updated, now));
        if (lost != null) {
            tx.appendEvent(RunEvent.of(after.id(), now, EventType.WorkLost, before.state().name(), "AttemptStopped", lost.message(), null));
        }
        tx.appendEvent(RunEvent.of(after.id(), now, EventType.StateChanged, after.state().name(), after.reason(),
                before.state() + " -> " + after.state(), null));
        if (before.reclaimFor() != null && after.state() != RunState.TERMINATING) {
            // Preempted for another run and now gone: what it held is that run's.
            tx.runs().get(before.reclaimFor()).filter(owner -> owner.state() == RunState.QUEUED && !owner.capacityReclaimed())
                    .ifPresent(owner -> tx.updateRun(owner.withCapacityReclaimed()));
        }
        return updated;
    }

    private RunEvent instanceEvent(EventType type, InstanceRecord instance) {
        return RunEvent.of(instance.id().runId(), clock.instant(), type, instance.state().name(), instance.reason(),
                instance.exitCode() == null ? null : "exit code " + instance.exitCode(), instance.displayName());
    }
}
