package io.slipstream.api.spec;

import java.util.List;

/** What to run: its node groups (all instances form one gang) and its priority in the queue. */
public record JobSpec(int priority, List<NodeGroupSpec> nodeGroups) implements Spec {
    public JobSpec {
        nodeGroups = List.copyOf(nodeGroups);
    }

    @Override
    public Kind kind() {
        return Kind.Job;
    }

    /** Total number of instances of one attempt. */
    public int instanceCount() {
        return nodeGroups.stream().mapToInt(NodeGroupSpec::replicas).sum();
    }
}
