package io.slipstream.server.metrics;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.model.FaultState;
import io.slipstream.model.RunRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What one write of a run did, for the metrics: the difference between the run as this replica last knew it and
 * as it was written. Pure: the applier ({@link RunMetrics}) keeps the marks and records the changes.
 */
final class RunChanges {
    private RunChanges() {
    }

    /**
     * What the metrics remember of a run between writes, at the stored {@code version} it was seen at.
     * {@code queuedSince}: when its current wait began, if known.
     */
    record Mark(long version, int attempt, RunState state, FaultState.RestartCause restarting, int failures, int nodeLost, int hangs,
                int preemptions, long workLostMillis, Instant queuedSince) {
        static Mark of(RunRecord run, Instant queuedSince) {
            FaultState faults = run.faults();
            return new Mark(run.version(), run.attempt(), run.state(), faults.restarting(), faults.failures(), faults.nodeLost(), faults.hangs(),
                    faults.preemptions(), faults.workLostMillis(), run.state() == RunState.QUEUED ? queuedSince : null);
        }

        /** A run first seen by reading it: its first attempt waits since its creation; a later one since a moment not known. */
        static Mark read(RunRecord run) {
            return of(run, run.attempt() <= 1 ? run.createdAt() : null);
        }
    }

    /**
     * The mark after reading {@code run} (remembered as {@code before}, if at all): a newer version was written by
     * someone else (another replica), so it replaces the mark uncounted; the wait of an attempt still queued keeps
     * its start.
     */
    static Mark seen(Mark before, RunRecord run) {
        if (before == null) {
            return Mark.read(run);
        }
        if (run.version() <= before.version()) {
            return before;
        }
        boolean sameWait = before.state() == RunState.QUEUED && run.state() == RunState.QUEUED && before.attempt() == run.attempt();
        return sameWait ? Mark.of(run, before.queuedSince()) : Mark.read(run);
    }

    /** One thing a write did. Closed: the applier handles each. */
    sealed interface Change {
        QuotaId quota();
    }

    /** Admitted after waiting {@code waited} ({@code null}: since when is not known). */
    record Admitted(QuotaId quota, RealTimeResources resources, Duration waited) implements Change {
    }

    /** Told to give its resources back; {@code owner}: the run they go to, if any. */
    record Preempted(QuotaId quota, RunId owner) implements Change {
    }

    record Restarted(QuotaId quota, FaultState.RestartCause cause) implements Change {
    }

    record WorkLost(QuotaId quota, Duration lost) implements Change {
    }

    record Finished(QuotaId quota, RunState state) implements Change {
    }

    /**
     * The changes from {@code before} (the run as last known; {@code null}: not known, so nothing is counted) to
     * {@code after}, written at {@code now}; and the mark to keep. A write more than one version past the mark comes
     * after writes this replica did not see (another replica's): the difference is not all this write's, so it
     * counts nothing but the run's end (a final state is written once).
     */
    static Result between(Mark before, RunRecord after, Instant now) {
        if (before != null && after.version() > before.version() + 1) {
            // Only the end is this write's for sure: a final state is written once, by whoever ends the run.
            List<Change> ended = after.state().isFinal() && !before.state().isFinal() ? List.of(new Finished(after.quotaId(), after.state())) : List.of();
            return new Result(ended, seen(before, after));
        }
        Instant queuedSince = after.state() != RunState.QUEUED ? null
                : before != null && before.state() == RunState.QUEUED ? before.queuedSince()
                : before != null ? now : after.attempt() <= 1 ? after.createdAt() : null;
        Mark mark = Mark.of(after, queuedSince);
        if (before == null) {
            return new Result(List.of(), mark);
        }
        QuotaId quota = after.quotaId();
        List<Change> changes = new ArrayList<>();
        if (before.state() == RunState.QUEUED && after.state() != RunState.QUEUED && after.state().holdsResources()) {
            changes.add(new Admitted(quota, after.realTimeResources() == null ? RealTimeResources.NotInQuota : after.realTimeResources(),
                    before.queuedSince() == null ? null : Duration.between(before.queuedSince(), now)));
        }
        FaultState faults = after.faults();
        if (faults.restarting() == FaultState.RestartCause.PREEMPTION && before.restarting() != FaultState.RestartCause.PREEMPTION) {
            changes.add(new Preempted(quota, after.reclaimFor()));
        }
        repeat(changes, faults.failures() - before.failures(), new Restarted(quota, FaultState.RestartCause.FAILURE));
        repeat(changes, faults.nodeLost() - before.nodeLost(), new Restarted(quota, FaultState.RestartCause.NODE_LOST));
        repeat(changes, faults.hangs() - before.hangs(), new Restarted(quota, FaultState.RestartCause.HANG));
        repeat(changes, faults.preemptions() - before.preemptions(), new Restarted(quota, FaultState.RestartCause.PREEMPTION));
        if (faults.workLostMillis() > before.workLostMillis()) {
            changes.add(new WorkLost(quota, Duration.ofMillis(faults.workLostMillis() - before.workLostMillis())));
        }
        if (after.state().isFinal() && !before.state().isFinal()) {
            changes.add(new Finished(quota, after.state()));
        }
        return new Result(changes, mark);
    }

    private static void repeat(List<Change> changes, int times, Change change) {
        for (int i = 0; i < times; i++) {
            changes.add(change);
        }
    }

    record Result(List<Change> changes, Mark mark) {
    }
}
