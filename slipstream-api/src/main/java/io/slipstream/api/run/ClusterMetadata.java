package io.slipstream.api.run;

import java.util.List;

/**
 * What every instance of a run learns about the run, as the JSON file at {@code SLIPSTREAM_METADATA_FILE}. It is
 * written completely before the instance starts. The format is versioned: fields are only ever added within a
 * version; {@link #FORMAT_VERSION} changes if one is removed or changes meaning.
 *
 * @param master    rank 0's address and first port ({@code MASTER_ADDR}, {@code MASTER_PORT})
 * @param instances every instance of this attempt, by global rank; with {@code InOrder} startup, those of groups that
 *                  have not been started yet are present with {@code started: false}
 * @param storage   the run's shared storage; {@code path} is where it is on this instance's machine
 */
public record ClusterMetadata(
        int version,
        String runId,
        String workspace,
        String job,
        int attempt,
        int worldSize,
        String startupOrder,
        Address master,
        List<Instance> instances,
        List<Storage> storage) {

    public static final int FORMAT_VERSION = 1;

    public ClusterMetadata {
        instances = List.copyOf(instances);
        storage = List.copyOf(storage);
    }

    /**
     * One instance: who it is in the run, and where to reach it; {@code topology}: where its node is in the cluster's
     * topology, level to domain, broadest first ({@code {block: b1, rack: r2}}; empty without one), so that a framework
     * can build its communication groups from it.
     */
    public record Instance(String name, String nodeGroup, int rank, int groupRank, String node, String hostname, String fqdn, String ip,
                           List<Integer> ports, boolean started,
                           @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
                           java.util.Map<String, String> topology) {
        public Instance {
            ports = List.copyOf(ports);
            topology = topology == null ? java.util.Map.of() : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(topology));
        }

        /** An instance on a node of no topology. */
        public Instance(String name, String nodeGroup, int rank, int groupRank, String node, String hostname, String fqdn, String ip,
                        List<Integer> ports, boolean started) {
            this(name, nodeGroup, rank, groupRank, node, hostname, fqdn, ip, ports, started, java.util.Map.of());
        }
    }

    public record Address(String addr, int port) {
    }

    /**
     * Shared storage: {@code path} on this machine (as the control plane hands it to the executor: the path inside the
     * storage's scope, which the executor replaces), {@code mountPath} on clusters.
     */
    public record Storage(String name, String scope, String path, String mountPath) {
    }

    /** The same metadata with the storage paths as this machine has them. */
    public ClusterMetadata withStorage(List<Storage> resolved) {
        return new ClusterMetadata(version, runId, workspace, job, attempt, worldSize, startupOrder, master, instances, resolved);
    }
}
