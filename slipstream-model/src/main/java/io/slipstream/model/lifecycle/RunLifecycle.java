package io.slipstream.model.lifecycle;

import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.StartupOrder;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.FaultState;
import io.slipstream.model.FaultState.RestartCause;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The life of a run from admission to its end, as a pure function: a run, its current attempt's instances and what
 * was {@link Observation observed} in, the next {@link Step} out. It never reads the clock or the store and never
 * calls an executor, so that every rule here is a row in a table test.
 *
 * <p>The order of the checks of a started run is the order of precedence: a cancel, then a failed instance (judged by
 * {@link RestartRules}), a failed startup probe, a timeout, a drain of its node, a hang, then launching what may start,
 * then success.
 */
public final class RunLifecycle {
    /** How long after a first failure the peers' failures are awaited before judging (see {@link #settling}). */
    public static final Duration SETTLE = Duration.ofSeconds(1);
    /** The word that begins the reason of a run moved off a node being drained ({@link #nodeDrain}). */
    public static final String NODE_DRAIN = "NodeDrain";

    private final LifecycleLimits limits;

    public RunLifecycle(LifecycleLimits limits) {
        this.limits = limits;
    }

    /** What the next decision about the run needs that only an executor can tell: reading it costs I/O, so only then. */
    public record Wants(boolean activities, boolean activitiesNow, InstanceRecord logsOf) {
        static final Wants NOTHING = new Wants(false, false, null);
    }

    /**
     * What {@link #next} will look at: the instances' activity (a started run's, as often as the loop samples it; a
     * stopped attempt's at once, {@code activitiesNow}, to account for the work it lost) and the log of the failure
     * that a retry pattern will judge.
     */
    public static Wants wants(RunRecord run, List<InstanceRecord> instances) {
        if (run.state() == RunState.TERMINATING) {
            boolean accounts = instances.stream().allMatch(i -> i.state().isFinal()) && countsWorkLost(run.outcome());
            return accounts ? new Wants(true, true, null) : Wants.NOTHING;
        }
        if (!run.state().holdsResources() || run.cancelRequestedAt() != null) {
            return Wants.NOTHING;
        }
        if (run.world() != null && run.world().changing()) {
            List<InstanceRecord> failed = WorldChanges.failedMembers(run, instances);
            boolean judged = !failed.isEmpty() && !run.spec().faultTolerance().retryPatterns().isEmpty();
            return judged ? new Wants(false, false, rootCause(failed)) : Wants.NOTHING;
        }
        instances = WorldChanges.current(run, instances);
        List<InstanceRecord> failed = failed(instances);
        InstanceRecord logsOf = !failed.isEmpty() && !run.spec().faultTolerance().retryPatterns().isEmpty() ? rootCause(failed) : null;
        return new Wants(failed.isEmpty(), false, logsOf);
    }

    public Step next(RunRecord run, List<InstanceRecord> instances, Observation seen) {
        if (run.state().holdsResources() && !seen.downNodes().isEmpty()) {
            Optional<Step> lost = onDownNodes(run, instances, seen);
            if (lost.isPresent()) {
                return lost.get();
            }
        }
        return switch (run.state()) {
            case QUEUED -> run.cancelRequestedAt() != null
                    ? new Step.Transition(run.moveTo(RunState.CANCELLED, "Cancelled before it started", seen.now()))
                    : new Step.Stay();
            case STARTING, RUNNING -> started(run, instances, seen);
            case TERMINATING -> terminating(run, instances, seen);
            case SUCCEEDED, FAILED, CANCELLED, TIMED_OUT -> new Step.Stay();
        };
    }

    /**
     * On a real cluster a node declared down is gone with its processes; here they are killed at once so that
     * nothing of the run goes on there. What was never launched there is lost without asking anyone.
     */
    private static Optional<Step> onDownNodes(RunRecord run, List<InstanceRecord> instances, Observation seen) {
        List<InstanceRecord> lost = new ArrayList<>();
        List<Step.Stop> stops = new ArrayList<>();
        for (InstanceRecord instance : instances) {
            String why = seen.downNodes().get(instance.node());
            if (why == null || instance.state().isFinal() || instance.stopRequestedAt() != null) {
                continue;
            }
            String reason = nodeLost(instance.node(), why);
            if (instance.handle().isEmpty()) {
                lost.add(instance.finished(InstanceState.NODE_LOST, null, reason, seen.now()));
            } else {
                stops.add(new Step.Stop(instance, Duration.ZERO, reason));
            }
        }
        if (!lost.isEmpty()) {
            return Optional.of(new Step.LoseInstances(lost));
        }
        return stops.isEmpty() ? Optional.empty() : Optional.of(new Step.Terminate(run, stops));
    }

    /** How an instance on a down node ends. */
    public static String nodeLost(String node, String why) {
        return "NodeLost: node " + node + " is down" + (why == null || why.isEmpty() ? "" : " (" + why + ")");
    }

    /** Why the run is moved off a node being drained (the first of its live instances there), or {@code null}. */
    private static String drained(List<InstanceRecord> instances, Observation seen) {
        if (seen.drainingNodes().isEmpty()) {
            return null;
        }
        for (InstanceRecord instance : instances) {
            String why = seen.drainingNodes().get(instance.node());
            if (why != null && !instance.state().isFinal()) {
                return nodeDrain(instance.node(), why);
            }
        }
        return null;
    }

    /** Why a run is moved off a node being drained (its reason once queued again: {@code Preempted: NodeDrain: ...}). */
    public static String nodeDrain(String node, String why) {
        return NODE_DRAIN + ": node " + node + " is drained" + (why == null || why.isEmpty() ? "" : " (" + why + ")");
    }

    private Step started(RunRecord run, List<InstanceRecord> instances, Observation seen) {
        Instant now = seen.now();
        if (run.cancelRequestedAt() != null) {
            return terminate(run.terminating(RunState.CANCELLED, "CancelRequested"), instances);
        }
        if (run.world() != null) {
            if (run.world().changing()) {
                List<InstanceRecord> failedMembers = WorldChanges.failedMembers(run, instances);
                if (!failedMembers.isEmpty()) { // judged at once: its peers were told to stop, their ends are no symptom
                    InstanceRecord root = rootCause(failedMembers);
                    return fault(run, instances, faultOf(root, seen.logLines().getOrDefault(root.id(), List.of())));
                }
                return WorldChanges.next(run, instances, changeGrace(run));
            }
            instances = WorldChanges.current(run, instances); // the slots a shrink removed are history
        }
        List<InstanceRecord> failed = failed(instances);
        if (!failed.isEmpty()) {
            if (settling(run, instances, failed, now)) {
                return new Step.Stay(); // a later decision judges, with the peers' failures in
            }
            InstanceRecord root = rootCause(failed);
            RestartRules.Fault fault = faultOf(root, seen.logLines().getOrDefault(root.id(), List.of()));
            if (run.spec().faultTolerance().runType() == FaultTolerance.RunType.Async && fault instanceof RestartRules.InstanceFailed failure) {
                return inPlace(run, instances, root, failure, now);
            }
            return fault(run, instances, fault);
        }
        Optional<InstanceRecord> unready = instances.stream().filter(InstanceRecord::hasFailedProbe).findFirst();
        if (unready.isPresent()) {
            InstanceRecord first = unready.get();
            String why = "StartupProbeFailed: " + first.displayName() + " (" + first.probeFailure() + ")";
            return terminate(run.terminating(RunState.FAILED, why), instances);
        }
        // Checked after success and failure: a run whose instances succeeded has its own outcome, however late.
        String timeout = enoughSucceeded(run, instances) ? null : timeout(run, instances, seen);
        if (timeout != null) {
            return terminate(run.terminating(RunState.TIMED_OUT, timeout), instances);
        }
        String drained = enoughSucceeded(run, instances) ? null : drained(instances, seen);
        if (drained != null) {
            // A drain moves the run as a reclaim does: notice, grace period, queued again; a preemption, never a failure.
            return terminate(run.preempting(null, drained), instances);
        }
        if (seen.activities() != null) {
            FaultState progressed = Liveness.progress(run.faults(), instances, seen.activities());
            if (!progressed.equals(run.faults())) {
                return new Step.RecordProgress(run.withFaults(progressed));
            }
            String hang = Liveness.hung(run, instances, seen.activities(), now);
            if (hang != null) {
                return fault(run, instances, new RestartRules.Hung(hang));
            }
        }
        List<InstanceRecord> startable = startable(run, instances, now);
        if (!startable.isEmpty()) {
            return new Step.Launch(startable);
        }
        if (enoughSucceeded(run, instances)) {
            if (instances.stream().allMatch(i -> i.state().isFinal())) {
                RunRecord running = run.state() == RunState.STARTING ? run.moveTo(RunState.RUNNING, "AllInstancesRunning", now) : run;
                return new Step.Transition(running.moveTo(RunState.SUCCEEDED, "AllInstancesSucceeded", now));
            }
            // Every group has the successes it needs (minSuccessReplicas): the rest is stopped, and the run succeeds.
            return terminate(run.terminating(RunState.SUCCEEDED, "MinSuccessReplicasReached"), instances);
        }
        if (run.state() == RunState.STARTING && instances.stream().noneMatch(i -> i.state() == InstanceState.PENDING)) {
            return new Step.Transition(run.moveTo(RunState.RUNNING, "AllInstancesRunning", now));
        }
        return new Step.Stay();
    }

    private Step terminating(RunRecord run, List<InstanceRecord> instances, Observation seen) {
        if (run.cancelRequestedAt() != null && run.outcome() == RunState.QUEUED) {
            return terminate(run.terminating(RunState.CANCELLED, "CancelRequested"), instances);
        }
        Step.Terminate stopping = terminate(run, instances);
        if (!stopping.stops().isEmpty()) {
            return stopping;
        }
        if (instances.stream().anyMatch(i -> !i.state().isFinal())) {
            return new Step.Stay(); // told to stop: waiting for each to be confirmed gone
        }
        Instant now = seen.now();
        WorkLost lost = null;
        if (countsWorkLost(run.outcome())) {
            List<InstanceRecord> current = WorldChanges.current(run, instances); // not the slots a shrink removed before
            FaultState progressed = seen.activities() == null ? run.faults() : Liveness.progress(run.faults(), current, seen.activities());
            long millis = Liveness.workLostMillis(progressed, current, now);
            lost = new WorkLost(run.attempt(), millis, progressed.checkpointStep());
            run = run.withFaults(progressed.lost(millis));
        }
        if (run.outcome() == RunState.QUEUED) {
            return requeue(run, lost, now);
        }
        String why = switch (run.outcome()) {
            case CANCELLED -> "Cancelled: every instance stopped";
            case SUCCEEDED -> "MinSuccessReplicasReached: every node group has the successes it needs";
            default -> run.reason();
        };
        return new Step.End(run.moveTo(run.outcome(), why, now), lost);
    }

    /** A stopped run is queued again for its next attempt, after the backoff its cause calls for; or fails when out of budget. */
    private static Step requeue(RunRecord run, WorkLost lost, Instant now) {
        FaultTolerance policy = run.spec().faultTolerance();
        RestartCause cause = run.restartCause();
        if (cause == RestartCause.PREEMPTION) {
            String exhausted = RestartRules.preemptionBudgetExhausted(policy, run.preemptions(), run.reason());
            if (exhausted != null) {
                return new Step.End(run.moveTo(RunState.FAILED, exhausted, now), lost);
            }
        }
        Duration backoff = RestartRules.backoff(policy, run.faults(), cause);
        String why = (cause == RestartCause.PREEMPTION ? "Preempted: " : "Restarted: ") + run.reason();
        return new Step.Requeue(run.requeued(why, now, backoff.isZero() ? null : now.plus(backoff)), lost);
    }

    private static boolean countsWorkLost(RunState outcome) {
        return outcome == RunState.QUEUED || outcome == RunState.FAILED || outcome == RunState.TIMED_OUT;
    }

    /** The run moves to (or stays) {@code next}, and every live instance not yet told to stop is. */
    private Step.Terminate terminate(RunRecord next, List<InstanceRecord> instances) {
        Duration grace = graceFor(next);
        List<Step.Stop> stops = instances.stream().filter(i -> !i.state().isFinal() && i.stopRequestedAt() == null)
                .map(i -> new Step.Stop(i, grace, next.reason())).toList();
        return new Step.Terminate(next, stops);
    }

    /** A run stopped to be queued again has its job's grace period (or the default) to save its work; anything else the default. */
    public Duration graceFor(RunRecord run) {
        if (run.outcome() == RunState.QUEUED && run.spec().preemptionGracePeriod() != null) {
            return run.spec().preemptionGracePeriod();
        }
        return limits.gracePeriod();
    }

    /**
     * What an instance told to stop before is told again after a restart of the server (the previous process may have
     * died before its grace period ended): the notice it had. An elastic run's instance whose world changes keeps its
     * {@code WorldChange:} or {@code Shrunk:} notice and the change's grace; any other, its run's reason and grace.
     */
    public Step.Stop stopAgain(RunRecord run, InstanceRecord instance) {
        if (run.state() != RunState.TERMINATING && run.world() != null && run.world().changing()) {
            ElasticWorld.Leaving leaving = run.world().leavingOf(instance.id().rank());
            return new Step.Stop(instance, changeGrace(run), leaving != null ? leaving.reason() : WorldChanges.notice(run.world()));
        }
        return new Step.Stop(instance, graceFor(run), run.reason());
    }

    /** How long an elastic run's instances have to save and exit when its world changes: as for a preemption. */
    public Duration changeGrace(RunRecord run) {
        return run.spec().preemptionGracePeriod() != null ? run.spec().preemptionGracePeriod() : limits.gracePeriod();
    }

    /** The run's policy decides: the whole gang restarts as a new attempt, or the run fails. */
    private Step fault(RunRecord run, List<InstanceRecord> instances, RestartRules.Fault fault) {
        return apply(run, instances, RestartRules.judge(run.spec().faultTolerance(), run.faults(), fault));
    }

    /**
     * Async: the same rules and budgets as a whole restart decide, but a restart starts only the failed rank again, in
     * place; a failure they do not retry (or one past the budget) fails the run and stops the others, as with Sync.
     * Lost nodes never get here: what ran on a lost node cannot be restarted where it was.
     */
    private Step inPlace(RunRecord run, List<InstanceRecord> instances, InstanceRecord failed, RestartRules.InstanceFailed fault, Instant now) {
        FaultTolerance policy = run.spec().faultTolerance();
        RestartRules.Verdict verdict = RestartRules.judge(policy, run.faults(), fault);
        if (!(verdict instanceof RestartRules.Restart restart)) {
            return apply(run, instances, verdict);
        }
        Instant notBefore = restart.backoff().isZero() ? null : now.plus(restart.backoff());
        RunRecord counted = run.withFaults(verdict.faults().restartedInstance(notBefore));
        String message = failed.displayName() + " (rank " + failed.id().rank() + ") restarted after " + fault.signature() + " (restart "
                + counted.faults().failures() + " of " + policy.maxRestarts() + ")"
                + (restart.backoff().isZero() ? "" : "; starts in " + Durations.format(restart.backoff()));
        return new Step.RestartInstance(counted, failed.restartedInPlace(), message);
    }

    private Step apply(RunRecord run, List<InstanceRecord> instances, RestartRules.Verdict verdict) {
        RunRecord counted = run.withFaults(verdict.faults());
        RunRecord next = verdict instanceof RestartRules.Restart restart ? counted.restarting(restart.cause(), restart.reason())
                : counted.terminating(RunState.FAILED, verdict.reason());
        return terminate(next, instances);
    }

    private static List<InstanceRecord> failed(List<InstanceRecord> instances) {
        return instances.stream().filter(i -> i.state() == InstanceState.FAILED || i.state() == InstanceState.LOST
                || i.state() == InstanceState.KILLED || i.state() == InstanceState.NODE_LOST).toList();
    }

    /**
     * When one rank of a gang dies, its peers fail moments later with errors of their own ("lost a peer"), and their
     * reports may arrive first. A run that may be restarted by rule therefore waits {@link #SETTLE} after the first
     * failure (while others still run) so that the rules judge the root cause, not a symptom.
     */
    private static boolean settling(RunRecord run, List<InstanceRecord> instances, List<InstanceRecord> failed, Instant now) {
        FaultTolerance policy = run.spec().faultTolerance();
        boolean mayRetry = policy.hasRetryRules() || policy.otherFailures() == FaultTolerance.FailureAction.Retry;
        Instant first = failed.stream().map(InstanceRecord::finishedAt).filter(Objects::nonNull).min(Comparator.naturalOrder()).orElse(null);
        return mayRetry && first != null && now.isBefore(first.plus(SETTLE)) && instances.stream().anyMatch(i -> !i.state().isFinal());
    }

    /** The failure that most likely caused the others: a lost node, then a rank killed by a signal, then the earliest. */
    static InstanceRecord rootCause(List<InstanceRecord> failed) {
        Comparator<InstanceRecord> byKind = Comparator.comparingInt(i -> {
            if (i.state() == InstanceState.NODE_LOST || i.state() == InstanceState.LOST) {
                return 0;
            }
            return i.exitCode() != null && i.exitCode() > 128 ? 1 : 2;
        });
        return failed.stream().min(byKind.thenComparing(InstanceRecord::finishedAt, Comparator.nullsLast(Comparator.naturalOrder()))).orElseThrow();
    }

    private static RestartRules.Fault faultOf(InstanceRecord instance, List<String> logLines) {
        if (instance.state() == InstanceState.NODE_LOST || instance.state() == InstanceState.LOST) {
            return new RestartRules.NodeLost(instance.displayName(), instance.reason());
        }
        return new RestartRules.InstanceFailed(instance.displayName(), instance.exitCode(), instance.endCause(), instance.reason(),
                instance.launchFailure(), logLines);
    }

    /**
     * Whether every node group has as many succeeded instances as it needs (all, unless minSuccessReplicas says fewer);
     * an elastic run's {@code instances} are its world's members, and every one of them must succeed.
     */
    static boolean enoughSucceeded(RunRecord run, List<InstanceRecord> instances) {
        if (instances.isEmpty()) {
            return false;
        }
        if (run.world() != null) {
            return instances.stream().allMatch(i -> i.state() == InstanceState.SUCCEEDED);
        }
        Map<String, Long> succeeded = instances.stream().filter(i -> i.state() == InstanceState.SUCCEEDED)
                .collect(Collectors.groupingBy(InstanceRecord::nodeGroup, Collectors.counting()));
        return run.spec().nodeGroups().stream().allMatch(g -> succeeded.getOrDefault(g.name(), 0L) >= g.requiredSuccesses());
    }

    /** Why the run has run out of time, or {@code null}. Only time spent running counts, never time queued. */
    private String timeout(RunRecord run, List<InstanceRecord> instances, Observation seen) {
        if (instances.stream().anyMatch(i -> seen.unconfirmed().contains(i.id()))) {
            return null;
        }
        Instant now = seen.now();
        Duration limit = limits.maxRuntimeOf(run.spec());
        Duration used = run.spec().maxRuntimePerAttempt() ? run.attemptRuntime(now) : run.runtime(now);
        if (used.compareTo(limit) >= 0) {
            return "Timeout: ran " + Durations.format(used.withNanos(0)) + ", longer than its maxRuntime of " + Durations.format(limit)
                    + (run.spec().maxRuntimePerAttempt() ? " per attempt" : "");
        }
        for (InstanceRecord instance : instances) {
            Duration groupLimit = group(run, instance).maxRuntime();
            if (groupLimit != null && instance.state() == InstanceState.RUNNING && instance.startedAt() != null
                    && Duration.between(instance.startedAt(), now).compareTo(groupLimit) >= 0) {
                return "Timeout: " + instance.displayName() + " ran longer than node group " + instance.nodeGroup() + "'s maxRuntime of "
                        + Durations.format(groupLimit);
            }
        }
        return null;
    }

    /** Whether an instance lets the next group start: its probe passed, it runs without a probe, or it succeeded. */
    public static boolean isReady(InstanceRecord instance, NodeGroupSpec group) {
        return instance.state() == InstanceState.SUCCEEDED
                || instance.state() == InstanceState.RUNNING && (group.startupProbe() == null || instance.readyAt() != null);
    }

    /**
     * The placed instances that may start: all of them, or with InOrder those of the first group not yet ready. A rank
     * restarted in place waits out its backoff (the run's {@code retryAt}) first.
     */
    static List<InstanceRecord> startable(RunRecord run, List<InstanceRecord> instances, Instant now) {
        Instant retryAt = run.faults().retryAt();
        java.util.function.Predicate<InstanceRecord> mayStart = i -> i.state() == InstanceState.PENDING
                && (i.restarts() == 0 || retryAt == null || !now.isBefore(retryAt));
        if (run.spec().startupOrder() == StartupOrder.InParallel) {
            return instances.stream().filter(mayStart).toList();
        }
        for (NodeGroupSpec group : run.spec().nodeGroups()) {
            List<InstanceRecord> members = instances.stream().filter(i -> i.nodeGroup().equals(group.name())).toList();
            List<InstanceRecord> pending = members.stream().filter(i -> i.state() == InstanceState.PENDING).toList();
            if (!pending.isEmpty() || !members.stream().allMatch(i -> isReady(i, group))) {
                return pending.stream().filter(mayStart).toList(); // this group starts (or is still starting): later groups wait for it
            }
        }
        return List.of();
    }

    private static NodeGroupSpec group(RunRecord run, InstanceRecord instance) {
        return run.spec().nodeGroups().stream().filter(g -> g.name().equals(instance.nodeGroup())).findFirst()
                .orElseThrow(() -> new IllegalStateException("run " + run.id() + " has no node group " + instance.nodeGroup()));
    }
}
