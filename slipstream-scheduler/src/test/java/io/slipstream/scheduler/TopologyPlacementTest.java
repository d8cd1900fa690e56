package io.slipstream.scheduler;

import static io.slipstream.api.run.RealTimeResources.InQuota;
import static io.slipstream.api.run.RealTimeResources.NotInQuota;
import static io.slipstream.scheduler.Builders.T0;
import static io.slipstream.scheduler.Builders.aNode;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Gangs placed by topology: a group that must be in one rack lands in one rack (the tightest that holds it), or waits
 * saying which rack comes closest; a group that prefers a rack climbs to its block, then anywhere; ranks follow the
 * topology; a guaranteed group reclaims borrowed capacity so that it lands in one rack.
 */
class TopologyPlacementTest {
    private static final int BLOCK = 0;
    private static final int RACK = 1;
    private final Scheduler scheduler = new Scheduler();

    /** Two blocks: b1 with racks r1 (a1, a2) and r2 (c1, c2); b2 with rack r3 (z1, z2); 8 GPUs each. */
    private static List<NodeState> cluster() {
        return List.of(aNode("a1").in("b1", "r1").build(), aNode("a2").in("b1", "r1").build(), aNode("c1").in("b1", "r2").build(),
                aNode("c2").in("b1", "r2").build(), aNode("z1").in("b2", "r3").build(), aNode("z2").in("b2", "r3").build());
    }

    private static Map<String, Set<String>> nodesByRun(CycleResult result) {
        Map<String, Set<String>> nodes = new TreeMap<>();
        result.admitted().forEach(a -> nodes.put(a.runId().value(), a.placements().stream().map(Placement::node).collect(Collectors.toCollection(java.util.TreeSet::new))));
        return nodes;
    }

    @Test
    void aRequiredGroupLandsInTheTightestRackThatHoldsIt() {
        ActiveRun half = aRun("half").gpus(4).running(NotInQuota, 0, "a1");
        CycleResult result = scheduler.schedule(new ClusterSnapshot(cluster(), List.of(), List.of(half),
                List.of(aRun("gang").instances(2).gpus(4).within(RACK, "rack", true).build())), T0);
        assertThat(nodesByRun(result).get("gang")).as("r1 has 12 GPUs free, the fewest that hold 8").containsExactly("a1", "a2");

        CycleResult whole = scheduler.schedule(new ClusterSnapshot(cluster(), List.of(), List.of(half),
                List.of(aRun("gang").instances(2).gpus(8).within(RACK, "rack", true).build())), T0);
        assertThat(nodesByRun(whole).get("gang")).as("r1 cannot hold two whole nodes now; r2 comes first by name").containsExactly("c1", "c2");
    }

    @Test
    void aRequiredGroupThatNoRackHoldsWaitsSayingWhichComesClosest() {
        List<QuotaState> quotas = List.of(aQuota("a/gpu").minGpus(16).build(), aQuota("b/gpu").minGpus(24).build());
        List<ActiveRun> holders = List.of(aRun("h1").quota("b/gpu").gpus(8).running(InQuota, 0, "a1"),
                aRun("h2").quota("b/gpu").gpus(8).running(InQuota, 0, "c1"), aRun("h3").quota("b/gpu").gpus(8).running(InQuota, 0, "z1"));
        CycleResult result = scheduler.schedule(new ClusterSnapshot(cluster(), quotas, holders,
                List.of(aRun("gang").quota("a/gpu").instances(2).gpus(8).within(RACK, "rack", true).build())), T0);
        assertThat(result.admitted()).isEmpty();
        Decision.Wait wait = result.waiting().get(0);
        assertThat(wait.reason()).isEqualTo(WaitReason.WaitingForTopology);
        assertThat(wait.message()).contains("no rack has room for the 2 instances of node group main together (placement Required); the roomiest, b1/r1, for 1");

        CycleResult anywhere = scheduler.schedule(new ClusterSnapshot(cluster(), quotas, holders,
                List.of(aRun("gang").quota("a/gpu").instances(2).gpus(8).build())), T0);
        assertThat(anywhere.admitted()).as("without the constraint it fits: the topology alone makes it wait").hasSize(1);
    }

    @Test
    void aPreferredGroupClimbsToItsBlockThenGoesAnywhere() {
        List<ActiveRun> holders = List.of(aRun("h1").gpus(8).running(NotInQuota, 0, "a1"), aRun("h2").gpus(8).running(NotInQuota, 0, "c1"),
                aRun("h3").gpus(8).running(NotInQuota, 0, "z1"));
        CycleResult inBlock = scheduler.schedule(new ClusterSnapshot(cluster(), List.of(), holders,
                List.of(aRun("gang").instances(2).gpus(8).within(RACK, "rack", false).build())), T0);
        assertThat(nodesByRun(inBlock).get("gang")).as("no rack holds it; block b1 does").containsExactly("a2", "c2");

        List<ActiveRun> more = List.of(holders.get(0), holders.get(1), holders.get(2), aRun("h4").gpus(8).running(NotInQuota, 0, "c2"));
        CycleResult spread = scheduler.schedule(new ClusterSnapshot(cluster(), List.of(), more,
                List.of(aRun("gang").instances(2).gpus(8).within(RACK, "rack", false).build())), T0);
        assertThat(nodesByRun(spread).get("gang")).as("no block holds it either: anywhere").containsExactly("a2", "z2");
    }

    @Test
    void nodesOutsideTheTopologyNeverHoldARequiredGroup() {
        List<NodeState> nodes = List.of(aNode("a1").in("b1", "r1").build(), aNode("loose-1").in("b1").build(), aNode("loose-2").build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, List.of(), List.of(),
                List.of(aRun("gang").instances(2).gpus(8).within(RACK, "rack", true).build())), T0);
        assertThat(result.admitted()).isEmpty();
        assertThat(result.waiting().get(0).message()).contains("no rack has room for the 2 instances");

        CycleResult block = scheduler.schedule(new ClusterSnapshot(nodes, List.of(), List.of(),
                List.of(aRun("gang").instances(2).gpus(8).within(BLOCK, "block", true).build())), T0);
        assertThat(nodesByRun(block).get("gang")).as("a node with a block and no rack is in its block").containsExactly("a1", "loose-1");
    }

    @Test
    void ranksFollowTheTopologyNotTheNodesNames() {
        List<NodeState> nodes = List.of(aNode("m1").in("b1", "r2").build(), aNode("m2").in("b1", "r2").build(), aNode("x1").in("b1", "r1").build(),
                aNode("x2").in("b1", "r1").build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, List.of(), List.of(),
                List.of(aRun("gang").instances(4).gpus(8).within(BLOCK, "block", true).build())), T0);
        assertThat(result.admitted().get(0).placements()).extracting(Placement::rank, Placement::node)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(0, "x1"), org.assertj.core.groups.Tuple.tuple(1, "x2"),
                        org.assertj.core.groups.Tuple.tuple(2, "m1"), org.assertj.core.groups.Tuple.tuple(3, "m2"));
    }

    @Test
    void aGuaranteedGroupReclaimsBorrowedCapacitySoThatItLandsInOneRack() {
        List<QuotaState> quotas = List.of(aQuota("org/root").minGpus(48).build(), aQuota("a/gpu").minGpus(16).parent("org/root").build(),
                aQuota("b/gpu").parent("org/root").build());
        Settling cluster = new Settling(scheduler, cluster(), quotas);
        for (String node : List.of("a1", "a2", "c1", "c2", "z1", "z2")) {
            cluster.submit(aRun("borrower-" + node).quota("b/gpu").idle(io.slipstream.api.spec.IdleMode.OnlyIdle).gpus(8).build());
        }
        cluster.settle(10);
        assertThat(cluster.active).hasSize(6);
        cluster.submit(aRun("gang").quota("a/gpu").instances(2).gpus(8).within(RACK, "rack", true).submittedSecondsAfterStart(60).build());
        cluster.settle(20);
        ActiveRun gang = cluster.active.get(new RunId("gang"));
        assertThat(gang).as("admitted after its reclaim").isNotNull();
        Set<String> racks = gang.allocations().stream().map(a -> rackOf(a.node())).collect(Collectors.toSet());
        assertThat(racks).as("both instances in one rack").hasSize(1);
        assertThat(cluster.pending).as("exactly two borrowers went back to the queue").hasSize(2);
    }

    private static String rackOf(String node) {
        return switch (node.charAt(0)) {
            case 'a' -> "r1";
            case 'c' -> "r2";
            default -> "r3";
        };
    }
}
