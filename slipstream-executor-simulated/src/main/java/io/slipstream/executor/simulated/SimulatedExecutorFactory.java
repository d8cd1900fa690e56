package io.slipstream.executor.simulated;

import io.slipstream.api.spec.FieldReader;
import io.slipstream.executor.ConfigValues;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorContext;
import io.slipstream.executor.ExecutorFactory;
import io.slipstream.executor.ExecutorSettings;
import io.slipstream.executor.NodeDeclarations;
import io.slipstream.executor.NodeInfo;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * {@code executor: simulated}: nodes that exist only in the server's books, whose instances start no process and run
 * for the time their run's labels say ({@link SimulatedLabels}). For trying quotas and policies on the real server, and
 * load-testing a deployment, without GPUs.
 */
public final class SimulatedExecutorFactory implements ExecutorFactory {
    @Override
    public String name() {
        return SimulatedExecutorSettings.NAME;
    }

    @Override
    public Set<String> configFields() {
        return Set.of("nodes", "simulated");
    }

    @Override
    public SimulatedExecutorSettings read(FieldReader config) {
        SimulatedExecutorSettings settings = SimulatedExecutorSettings.defaults();
        List<NodeInfo> nodes = NodeDeclarations.read(config, "nodes", NodeDeclarations.Extras.NONE);
        if (nodes != null && !nodes.isEmpty()) {
            settings = settings.withNodes(nodes);
        }
        FieldReader simulated = config.object("simulated", false);
        if (simulated != null) {
            Duration duration = ConfigValues.duration(simulated, "defaultDuration");
            if (duration != null && duration.isZero()) {
                config.problems().add(simulated.pathOf("defaultDuration"), "must be longer than 0");
            } else if (duration != null) {
                settings = settings.withDefaultDuration(duration);
            }
            Duration ack = ConfigValues.duration(simulated, "stopAcknowledgedAfter");
            settings = ack == null ? settings : settings.withStopAcknowledgedAfter(ack);
            simulated.finish();
        }
        return settings;
    }

    @Override
    public Executor create(ExecutorSettings settings, ExecutorContext context) {
        return new SimulatedExecutor((SimulatedExecutorSettings) settings, context.dataDir().resolve("simulated"), context.clock());
    }
}
