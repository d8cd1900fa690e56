package io.slipstream.simulator.input;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * An experiment: one trace on one cluster, run once per policy. {@code notes} say how the cluster and the quotas
 * were derived, when they were.
 */
public record Experiment(String name, long seed, Trace trace, ClusterSpec cluster, List<Policy> policies, List<String> notes) {
    public Experiment {
        requireNonNull(name, "name is null");
        requireNonNull(trace, "trace is null");
        requireNonNull(cluster, "cluster is null");
        policies = List.copyOf(policies);
        notes = List.copyOf(notes);
    }
}
