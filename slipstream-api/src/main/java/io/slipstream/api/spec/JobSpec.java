package io.slipstream.api.spec;

import java.time.Duration;
import java.util.List;

/**
 * What to run: its node groups (all instances form one gang), the quota it is charged to ({@code null}: none, so it
 * runs on idle capacity only), whether it may use idle capacity, its priority in the queue, and how long its
 * instances get to save their work when preempted ({@code null}: the server's default).
 */
public record JobSpec(int priority, String quota, IdleMode idleResources, Duration preemptionGracePeriod, List<NodeGroupSpec> nodeGroups)
        implements Spec {
    public JobSpec {
        nodeGroups = List.copyOf(nodeGroups);
        if (idleResources == null) {
            idleResources = quota == null ? IdleMode.OnlyIdle : IdleMode.Disabled;
        }
    }

    /** A job charged to no quota, that runs on idle capacity. */
    public JobSpec(int priority, List<NodeGroupSpec> nodeGroups) {
        this(priority, null, null, null, nodeGroups);
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
        return new JobSpec(priority, quota, idleResources, preemptionGracePeriod, groups);
    }
}
