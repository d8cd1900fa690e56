package io.slipstream.model;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.EndCause;
import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.InstanceUsage;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One instance as stored. The placement ({@code node}, {@code gpus}) is written before the executor is told
 * anything, with its {@code endpoint} (address and ports, so that every instance's metadata lists all of them);
 * {@code handle} is what the executor needs to find the instance again after a restart; {@code readyAt} is when its
 * startup probe passed ({@code null}: not yet, or it has none). {@code stopRequestedAt} is when the executor was
 * told to stop it ({@code null}: not yet), so that the stop is sent once; {@code probeFailure} why its startup probe
 * failed ({@code null}: it has not); {@code launchFailure} why it could not be launched ({@code null}: it was, or it
 * is pending); {@code endCause} why it ended where its executor knew more than the exit code ({@code OOMKilled}),
 * kept beside the reason's text so that restart rules match the fact, not the words; {@code usage} what the kernel
 * counted for it (memory peak, CPU time) once it ended, where its executor measures it ({@code null}: it did not, or it
 * has not ended). {@code restarts} counts how
 * often this rank was restarted in place within its attempt ({@code faultTolerance.runType: Async}); 0 for an
 * instance that never was.
 */
public record InstanceRecord(
        InstanceId id,
        String nodeGroup,
        int groupRank,
        String node,
        List<Integer> gpus,
        InstanceState state,
        Integer exitCode,
        String reason,
        Map<String, String> handle,
        Instant startedAt,
        Instant finishedAt,
        Endpoint endpoint,
        Instant readyAt,
        Instant stopRequestedAt,
        String probeFailure,
        LaunchFailure launchFailure,
        EndCause endCause,
        InstanceUsage usage,
        int restarts,
        long version) {

    public InstanceRecord {
        requireNonNull(id, "id is null");
        requireNonNull(nodeGroup, "nodeGroup is null");
        requireNonNull(node, "node is null");
        requireNonNull(state, "state is null");
        gpus = List.copyOf(gpus);
        handle = Map.copyOf(handle);
        if (restarts < 0) {
            throw new IllegalArgumentException("restarts is negative: " + restarts);
        }
    }

    /** An instance never restarted in place. */
    public InstanceRecord(InstanceId id, String nodeGroup, int groupRank, String node, List<Integer> gpus, InstanceState state, Integer exitCode,
                          String reason, Map<String, String> handle, Instant startedAt, Instant finishedAt, Endpoint endpoint, Instant readyAt,
                          Instant stopRequestedAt, String probeFailure, LaunchFailure launchFailure, long version) {
        this(id, nodeGroup, groupRank, node, gpus, state, exitCode, reason, handle, startedAt, finishedAt, endpoint, readyAt, stopRequestedAt,
                probeFailure, launchFailure, null, null, 0, version);
    }

    /** An instance whose end has no known cause. */
    public InstanceRecord(InstanceId id, String nodeGroup, int groupRank, String node, List<Integer> gpus, InstanceState state, Integer exitCode,
                          String reason, Map<String, String> handle, Instant startedAt, Instant finishedAt, Endpoint endpoint, Instant readyAt,
                          Instant stopRequestedAt, String probeFailure, LaunchFailure launchFailure, int restarts, long version) {
        this(id, nodeGroup, groupRank, node, gpus, state, exitCode, reason, handle, startedAt, finishedAt, endpoint, readyAt, stopRequestedAt,
                probeFailure, launchFailure, null, null, restarts, version);
    }

    /** An instance whose usage was not measured. */
    public InstanceRecord(InstanceId id, String nodeGroup, int groupRank, String node, List<Integer> gpus, InstanceState state, Integer exitCode,
                          String reason, Map<String, String> handle, Instant startedAt, Instant finishedAt, Endpoint endpoint, Instant readyAt,
                          Instant stopRequestedAt, String probeFailure, LaunchFailure launchFailure, EndCause endCause, int restarts, long version) {
        this(id, nodeGroup, groupRank, node, gpus, state, exitCode, reason, handle, startedAt, finishedAt, endpoint, readyAt, stopRequestedAt,
                probeFailure, launchFailure, endCause, null, restarts, version);
    }

    public static InstanceRecord pending(InstanceId id, String nodeGroup, int groupRank, String node, List<Integer> gpus) {
        return pending(id, nodeGroup, groupRank, node, gpus, null);
    }

    public static InstanceRecord pending(InstanceId id, String nodeGroup, int groupRank, String node, List<Integer> gpus, Endpoint endpoint) {
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, InstanceState.PENDING, null, "Placed", Map.of(), null, null, endpoint,
                null, null, null, null, 0);
    }

    /** A short name for logs and tables: {@code worker-2}. */
    public String displayName() {
        return nodeGroup + "-" + groupRank;
    }

    public InstanceRecord running(Map<String, String> newHandle, Instant at) {
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, InstanceState.RUNNING, null, "Launched", newHandle,
                startedAt == null ? at : startedAt, null, endpoint, readyAt, stopRequestedAt, probeFailure, launchFailure, null, null, restarts, version);
    }

    public InstanceRecord finished(InstanceState finalState, Integer code, String why, Instant at) {
        return finished(finalState, code, null, why, at);
    }

    /** It ended {@code finalState} with {@code code}, for {@code cause} where its executor knew it ({@code null}: it did not). */
    public InstanceRecord finished(InstanceState finalState, Integer code, EndCause cause, String why, Instant at) {
        if (!finalState.isFinal()) {
            throw new IllegalArgumentException("not a final state: " + finalState);
        }
        if (state.isFinal()) {
            throw new IllegalStateException("instance " + id + " already ended " + state);
        }
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, finalState, code, why, handle, startedAt, at, endpoint, readyAt,
                stopRequestedAt, probeFailure, launchFailure, cause, usage, restarts, version);
    }

    /** What the kernel counted for it as it ended ({@code null}: not measured). */
    public InstanceRecord measured(InstanceUsage measured) {
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, state, exitCode, reason, handle, startedAt, finishedAt, endpoint, readyAt,
                stopRequestedAt, probeFailure, launchFailure, endCause, measured, restarts, version);
    }

    /** It could not be launched, for {@code cause}: it ends FAILED without having run. */
    public InstanceRecord notLaunched(LaunchFailure cause, String why, Instant at) {
        return finished(InstanceState.FAILED, null, cause.label() + ": " + why, at).withLaunchFailure(cause);
    }

    /** Its startup probe passed. */
    public InstanceRecord ready(Instant at) {
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, state, exitCode, reason, handle, startedAt, finishedAt, endpoint,
                readyAt == null ? at : readyAt, stopRequestedAt, probeFailure, launchFailure, endCause, usage, restarts, version);
    }

    /** Its startup probe failed: it still runs (until it is stopped), with the reason kept. */
    public InstanceRecord probeFailed(String why) {
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, state, exitCode, "StartupProbeFailed: " + why, handle, startedAt,
                finishedAt, endpoint, readyAt, stopRequestedAt, why, launchFailure, endCause, usage, restarts, version);
    }

    /** Whether its startup probe has failed. */
    public boolean hasFailedProbe() {
        return probeFailure != null;
    }

    /** The executor was told to stop it at {@code at}. */
    public InstanceRecord stopRequested(Instant at) {
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, state, exitCode, reason, handle, startedAt, finishedAt, endpoint,
                readyAt, stopRequestedAt == null ? at : stopRequestedAt, probeFailure, launchFailure, endCause, usage, restarts, version);
    }

    /** The stop it was told of may not have arrived: its run's lifecycle sends it again. */
    public InstanceRecord stopToResend() {
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, state, exitCode, reason, handle, startedAt, finishedAt, endpoint,
                readyAt, null, probeFailure, launchFailure, endCause, usage, restarts, version);
    }

    private InstanceRecord withLaunchFailure(LaunchFailure cause) {
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, state, exitCode, reason, handle, startedAt, finishedAt, endpoint,
                readyAt, stopRequestedAt, probeFailure, cause, endCause, usage, restarts, version);
    }

    /**
     * This failed rank is started again in place (same node, GPUs, endpoint): pending, as if just placed, with its restart
     * counted; what the failed process left (exit code, its cause and usage, handle, readiness) is gone from the record (its events keep it).
     */
    public InstanceRecord restartedInPlace() {
        if (!state.isFinal()) {
            throw new IllegalStateException("instance " + id + " is " + state + ": only an ended instance restarts");
        }
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, InstanceState.PENDING, null, "Restarting", Map.of(), null, null, endpoint,
                null, null, null, null, null, null, restarts + 1, version);
    }

    /**
     * A slot an elastic run's shrink removed, grown again: pending on {@code newNode} (it may differ from where it ran
     * before), with its launch counted as a restart so that its executor tells the new process from the old one.
     */
    public InstanceRecord regrown(String newNode, List<Integer> newGpus, Endpoint newEndpoint) {
        if (!state.isFinal()) {
            throw new IllegalStateException("instance " + id + " is " + state + ": only an ended instance is grown again");
        }
        return new InstanceRecord(id, nodeGroup, groupRank, newNode, newGpus, InstanceState.PENDING, null, "Placed", Map.of(), null, null,
                newEndpoint, null, null, null, null, null, null, restarts + 1, version);
    }

    public InstanceRecord withVersion(long newVersion) {
        return new InstanceRecord(id, nodeGroup, groupRank, node, gpus, state, exitCode, reason, handle, startedAt, finishedAt, endpoint, readyAt,
                stopRequestedAt, probeFailure, launchFailure, endCause, usage, restarts, newVersion);
    }
}
