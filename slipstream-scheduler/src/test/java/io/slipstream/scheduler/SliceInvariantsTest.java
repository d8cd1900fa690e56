package io.slipstream.scheduler;

import static io.slipstream.scheduler.Builders.aNode;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Gangs placed by topology on random clusters, one placement each: every slice of a placed group shares a domain of
 * its slice level, and a Required group is in one domain of its level, after the ranks are given in topology order.
 * {@link TopologyInvariantsTest} checks the same over whole sequences of cycles; this one reaches further shapes (node
 * names out of topology order, two groups, a victim's node subset).
 */
class SliceInvariantsTest {
    /**
     * Random clusters (three levels, hosts of 1..3 nodes, some without a host or rack label), random load, random gangs
     * of one or two groups, some sliced: every slice of every placed group shares a domain of its slice level, and a
     * Required group is in one domain of its level.
     */
    @Test
    void slicesAlwaysAlignAfterTheRanksAreReordered() {
        int placedSliced = 0;
        for (long seed = 1; seed <= 1000; seed++) {
            Random random = new Random(seed);
            List<NodeState> states = new ArrayList<>();
            int blocks = 1 + random.nextInt(2);
            int n = 0;
            for (int b = 0; b < blocks; b++) {
                int racks = 1 + random.nextInt(3);
                for (int r = 0; r < racks; r++) {
                    int hosts = 1 + random.nextInt(3);
                    for (int h = 0; h < hosts; h++) {
                        int perHost = 1 + random.nextInt(3);
                        for (int k = 0; k < perHost; k++) {
                            // names out of topology order on purpose
                            String name = "z" + (char) ('a' + random.nextInt(26)) + (n++);
                            int labels = random.nextInt(8) == 0 ? random.nextInt(3) : 3;
                            String[] all = {"b" + (blocks - b), "r" + (racks - r), "h" + (hosts - h)};
                            states.add(aNode(name).gpus(random.nextBoolean() ? 8 : 4).in(java.util.Arrays.copyOf(all, labels)).build());
                        }
                    }
                }
            }
            Map<String, NodeState> byName = new HashMap<>();
            states.forEach(s -> byName.put(s.name(), s));
            ClusterState state = new ClusterState(states, List.of());
            WorkingCluster cluster = state.cluster;
            // random load
            for (NodeState s : states) {
                int used = random.nextInt(s.capacity().gpu() + 1);
                if (used > 0 && random.nextBoolean()) {
                    List<Integer> gpus = new ArrayList<>();
                    for (int g = 0; g < used; g++) {
                        gpus.add(g);
                    }
                    cluster.hold(new Allocation(0, s.name(), new Resources(used * 1000L, used * Builders.GI, used, null), gpus));
                }
            }
            List<InstanceRequest> instances = new ArrayList<>();
            int groups = 1 + random.nextInt(2);
            int rank = 0;
            List<String> levelNames = List.of("block", "rack", "host");
            for (int g = 0; g < groups; g++) {
                int sliceSize = 1 + random.nextInt(3);
                int slices = 1 + random.nextInt(3);
                int size = sliceSize * slices;
                int level = random.nextInt(2);
                int sliceLevel = level + random.nextInt(3 - level);
                boolean required = random.nextBoolean();
                boolean sliced = random.nextInt(4) != 0;
                Locality locality = sliced ? new Locality(level, levelNames.get(level), required, sliceSize, sliceLevel, levelNames.get(sliceLevel))
                        : new Locality(level, levelNames.get(level), required);
                int gpus = 1 + random.nextInt(4);
                for (int i = 0; i < size; i++) {
                    instances.add(new InstanceRequest(rank++, "g" + g, new Resources(gpus * 1000L, gpus * Builders.GI, gpus, null), locality));
                }
            }
            if (random.nextBoolean()) {
                instances.add(new InstanceRequest(rank, "free", new Resources(1000, Builders.GI, 1, null)));
            }
            List<Placement> placements = random.nextInt(4) == 0
                    ? cluster.placeGangOn(instances, null, states.stream().map(NodeState::name).filter(x -> random.nextBoolean()).collect(Collectors.toSet()))
                    : cluster.placeGang(instances, null);
            if (placements == null) {
                continue;
            }
            assertThat(placements).extracting(Placement::rank).as("seed %d", seed).doesNotHaveDuplicates().hasSize(instances.size());
            Map<Integer, Placement> byRank = new HashMap<>();
            placements.forEach(p -> byRank.put(p.rank(), p));
            Map<String, List<InstanceRequest>> byGroup = new TreeMap<>();
            instances.forEach(r -> byGroup.computeIfAbsent(r.nodeGroup(), x -> new ArrayList<>()).add(r));
            for (List<InstanceRequest> group : byGroup.values()) {
                Locality locality = group.get(0).locality();
                if (locality == null) {
                    continue;
                }
                if (locality.required()) {
                    Set<String> domains = new HashSet<>();
                    group.forEach(r -> domains.add(domain(byName.get(byRank.get(r.rank()).node()), locality.level())));
                    assertThat(domains).as("seed %d group %s", seed, group.get(0).nodeGroup()).hasSize(1).doesNotContainNull();
                }
                if (locality.sliced()) {
                    placedSliced++;
                    for (int from = 0; from < group.size(); from += locality.sliceSize()) {
                        Set<String> domains = new HashSet<>();
                        for (InstanceRequest r : group.subList(from, from + locality.sliceSize())) {
                            domains.add(domain(byName.get(byRank.get(r.rank()).node()), locality.sliceLevel()));
                        }
                        assertThat(domains).as("seed %d group %s slice at %d (%s)", seed, group.get(0).nodeGroup(), from, placements).hasSize(1).doesNotContainNull();
                    }
                }
            }
        }
        assertThat(placedSliced).as("sliced groups placed").isGreaterThan(150);
    }

    private static String domain(NodeState node, int level) {
        if (node.domains().size() <= level) {
            return null;
        }
        return String.join("/", node.domains().subList(0, level + 1));
    }
}
