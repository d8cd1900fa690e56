package io.slipstream.api.wire;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunState;
import java.time.Instant;
import java.util.List;
import tools.jackson.databind.JsonNode;

/**
 * A run as the API returns it. {@code realTimeResources} says, while it holds resources, whether they are its quota's
 * guarantee or idle capacity; {@code queue} is set while it waits; {@code spec} is the effective job spec it runs
 * (shapes resolved), included when a single run is fetched.
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
        List<InstanceView> instances,
        JsonNode spec) {

    /** Why a queued run waits and where it stands. */
    public record QueueView(String reason, String message, int position) {
    }
}
