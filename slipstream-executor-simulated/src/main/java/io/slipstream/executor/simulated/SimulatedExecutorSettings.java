package io.slipstream.executor.simulated;

import io.slipstream.api.spec.Resources;
import io.slipstream.executor.ExecutorSettings;
import io.slipstream.executor.NodeInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The simulated executor's settings ({@code executor: simulated}): its nodes ({@code nodes:}, declared as the local
 * executor's are), how long an instance runs when its run's labels do not say ({@code simulated.defaultDuration}), and
 * how long after a stop notice an instance acknowledges it and exits ({@code simulated.stopAcknowledgedAfter}; one
 * that would take longer than its grace period is killed when the grace period ends, as a real one is).
 */
public record SimulatedExecutorSettings(List<NodeInfo> nodes, Duration defaultDuration, Duration stopAcknowledgedAfter) implements ExecutorSettings {
    public static final String NAME = "simulated";

    public SimulatedExecutorSettings {
        nodes = List.copyOf(nodes);
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("no nodes");
        }
        if (defaultDuration.isNegative() || defaultDuration.isZero()) {
            throw new IllegalArgumentException("defaultDuration must be positive");
        }
        if (stopAcknowledgedAfter.isNegative()) {
            throw new IllegalArgumentException("stopAcknowledgedAfter is negative");
        }
    }

    /** Four nodes {@code node-1..4} of 32 cpu, 256Gi and 8 {@code sim-gpu} GPUs (the local executor's default); 1 minute; 1 second. */
    public static SimulatedExecutorSettings defaults() {
        List<NodeInfo> nodes = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            nodes.add(new NodeInfo("node-" + i, new Resources(32_000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        }
        return new SimulatedExecutorSettings(nodes, Duration.ofMinutes(1), Duration.ofSeconds(1));
    }

    public SimulatedExecutorSettings withNodes(List<NodeInfo> newNodes) {
        return new SimulatedExecutorSettings(newNodes, defaultDuration, stopAcknowledgedAfter);
    }

    public SimulatedExecutorSettings withDefaultDuration(Duration duration) {
        return new SimulatedExecutorSettings(nodes, duration, stopAcknowledgedAfter);
    }

    public SimulatedExecutorSettings withStopAcknowledgedAfter(Duration delay) {
        return new SimulatedExecutorSettings(nodes, defaultDuration, delay);
    }

    @Override
    public String executor() {
        return NAME;
    }
}
