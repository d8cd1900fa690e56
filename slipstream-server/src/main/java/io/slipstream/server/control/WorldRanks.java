package io.slipstream.server.control;

import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.util.List;

/**
 * Who an instance is in its run's world, as the workload sees it: a rigid run's ranks are its slots; an elastic run's
 * are dense, 0..n-1 over its world's members in slot order (docs/elastic.md), and only members are in its metadata.
 */
final class WorldRanks {
    private WorldRanks() {
    }

    /** {@code SLIPSTREAM_WORLD_VERSION}: 1, or the elastic world's version. */
    static int version(RunRecord run) {
        return run.world() == null ? 1 : run.world().version();
    }

    static int worldSize(RunRecord run) {
        return run.world() == null ? run.spec().instanceCount() : run.world().members().size();
    }

    static int rank(RunRecord run, InstanceRecord instance) {
        return run.world() == null ? instance.id().rank() : run.world().denseRank(instance.id().rank());
    }

    /** Its rank among its node group's instances in the world. */
    static int groupRank(RunRecord run, InstanceRecord instance) {
        ElasticWorld world = run.world();
        if (world == null) {
            return instance.groupRank();
        }
        int below = 0;
        for (int slot : world.members()) {
            if (slot < instance.id().rank() && ElasticWorld.groupOf(run.spec(), slot).name().equals(instance.nodeGroup())) {
                below++;
            }
        }
        return below;
    }

    /** How many of the group's instances are in the world. */
    static int groupSize(RunRecord run, NodeGroupSpec group) {
        ElasticWorld world = run.world();
        if (world == null) {
            return group.replicas();
        }
        return (int) world.members().stream().filter(slot -> ElasticWorld.groupOf(run.spec(), slot).name().equals(group.name())).count();
    }

    /** The instances the world has: all of a rigid run's, an elastic run's members. */
    static List<InstanceRecord> listed(RunRecord run, List<InstanceRecord> instances) {
        ElasticWorld world = run.world();
        return world == null ? instances : instances.stream().filter(i -> world.isMember(i.id().rank())).toList();
    }
}
