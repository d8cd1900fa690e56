package io.slipstream.server.control;

import io.slipstream.api.run.EndCause;
import io.slipstream.api.run.InstanceState;
import io.slipstream.executor.InstanceReport;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.lifecycle.RunLifecycle;
import java.time.Instant;
import java.util.Optional;

/** What an executor's report makes of an instance, as a pure function: the control loop persists the change with its event. */
final class InstanceReports {
    private InstanceReports() {
    }

    /**
     * An instance's new record and the history entry that says why.
     *
     * @param wakeUp whether other runs' decisions may change at once (a readiness lets the next node group start)
     */
    record Change(InstanceRecord next, RunEvent event, boolean wakeUp) {
    }

    /**
     * @param downReason  why the instance's node was declared down, or {@code null} if it is not
     * @param preemption  how an instance stopped for its run's preemption ends ({@code Preempted}, or with the cause, as
     *                    {@code Preempted: NodeDrain}), or {@code null} if its run is not being preempted
     * @return the change, or empty for a report that changes nothing (duplicate, late: reports arrive at least once)
     */
    static Optional<Change> apply(InstanceRecord instance, InstanceReport report, String downReason, String preemption, Instant now) {
        if (instance.state().isFinal()) {
            return Optional.empty();
        }
        if (report instanceof InstanceReport.Running running) {
            if (io.slipstream.executor.Executor.restartOf(running.handle()) != instance.restarts()) {
                return Optional.empty(); // of another launch of the rank (before it was restarted in place)
            }
            if (instance.state() != InstanceState.PENDING && instance.handle().equals(running.handle())) {
                return Optional.empty();
            }
            InstanceRecord next = instance.running(running.handle(), now);
            // A pending instance reported running was launched before a restart of the server: that is its start.
            return instance.state() == InstanceState.PENDING
                    ? change(next, EventType.InstanceStarted, "Adopted", "running again after a restart of the server", false, now)
                    : Optional.of(new Change(next, null, false));
        }
        if (report instanceof InstanceReport.Exited exited) {
            InstanceRecord next = exited(instance, exited, downReason, preemption, now).measured(exited.usage());
            return change(next, EventType.InstanceExited, next.reason(), exitCode(next), false, now);
        }
        if (report instanceof InstanceReport.Ready) {
            return instance.readyAt() != null ? Optional.empty()
                    : change(instance.ready(now), EventType.InstanceReady, "Ready", "its startup probe passed", true, now);
        }
        if (report instanceof InstanceReport.ProbeFailed failed) {
            return instance.hasFailedProbe() ? Optional.empty()
                    : change(instance.probeFailed(failed.reason()), EventType.InstanceProbeFailed, "StartupProbeFailed", failed.reason(), true, now);
        }
        if (report instanceof InstanceReport.Lost lost) {
            InstanceRecord next = lost.nodeLost()
                    ? instance.finished(InstanceState.NODE_LOST, null, lost.reason(), now)
                    : instance.finished(InstanceState.LOST, null, "Lost: " + lost.reason(), now);
            return change(next, EventType.InstanceLost, next.reason(), exitCode(next), false, now);
        }
        throw new IllegalStateException("a report of a kind this server does not know: " + report);
    }

    private static InstanceRecord exited(InstanceRecord instance, InstanceReport.Exited exited, String downReason, String preemption, Instant now) {
        int code = exited.exitCode();
        if (downReason != null && (exited.terminated() || code != 0)) {
            return instance.finished(InstanceState.NODE_LOST, code, RunLifecycle.nodeLost(instance.node(), downReason), now);
        }
        EndCause cause = exited.cause();
        String stopped = " (exit code " + code + (cause == null ? "" : ", " + cause) + ")"; // an OOM kill in the grace period says so
        if (exited.terminated() && preemption != null) {
            return instance.finished(InstanceState.RESOURCE_PREEMPTED, code, cause, preemption + stopped, now);
        }
        if (exited.terminated()) {
            return instance.finished(InstanceState.KILLED, code, cause, "Terminated" + stopped, now);
        }
        if (code == 0) {
            return instance.finished(InstanceState.SUCCEEDED, 0, "Completed", now);
        }
        if (cause != null) { // the typed cause leads, in the executor's words where it had some
            return instance.finished(InstanceState.FAILED, code, cause, cause.explain(exited.reason()) + " (exit code " + code + ")", now);
        }
        if (exited.reason() != null) {
            return instance.finished(InstanceState.FAILED, code, exited.reason() + " (exit code " + code + ")", now);
        }
        return instance.finished(InstanceState.FAILED, code, "Exited with code " + code, now);
    }

    private static Optional<Change> change(InstanceRecord next, EventType type, String reason, String message, boolean wakeUp, Instant now) {
        return Optional.of(new Change(next, RunEvent.of(next.id().runId(), now, type, next.state().name(), reason, message, next.displayName()),
                wakeUp));
    }

    private static String exitCode(InstanceRecord instance) {
        return instance.exitCode() == null ? null : "exit code " + instance.exitCode();
    }
}
