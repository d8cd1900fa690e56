package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonCreator;
import java.time.Duration;
import java.util.List;

/**
 * What to run: its node groups (all instances form one gang), the quota it is charged to ({@code null}: none, so it
 * runs on idle capacity only), whether it may use idle capacity, its priority in the queue, how long its instances get
 * to save their work when preempted ({@code null}: the server's default), how long a run may run at most
 * ({@code null}: the server's maximum; counted over all attempts, or per attempt with {@code maxRuntimePerAttempt}),
 * optionally a schedule on which it runs by itself, the order its node groups start in, the storage its instances
 * share, when it is restarted after a failure, preemption, lost node or hang ({@link FaultTolerance}), its network
 * ({@code null}: {@link #networkMode() by its images}), and the identity tokens its instances get ({@code null}: none).
 */
public record JobSpec(
        int priority,
        String quota,
        IdleMode idleResources,
        Duration preemptionGracePeriod,
        Duration maxRuntime,
        @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean maxRuntimePerAttempt,
        ScheduleSpec schedule,
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = StartupOrder.IsDefault.class) StartupOrder startupOrder,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<StorageSpec> storage,
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = FaultTolerance.IsDefault.class) FaultTolerance faultTolerance,
        List<NodeGroupSpec> nodeGroups,
        @JsonInclude(JsonInclude.Include.NON_NULL) NetworkMode network,
        @JsonInclude(JsonInclude.Include.NON_NULL) IdentitySpec identity) implements Spec {

    /** No run may be given longer than this, whatever it asks. */
    public static final Duration MAX_RUNTIME = Duration.ofDays(30);

    @JsonCreator
    public JobSpec {
        nodeGroups = nodeGroups == null ? List.of() : List.copyOf(nodeGroups);
        storage = storage == null ? List.of() : List.copyOf(storage);
        startupOrder = startupOrder == null ? StartupOrder.InParallel : startupOrder;
        faultTolerance = faultTolerance == null ? FaultTolerance.DEFAULT : faultTolerance;
        if (idleResources == null) {
            idleResources = quota == null ? IdleMode.OnlyIdle : IdleMode.Disabled;
        }
    }

    /** A job charged to no quota, that runs on idle capacity. */
    public JobSpec(int priority, List<NodeGroupSpec> nodeGroups) {
        this(priority, null, null, null, null, false, null, null, List.of(), null, nodeGroups, null, null);
    }

    /** A job on the network its images choose ({@link #networkMode()}). */
    public JobSpec(int priority, String quota, IdleMode idleResources, Duration preemptionGracePeriod, Duration maxRuntime,
                   boolean maxRuntimePerAttempt, ScheduleSpec schedule, StartupOrder startupOrder, List<StorageSpec> storage,
                   FaultTolerance faultTolerance, List<NodeGroupSpec> nodeGroups) {
        this(priority, quota, idleResources, preemptionGracePeriod, maxRuntime, maxRuntimePerAttempt, schedule, startupOrder, storage,
                faultTolerance, nodeGroups, null, null);
    }

    /** A job on {@code network} whose instances get no identity tokens. */
    public JobSpec(int priority, String quota, IdleMode idleResources, Duration preemptionGracePeriod, Duration maxRuntime,
                   boolean maxRuntimePerAttempt, ScheduleSpec schedule, StartupOrder startupOrder, List<StorageSpec> storage,
                   FaultTolerance faultTolerance, List<NodeGroupSpec> nodeGroups, NetworkMode network) {
        this(priority, quota, idleResources, preemptionGracePeriod, maxRuntime, maxRuntimePerAttempt, schedule, startupOrder, storage,
                faultTolerance, nodeGroups, network, null);
    }

    /**
     * The network the job's runs get: as it says, else {@code Private} when a node group names an image (a container
     * brings its own everything, its network too) and {@code Host} when none does (processes of the machine, as before).
     */
    public NetworkMode networkMode() {
        if (network != null) {
            return network;
        }
        return nodeGroups.stream().anyMatch(group -> group.image() != null) ? NetworkMode.Private : NetworkMode.Host;
    }

    @Override
    public Kind kind() {
        return Kind.Job;
    }

    /** Total number of instances of one attempt. */
    public int instanceCount() {
        return nodeGroups.stream().mapToInt(NodeGroupSpec::replicas).sum();
    }

    public JobSpec withNodeGroups(List<NodeGroupSpec> groups) {
        return new JobSpec(priority, quota, idleResources, preemptionGracePeriod, maxRuntime, maxRuntimePerAttempt, schedule, startupOrder, storage,
                faultTolerance, groups, network, identity);
    }
}
