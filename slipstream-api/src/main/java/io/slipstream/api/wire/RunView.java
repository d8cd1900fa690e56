package io.slipstream.api.wire;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunState;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * A run as the API returns it. {@code realTimeResources} says, while it holds resources, whether they are its quota's
 * guarantee or idle capacity; {@code queue} is set while it waits; {@code spec} is the effective job spec it runs
 * (overrides applied, shapes resolved), included when a single run is fetched. {@code overrides} are those the run
 * was started with ({@code null}: none); {@code labels} its labels (its job's at submit, with those given at submit on
 * top; {@code null}: none); {@code scheduleTime} is the due time of the schedule that started it.
 * {@code restarts} counts its restarts by cause; {@code progress} is what its workload last reported, and the work
 * its stops lost. {@code world}: an elastic run's current world, while it holds resources ({@code null}: a rigid run, or
 * none now); a node group's {@code minReplicas} is set where the group is elastic.
 */
public record RunView(
        String id,
        String job,
        String workspace,
        String submittedBy,
        Map<String, String> labels,
        long jobVersion,
        RunState state,
        String reason,
        RealTimeResources realTimeResources,
        String quota,
        int attempt,
        int preemptions,
        int priority,
        QueueView queue,
        Instant createdAt,
        Instant startedAt,
        Instant finishedAt,
        Instant cancelRequestedAt,
        Map<String, String> overrides,
        Instant scheduleTime,
        RestartsView restarts,
        ProgressView progress,
        List<NodeGroupView> nodeGroups,
        List<InstanceView> instances,
        JsonNode spec,
        WorldView world) {

    /**
     * An elastic run's current world (docs/elastic.md): {@code version} ({@code SLIPSTREAM_WORLD_VERSION}), its
     * {@code size} (instances in it; {@code minimum} to {@code maximum}), how many stand on the quota's guarantee
     * ({@code inQuota}) and on idle capacity ({@code notInQuota}), and whether it is {@code changing} (the world before
     * stopping, the new one about to start).
     */
    public record WorldView(int version, int size, int minimum, int maximum, int inQuota, int notInQuota, boolean changing) {
    }

    /**
     * How a node group of the current attempt stands: instances placed but not started ({@code pending}), started but
     * not ready ({@code starting}: the startup probe has not passed), {@code running}, {@code succeeded},
     * {@code failed} (non-zero exit, lost) and {@code stopped} (by the platform: cancel, preemption, a failed sibling).
     */
    public record NodeGroupView(String name, int replicas, int minSuccessReplicas, int pending, int starting, int running, int succeeded,
                                int failed, int stopped, Integer minReplicas) {
    }

    /**
     * Restarts by cause: each cause has its own budget. {@code retryAt}: a restarted run waits (backoff) until then.
     * {@code lastError} is the last failure's signature and {@code sameErrorCount} how often it came in a row.
     */
    public record RestartsView(int failures, int preemptions, int nodeLost, int hangs, Instant retryAt, String lastError, int sameErrorCount) {
    }

    /**
     * The last step and checkpoint the workload reported ({@code null}: none), and the work thrown away by stops:
     * instance-seconds between the last checkpoint and each stop, summed over attempts.
     */
    public record ProgressView(Long step, Instant reportedAt, Long checkpointStep, Instant checkpointAt, double workLostSeconds) {
    }

    /** Why a queued run waits and where it stands. */
    public record QueueView(String reason, String message, int position) {
    }
}
