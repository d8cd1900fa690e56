package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.api.wire.RunView;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.lifecycle.Observation;
import io.slipstream.model.usage.UsageChanges;
import io.slipstream.scheduler.Decision;
import io.slipstream.store.Store;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies one cycle's scheduling decisions, each kind in a method of its own ({@link Decision.Handler}: a new kind
 * fails to compile until it is handled here). Preemptions and promotions are persisted at once; admissions are
 * collected, to be written and launched together ({@link Admissions}); waits become the queue's reasons. A decision
 * whose run changed meanwhile throws {@code ConflictException}, for the caller to decide again.
 */
final class DecisionApplier implements Decision.Handler<Void> {
    private static final Logger LOG = LoggerFactory.getLogger(DecisionApplier.class);

    private final Store store;
    private final Clock clock;
    private final RunStepper stepper;
    private final Supplier<Observation> observation;
    private final Map<RunId, RunRecord> runs;
    private final Map<RunId, List<InstanceRecord>> instances;
    private final Map<RunId, RunView.QueueView> status;
    private final List<Admissions.Request> admissions = new ArrayList<>();
    private final WorldDecisions worlds;

    /**
     * @param runs      the runs the scheduler decided on, by id
     * @param instances their instances, by run
     * @param status    why each queued run waits: the waits decided are added to it
     * @param worlds    records elastic runs' grows and shrinks
     */
    DecisionApplier(Store store, Clock clock, RunStepper stepper, Supplier<Observation> observation, Map<RunId, RunRecord> runs,
                    Map<RunId, List<InstanceRecord>> instances, Map<RunId, RunView.QueueView> status, WorldDecisions worlds) {
        this.worlds = worlds;
        this.store = store;
        this.clock = clock;
        this.stepper = stepper;
        this.observation = observation;
        this.runs = runs;
        this.instances = instances;
        this.status = status;
    }

    /** The admissions decided so far, in the scheduler's order. */
    List<Admissions.Request> admissions() {
        return List.copyOf(admissions);
    }

    @Override
    public Void waiting(Decision.Wait wait) {
        status.put(wait.runId(), new RunView.QueueView(wait.reason().name(), wait.message(), wait.position()));
        return null;
    }

    @Override
    public Void admit(Decision.Admit admit) {
        admissions.add(new Admissions.Request(runs.get(admit.runId()), admit.placements(), admit.realTimeResources(), admit.borrowed()));
        return null;
    }

    @Override
    public Void preempt(Decision.Preempt preempt) {
        RunRecord run = runs.get(preempt.runId());
        // A move (defragmentation) or fair sharing is a preemption like a reclaim: notice, grace period, queued again.
        // None is a failure: RunRecord.preempting counts it in preemptions, never in the restart budget.
        RunRecord preempting = run.preempting(preempt.forRun(), preempt.reason());
        // The victim's reason does not name the run it makes room for (another team's): the operator's log does.
        switch (preempt.kind()) {
            case Reclaim -> LOG.info("run {}: preempted for run {} ({})", run.id(), preempt.forRun(), preempt.reason());
            case Move -> LOG.info("run {}: moved, to start again elsewhere, for run {} that needs a whole node or a large part of one", run.id(),
                    preempt.forRun());
            case FairSharing -> LOG.info("run {}: preempted for fair sharing, for run {} of a quota below its fair share", run.id(), preempt.forRun());
            case Extras -> throw new IllegalStateException("run " + run.id() + ": a run is never stopped whole for extras (Decision.Preempt refuses it)");
        }
        RunSteps steps = stepper.of(run, instances.getOrDefault(run.id(), List.of()));
        steps.transitionTo(preempting);
        steps.take(stepper.lifecycle(), observation.get());
        return null;
    }

    /** An elastic run grows: its new world recorded, the world before told to stop in this cycle (docs/elastic.md). */
    @Override
    public Void grow(Decision.Grow grow) {
        RunRecord run = runs.get(grow.runId());
        worlds.grow(run, instances.getOrDefault(run.id(), List.of()), grow).ifPresent(this::step);
        return null;
    }

    /** An elastic run shrinks instead of stopping whole: the slots removed and the survivors get their notices in this cycle. */
    @Override
    public Void shrink(Decision.Shrink shrink) {
        RunRecord run = runs.get(shrink.runId());
        step(worlds.shrink(run, instances.getOrDefault(run.id(), List.of()), shrink));
        return null;
    }

    private void step(WorldDecisions.Applied applied) {
        stepper.of(applied.run(), applied.instances()).take(stepper.lifecycle(), observation.get());
    }

    @Override
    public Void promote(Decision.Promote promote) {
        RunRecord run = runs.get(promote.runId());
        Instant at = clock.instant();
        store.write(tx -> {
            RunRecord updated = tx.updateRun(run.promoted());
            tx.recordUsage(UsageChanges.between(run, updated, at));
            tx.appendEvent(RunEvent.of(run.id(), at, EventType.Promoted, updated.state().name(), "Promoted",
                    "its quota has room: from now on it is guaranteed (InQuota)", null));
            return updated;
        });
        LOG.info("run {}: promoted to InQuota", run.id());
        return null;
    }
}
