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
 * was started with ({@code null}: none); {@code scheduleTime} is the due time of the schedule that started it.
 */
public record RunView(
        String id,
        String job,
        String workspace,
        long jobVersion,
        RunState state,
        String reason,
        RealTimeResources realTimeResources,
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
        List<NodeGroupView> nodeGroups,
        List<InstanceView> instances,
        JsonNode spec) {

    /**
     * How a node group of the current attempt stands: instances placed but not started ({@code pending}), started but
     * not ready ({@code starting}: the startup probe has not passed), {@code running}, {@code succeeded},
     * {@code failed} (non-zero exit, lost) and {@code stopped} (by the platform: cancel, preemption, a failed sibling).
     */
    public record NodeGroupView(String name, int replicas, int minSuccessReplicas, int pending, int starting, int running, int succeeded,
                                int failed, int stopped) {
    }

    /** Why a queued run waits and where it stands. */
    public record QueueView(String reason, String message, int position) {
    }
}
