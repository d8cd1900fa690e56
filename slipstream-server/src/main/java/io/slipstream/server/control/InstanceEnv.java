package io.slipstream.server.control;

import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The environment every instance sees: its spec's env, then who it is in the run ({@code SLIPSTREAM_*}) and the
 * names distributed-training frameworks already read ({@code RANK}, {@code WORLD_SIZE}, ...). Ours come last so a
 * spec cannot fake them (the spec reader also refuses the {@code SLIPSTREAM_} prefix). An elastic run's ranks and sizes
 * are those of its current world ({@link WorldRanks}), which {@code SLIPSTREAM_WORLD_VERSION} numbers.
 */
final class InstanceEnv {
    private InstanceEnv() {
    }

    static Map<String, String> of(RunRecord run, NodeGroupSpec group, InstanceRecord instance) {
        return of(run, group, instance, null);
    }

    /** @param master rank 0's address and first port, or {@code null} if unknown */
    static Map<String, String> of(RunRecord run, NodeGroupSpec group, InstanceRecord instance, ClusterMetadata.Address master) {
        int worldSize = WorldRanks.worldSize(run);
        String rank = Integer.toString(WorldRanks.rank(run, instance));
        String groupRank = Integer.toString(WorldRanks.groupRank(run, instance));
        Map<String, String> env = new LinkedHashMap<>(group.env());
        env.put("SLIPSTREAM_RUN_ID", run.id().value());
        env.put("SLIPSTREAM_JOB", run.job());
        env.put("SLIPSTREAM_WORKSPACE", run.workspace());
        env.put("SLIPSTREAM_ATTEMPT", Integer.toString(instance.id().attempt()));
        env.put("SLIPSTREAM_NODE_GROUP", instance.nodeGroup());
        env.put("SLIPSTREAM_RANK", rank);
        env.put("SLIPSTREAM_GROUP_RANK", groupRank);
        env.put("SLIPSTREAM_WORLD_SIZE", Integer.toString(worldSize));
        env.put("SLIPSTREAM_WORLD_VERSION", Integer.toString(WorldRanks.version(run)));
        env.put("SLIPSTREAM_NODE", instance.node());
        env.put("RANK", rank);
        env.put("WORLD_SIZE", Integer.toString(worldSize));
        env.put("NODE_RANK", rank);
        env.put("NNODES", Integer.toString(worldSize));
        env.put("LOCAL_RANK", "0");
        putTorchElastic(env, run, group, instance, rank, groupRank);
        if (master != null) {
            env.put("MASTER_ADDR", master.addr());
            env.put("MASTER_PORT", Integer.toString(master.port()));
        }
        if (instance.endpoint() != null) {
            env.put("SLIPSTREAM_HOSTNAME", instance.endpoint().fqdn());
            if (instance.endpoint().ip() != null) {
                env.put("SLIPSTREAM_IP", instance.endpoint().ip()); // else the executor knows it (Kubernetes: the pod's IP)
            }
            if (!instance.endpoint().ports().isEmpty()) {
                env.put("SLIPSTREAM_PORT", Integer.toString(instance.endpoint().ports().get(0)));
                env.put("SLIPSTREAM_PORTS", instance.endpoint().ports().stream().map(String::valueOf).collect(Collectors.joining(",")));
            }
        }
        return env;
    }

    /**
     * What torchrun sets for a worker, so that a script written for it runs unchanged with one process per instance
     * (torchrun itself is not needed). torchrun's agent is our instance: each is a "node" with one worker, so
     * {@code GROUP_RANK} (torchrun's node rank) is the global rank; its role is our node group.
     */
    private static void putTorchElastic(Map<String, String> env, RunRecord run, NodeGroupSpec group, InstanceRecord instance, String rank,
                                        String groupRank) {
        int worldSize = WorldRanks.worldSize(run);
        String restarts = Integer.toString(restartsSoFar(instance));
        env.put("LOCAL_WORLD_SIZE", "1");
        env.put("GROUP_RANK", rank);
        env.put("GROUP_WORLD_SIZE", Integer.toString(worldSize));
        env.put("ROLE_NAME", group.name());
        env.put("ROLE_RANK", groupRank);
        env.put("ROLE_WORLD_SIZE", Integer.toString(WorldRanks.groupSize(run, group)));
        env.put("TORCHELASTIC_RUN_ID", run.id().value());
        env.put("TORCHELASTIC_RESTART_COUNT", restarts);
        env.put("TORCHELASTIC_MAX_RESTARTS", Integer.toString(run.spec().faultTolerance().maxRestarts()));
        env.put("SLIPSTREAM_RESTART_COUNT", restarts);
    }

    /**
     * Restarts of this instance so far: every attempt before this one (each restart of the gang is a new attempt, Sync),
     * and each restart in place of this rank within this attempt (Async).
     */
    static int restartsSoFar(InstanceRecord instance) {
        return instance.id().attempt() - 1 + instance.restarts();
    }
}
