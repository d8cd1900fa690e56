package io.slipstream.server.control;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.ConcurrencyPolicy;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.Kind;
import io.slipstream.store.ConflictException;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunOrigin;
import io.slipstream.store.RunQuery;
import io.slipstream.store.RunRow;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import java.time.Clock;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the runs of scheduled jobs. A due time is recorded (compare-and-set) in the same transaction as the run it
 * starts, so it fires exactly once, also when the server stops at that moment and starts again.
 */
final class Schedules {
    private static final Logger LOG = LoggerFactory.getLogger(Schedules.class);
    private static final EnumSet<RunState> ACTIVE = EnumSet.of(RunState.QUEUED, RunState.STARTING, RunState.RUNNING, RunState.TERMINATING);

    private final Store store;
    private final Clock clock;
    private final RunFactory runFactory;

    Schedules(Store store, Clock clock, RunFactory runFactory) {
        this.store = store;
        this.clock = clock;
        this.runFactory = runFactory;
    }

    /** Fires whatever is due; returns whether a run was started or cancelled. */
    boolean tick() {
        boolean changed = false;
        Instant now = clock.instant();
        for (StoredDocument job : store.documents().list(Kind.Job, null)) {
            JobSpec spec = (JobSpec) job.document().spec();
            if (spec.schedule() == null) {
                continue;
            }
            try {
                changed |= fire(job, spec, now);
            } catch (ConflictException e) {
                LOG.debug("schedule of {} moved meanwhile", job.document().reference());
            } catch (io.slipstream.store.StoreUnavailableException | io.slipstream.store.FencedException e) {
                throw e; // not this one's fault: the whole cycle pauses
            } catch (RuntimeException e) {
                LOG.warn("schedule of {} failed: {}", job.document().reference(), e.toString());
            }
        }
        return changed;
    }

    private boolean fire(StoredDocument job, JobSpec spec, Instant now) {
        String workspace = job.document().workspace();
        String name = job.document().name();
        Instant lastDue = store.runs().lastScheduled(workspace, name).orElse(null);
        SchedulePlan plan = SchedulePlan.at(spec.schedule(), lastDue, job.updatedAt(), now);
        if (plan.lastDue() == null) {
            return false;
        }
        return store.write(tx -> {
            // The job as it is now: changed, suspended or deleted since it was listed, it is planned again next tick.
            var current = tx.documents().get(Kind.Job, workspace, name);
            if (current.isEmpty() || current.get().version() != job.version()) {
                return false;
            }
            tx.recordScheduled(workspace, name, lastDue, plan.lastDue());
            if (plan.fire() == null) {
                if (lastDue != null) {
                    LOG.info("schedule of {}: skipped {} (too late to start)", job.document().reference(), plan.lastDue());
                }
                return false;
            }
            // A run whose record cannot be read is still active for Forbid (Replace cannot cancel it: it is left alone).
            List<RunRow> activeRows = tx.runs().rows(new RunQuery(null, workspace, name, ACTIVE, 1000, null));
            List<RunRecord> active = activeRows.stream().filter(RunRow.Readable.class::isInstance).map(r -> ((RunRow.Readable) r).run()).toList();
            ConcurrencyPolicy policy = spec.schedule().concurrencyPolicy();
            if (!activeRows.isEmpty() && policy == ConcurrencyPolicy.Forbid) {
                LOG.info("schedule of {}: skipped {} (Forbid: run {} is still active)", job.document().reference(), plan.fire(), activeRows.get(0).id());
                return false;
            }
            RunRecord run;
            try {
                run = runFactory.create(tx, job, new RunOrigin(Map.of(), plan.fire(), null));
            } catch (InvalidInputException e) {
                // A shape or quota it names went away: this due time is skipped (and recorded), not retried forever.
                LOG.warn("schedule of {}: cannot start a run for {}: {}", job.document().reference(), plan.fire(), e.getMessage());
                return false;
            }
            if (policy == ConcurrencyPolicy.Replace) {
                for (RunRecord previous : active) {
                    if (previous.cancelRequestedAt() == null) {
                        tx.updateRun(previous.withCancelRequestedAt(now));
                        tx.appendEvent(RunEvent.of(previous.id(), now, EventType.CancelRequested, previous.state().name(), "ReplacedBySchedule",
                                "run " + run.id() + " of the schedule for " + plan.fire() + " replaces it", null));
                    }
                }
            }
            LOG.info("schedule of {}: started run {} for {}", job.document().reference(), run.id(), plan.fire());
            return true;
        });
    }
}
