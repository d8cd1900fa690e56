package io.slipstream.executor.local;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.Resources;
import io.slipstream.executor.ExecutorSettings;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The local executor's settings: its {@code nodes:} and its fields of {@code instances:} (docs/configuration.md).
 *
 * @param nodes      the (virtual) nodes instances are placed on
 * @param inheritEnv names of the server's environment variables that instances see
 * @param isolation  whether instances run under uids of their own
 * @param uidRange   the uids this server claims for them, or {@code null} to let one be chosen (see {@link UidRangeClaims})
 * @param uidClaims  where the servers of this machine record which uids they own
 * @param logLimit   bytes kept of each log of an instance; 0 keeps everything
 * @param maxProcessesPerRun with isolation, how many processes (threads count) a run may have; 0: from the machine's pid_max
 * @param images     how long unused images are kept, and how long a pull may take (docs/containers.md)
 * @param launcher   what starts instances: the launcher binary, when this build has one, or the shell ({@link SupervisorProgram})
 * @param cgroups    whether instances get cgroups that hold them to what they were given ({@link Cgroups})
 * @param burstableMemory whether an instance may use more memory than its request, up to its node group's
 *                   {@code limits.memory} ({@code instances.burstableMemory}); if not, a job that asks is refused
 */
public record LocalExecutorSettings(List<NodeInfo> nodes, List<String> inheritEnv, Isolation.Mode isolation, UidRangeClaims.Range uidRange,
                                    Path uidClaims, long logLimit, int maxProcessesPerRun, ImageSettings images,
                                    SupervisorProgram.Mode launcher, Cgroups.Mode cgroups, boolean burstableMemory) implements ExecutorSettings {
    public static final String NAME = "local";

    public LocalExecutorSettings {
        nodes = List.copyOf(nodes);
        inheritEnv = List.copyOf(inheritEnv);
        requireNonNull(isolation, "isolation is null");
        requireNonNull(uidClaims, "uidClaims is null");
        images = images == null ? ImageSettings.DEFAULTS : images;
        launcher = launcher == null ? SupervisorProgram.Mode.auto : launcher;
        cgroups = cgroups == null ? Cgroups.Mode.auto : cgroups;
    }

    /** Four nodes of 32 cpu, 256Gi and 8 simulated GPUs (enough to try gangs on a laptop), isolation when it can. */
    public static LocalExecutorSettings defaults() {
        return new LocalExecutorSettings(defaultNodes(), LocalProcessExecutor.DEFAULT_INHERITED_ENV, Isolation.Mode.auto, null,
                Path.of(UidRangeClaims.DEFAULT_DIRECTORY), LocalProcessExecutor.DEFAULT_LOG_LIMIT_BYTES, 0, ImageSettings.DEFAULTS, SupervisorProgram.Mode.auto,
                Cgroups.Mode.auto, false);
    }

    /** {@code node-1} .. {@code node-4}: 32 cpu, 256Gi and 8 GPUs of model {@code sim-gpu} each. */
    public static List<NodeInfo> defaultNodes() {
        List<NodeInfo> nodes = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            nodes.add(new NodeInfo("node-" + i, new Resources(32_000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        }
        return nodes;
    }

    @Override
    public String executor() {
        return NAME;
    }

    public LocalExecutorSettings withNodes(List<NodeInfo> newNodes) {
        return new LocalExecutorSettings(newNodes, inheritEnv, isolation, uidRange, uidClaims, logLimit, maxProcessesPerRun,
                images, launcher, cgroups, burstableMemory);
    }

    public LocalExecutorSettings withInheritEnv(List<String> names) {
        return new LocalExecutorSettings(nodes, names, isolation, uidRange, uidClaims, logLimit, maxProcessesPerRun,
                images, launcher, cgroups, burstableMemory);
    }

    public LocalExecutorSettings withIsolation(Isolation.Mode mode) {
        return new LocalExecutorSettings(nodes, inheritEnv, mode, uidRange, uidClaims, logLimit, maxProcessesPerRun,
                images, launcher, cgroups, burstableMemory);
    }

    public LocalExecutorSettings withUidClaims(Path directory) {
        return new LocalExecutorSettings(nodes, inheritEnv, isolation, uidRange, directory, logLimit, maxProcessesPerRun,
                images, launcher, cgroups, burstableMemory);
    }

    public LocalExecutorSettings withUidRange(UidRangeClaims.Range range) {
        return new LocalExecutorSettings(nodes, inheritEnv, isolation, range, uidClaims, logLimit, maxProcessesPerRun,
                images, launcher, cgroups, burstableMemory);
    }

    public LocalExecutorSettings withMaxProcessesPerRun(int count) {
        return new LocalExecutorSettings(nodes, inheritEnv, isolation, uidRange, uidClaims, logLimit, count,
                images, launcher, cgroups, burstableMemory);
    }

    public LocalExecutorSettings withImages(ImageSettings settings) {
        return new LocalExecutorSettings(nodes, inheritEnv, isolation, uidRange, uidClaims, logLimit, maxProcessesPerRun,
                settings, launcher, cgroups, burstableMemory);
    }

    public LocalExecutorSettings withLauncher(SupervisorProgram.Mode mode) {
        return new LocalExecutorSettings(nodes, inheritEnv, isolation, uidRange, uidClaims, logLimit, maxProcessesPerRun,
                images, mode, cgroups, burstableMemory);
    }

    public LocalExecutorSettings withCgroups(Cgroups.Mode mode) {
        return new LocalExecutorSettings(nodes, inheritEnv, isolation, uidRange, uidClaims, logLimit, maxProcessesPerRun,
                images, launcher, mode, burstableMemory);
    }

    public LocalExecutorSettings withLogLimit(long bytes) {
        return new LocalExecutorSettings(nodes, inheritEnv, isolation, uidRange, uidClaims, bytes, maxProcessesPerRun,
                images, launcher, cgroups, burstableMemory);
    }

    public LocalExecutorSettings withBurstableMemory(boolean allowed) {
        return new LocalExecutorSettings(nodes, inheritEnv, isolation, uidRange, uidClaims, logLimit, maxProcessesPerRun,
                images, launcher, cgroups, allowed);
    }
}
