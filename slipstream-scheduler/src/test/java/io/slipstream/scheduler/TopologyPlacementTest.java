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
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.Resources;
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
        assertThat(result.waiting().get(0).reason()).isEqualTo(WaitReason.NoNodeFits);
        assertThat(result.waiting().get(0).message()).contains("no rack could ever hold the 2 instances");

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

    /**
     * A Preferred gang that reclaims gets one rack when that costs no more victims: victim order alone (youngest
     * first) would take the borrowers on a1 and c1, two racks.
     */
    @Test
    void aPreferredGroupReclaimsBorrowersOfOneRackWhenThatTakesNoMore() {
        List<QuotaState> quotas = List.of(aQuota("org/root").minGpus(48).build(), aQuota("a/gpu").minGpus(16).parent("org/root").build(),
                aQuota("b/gpu").parent("org/root").build());
        Map<String, Integer> startedAt = Map.of("a1", 50, "c1", 40, "a2", 10, "c2", 5, "z1", 1, "z2", 0);
        List<ActiveRun> borrowers = new java.util.ArrayList<>();
        startedAt.forEach((node, second) -> borrowers.add(aRun("x-" + node).quota("b/gpu").idle(IdleMode.OnlyIdle).gpus(8)
                .submittedSecondsAfterStart(second).running(NotInQuota, 0, node)));
        CycleResult result = scheduler.schedule(new ClusterSnapshot(cluster(), quotas, borrowers,
                List.of(aRun("gang").quota("a/gpu").instances(2).gpus(8).within(RACK, "rack", false).submittedSecondsAfterStart(60).build())),
                T0.plusSeconds(60));
        Set<String> racks = result.preempted().stream().map(p -> rackOf(p.runId().value().substring(2))).collect(Collectors.toSet());
        assertThat(result.preempted()).hasSize(2);
        assertThat(racks).as("victims %s", result.preempted()).hasSize(1);
    }

    /** A move plan is made node by node: a gang placed by topology is not moved for (it is held nodes in one rack instead). */
    @Test
    void noMoveIsPlannedForAGangPlacedByTopology() {
        List<NodeState> nodes = cluster().subList(0, 4);
        ActiveRun b = aRun("b-1").quota("b/gpu").running(InQuota, 0, "a1");
        ActiveRun movable = new ActiveRun(b.id(), b.quota(), b.idleMode(), 0, b.startedAt(), T0.plusSeconds(3540), InQuota, b.allocations(), false, null);
        List<ActiveRun> active = List.of(movable, aRun("c-a2").quota("c/gpu").running(InQuota, 0, "a2"), aRun("c-c1").quota("c/gpu").running(InQuota, 0, "c1"));
        List<QuotaState> quotas = List.of(aQuota("a/gpu").minGpus(16).build(), aQuota("b/gpu").minGpus(8).build().withAllowMoves(true),
                aQuota("c/gpu").minGpus(8).build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, quotas, active,
                List.of(aRun("gang").quota("a/gpu").instances(2).gpus(8).within(RACK, "rack", true).build())), T0.plusSeconds(3600));
        assertThat(result.admitted()).isEmpty();
        assertThat(result.decisions()).as("no move (or reclaim) spanning two racks").noneMatch(d -> d instanceof Decision.Preempt);
        assertThat(result.waiting().get(0).message()).endsWith("nodes are held for it");
    }

    /** A group larger than every rack waits for a change (NoNodeFits), holding nothing: a smaller run starts meanwhile. */
    @Test
    void aGroupThatNoRackCouldEverHoldWaitsForAChangeAndHoldsNothing() {
        List<QuotaState> quotas = List.of(aQuota("a/gpu").minGpus(48).build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(cluster(), quotas, List.of(),
                List.of(aRun("never").quota("a/gpu").instances(3).gpus(8).within(RACK, "rack", true).build(),
                        aRun("small").quota("a/gpu").instances(2).gpus(8).submittedSecondsAfterStart(5).build())), T0.plusSeconds(60));
        Decision.Wait never = result.waiting().get(0);
        assertThat(never.reason()).isEqualTo(WaitReason.NoNodeFits);
        assertThat(never.reason().waitsForAChange()).isTrue();
        assertThat(never.message()).contains("no rack could ever hold the 3 instances of node group main together");
        assertThat(nodesByRun(result)).containsKey("small");

        CycleResult gone = scheduler.schedule(new ClusterSnapshot(cluster(), quotas, List.of(),
                List.of(aRun("gone").quota("a/gpu").instances(2).gpus(8).within(2, "row (not a level of the cluster's topology)", true).build())), T0);
        assertThat(gone.waiting().get(0).reason()).isEqualTo(WaitReason.NoNodeFits);
        assertThat(gone.waiting().get(0).message()).contains("no schedulable node is in a row (not a level of the cluster's topology)");
    }

    /** A constrained run that found no victims does not make the same shape, unconstrained, give up its reclaim. */
    @Test
    void aConstrainedRunThatCannotReclaimDoesNotStopAnUnconstrainedOneOfTheSameShape() {
        List<NodeState> nodes = cluster().subList(0, 4);
        List<ActiveRun> active = List.of(aRun("bor-a1").quota("b/gpu").idle(IdleMode.OnlyIdle).gpus(8).running(NotInQuota, 0, "a1"),
                aRun("bor-c1").quota("b/gpu").idle(IdleMode.OnlyIdle).gpus(8).running(NotInQuota, 0, "c1"),
                aRun("g-a2").quota("c/gpu").running(InQuota, 0, "a2"), aRun("g-c2").quota("c/gpu").running(InQuota, 0, "c2"));
        List<QuotaState> quotas = List.of(aQuota("a/gpu").minGpus(48).build(), aQuota("b/gpu").build(), aQuota("c/gpu").minGpus(2).build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, quotas, active,
                List.of(aRun("first").quota("a/gpu").instances(2).gpus(8).within(RACK, "rack", true).build(),
                        aRun("second").quota("a/gpu").instances(2).gpus(8).submittedSecondsAfterStart(5).build())), T0.plusSeconds(60));
        assertThat(result.decisions()).filteredOn(d -> d instanceof Decision.Preempt).extracting(d -> ((Decision.Preempt) d).forRun().value())
                .containsOnly("second").hasSize(2);
    }

    /** Required groups go before Preferred ones, which can go anywhere: a Preferred group never keeps a gang out. */
    @Test
    void aRequiredGroupIsPlacedBeforeAPreferredOne() {
        List<NodeState> nodes = List.of(aNode("a1").in("b1", "r1").build(), aNode("a2").in("b1", "r1").build(), aNode("c1").in("b1", "r2").build(),
                aNode("z1").in("b2", "r3").build(), aNode("z2").in("b2", "r3").build());
        Resources eight = new Resources(32_000, 256L << 30, 8, null);
        List<InstanceRequest> requests = new java.util.ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            requests.add(new InstanceRequest(rank, "big", eight, new Locality(BLOCK, "block", true)));
        }
        requests.add(new InstanceRequest(3, "small", eight, new Locality(RACK, "rack", false)));
        PendingRun gang = new PendingRun(new RunId("gang"), null, IdleMode.OnlyIdle, 0, T0, requests, false);
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, List.of(), List.of(), List.of(gang)), T0);
        assertThat(result.admitted()).singleElement().satisfies(admit -> assertThat(admit.placements()).filteredOn(p -> p.rank() < 3)
                .extracting(Placement::node).containsExactlyInAnyOrder("a1", "a2", "c1"));
    }

    /** As {@code SchedulerTest}'s whole-node hold, by domain: a stream of small runs cannot keep every rack fragmented. */
    @Test
    void aWaitingRequiredGangIsHeldNodesInOneRackThatSmallRunsThenLeaveAlone() {
        List<NodeState> nodes = List.of(aNode("n-1").in("b1", "r1").build(), aNode("n-2").in("b1", "r1").build(), aNode("n-3").in("b1", "r2").build(),
                aNode("n-4").in("b1", "r2").build());
        // Each rack: one node with 2 GPUs of guaranteed work, one empty. The gang needs a rack's two whole nodes.
        List<ActiveRun> busy = List.of(aRun("busy-1").quota("a/gpu").gpus(2).running(InQuota, 0, "n-1"),
                aRun("busy-3").quota("a/gpu").gpus(2).running(InQuota, 0, "n-3"));
        List<PendingRun> pending = List.of(aRun("gang").quota("a/gpu").idle(IdleMode.Disabled).instances(2).gpus(8).within(RACK, "rack", true).build(),
                aRun("small").idle(IdleMode.OnlyIdle).gpus(2).submittedSecondsAfterStart(1).build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, List.of(aQuota("a/gpu").minGpus(24).build()), busy, pending), T0);

        assertThat(result.waiting()).filteredOn(w -> w.runId().value().equals("gang")).singleElement().satisfies(wait -> {
            assertThat(wait.reason()).isEqualTo(WaitReason.WaitingForTopology);
            assertThat(wait.message()).contains("no rack has room for the 2 instances").endsWith("nodes are held for it");
        });
        // r1 and r2 are as free; r1 comes first by name and is held: the small run goes to r2, next to guaranteed work.
        assertThat(nodesByRun(result).get("small")).containsExactly("n-3");
    }

    /** Slices: every 2 consecutive ranks share a host; whole slices, never one split over two hosts. */
    @Test
    void everySliceOfConsecutiveRanksSharesAHost() {
        // Rack r1 has 8 GPUs free, but on three hosts (2, 2, 4): only one slice of 2 x 2 GPUs fits a host there. Rack
        // r2's c1 has all 8 free on one host: both slices.
        List<NodeState> nodes = List.of(aNode("a1").in("b1", "r1", "a1").build(), aNode("a2").in("b1", "r1", "a2").build(),
                aNode("a3").in("b1", "r1", "a3").build(), aNode("c1").in("b1", "r2", "c1").build());
        List<ActiveRun> busy = List.of(aRun("x1").gpus(6).running(NotInQuota, 0, "a1"), aRun("x2").gpus(6).running(NotInQuota, 0, "a2"),
                aRun("x3").gpus(4).running(NotInQuota, 0, "a3"));
        CycleResult sliced = scheduler.schedule(new ClusterSnapshot(nodes, List.of(), busy,
                List.of(aRun("gang").instances(4).gpus(2).within(RACK, "rack", true, 2, 2, "host").build())), T0);
        assertThat(nodesByRun(sliced).get("gang")).as("r1 holds the group's GPUs but not two slices").containsExactly("c1");

        // Without the slice, r1 takes it (fewest free GPUs first), a slice split over a1 and a2.
        CycleResult whole = scheduler.schedule(new ClusterSnapshot(nodes, List.of(), busy,
                List.of(aRun("gang").instances(4).gpus(2).within(RACK, "rack", true).build())), T0);
        assertThat(nodesByRun(whole).get("gang")).containsExactly("a1", "a2", "a3");

        // Two hosts with room for one slice each, in one rack: ranks 0-1 on one host, 2-3 on the other.
        List<ActiveRun> halves = List.of(aRun("x1").gpus(4).running(NotInQuota, 0, "a1"), aRun("x2").gpus(8).running(NotInQuota, 0, "a2"),
                aRun("x3").gpus(4).running(NotInQuota, 0, "a3"), aRun("x4").gpus(8).running(NotInQuota, 0, "c1"));
        CycleResult two = scheduler.schedule(new ClusterSnapshot(nodes, List.of(), halves,
                List.of(aRun("gang").instances(4).gpus(2).within(RACK, "rack", true, 2, 2, "host").build())), T0);
        assertThat(two.admitted().get(0).placements()).extracting(Placement::rank, Placement::node)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(0, "a1"), org.assertj.core.groups.Tuple.tuple(1, "a1"),
                        org.assertj.core.groups.Tuple.tuple(2, "a3"), org.assertj.core.groups.Tuple.tuple(3, "a3"));
    }

    @Test
    void slicesThatNoHostHoldsNowWaitSayingSoAndOnesNoHostCouldEverHoldAreNeverPlaced() {
        List<NodeState> nodes = List.of(aNode("a1").in("b1", "r1", "a1").build(), aNode("a2").in("b1", "r1", "a2").build());
        List<QuotaState> quotas = List.of(aQuota("a/gpu").minGpus(16).build());
        List<ActiveRun> busy = List.of(aRun("x1").quota("a/gpu").gpus(6).running(InQuota, 0, "a1"),
                aRun("x2").quota("a/gpu").gpus(6).running(InQuota, 0, "a2"));
        CycleResult now = scheduler.schedule(new ClusterSnapshot(nodes, quotas, busy,
                List.of(aRun("gang").quota("a/gpu").instances(2).gpus(2).within(RACK, "rack", false, 2, 2, "host").build())), T0);
        assertThat(now.waiting()).singleElement().satisfies(wait -> {
            assertThat(wait.reason()).isEqualTo(WaitReason.WaitingForTopology);
            assertThat(wait.message()).contains("no room for the 2 instances of node group main in slices of 2 that each share a host");
        });

        CycleResult never = scheduler.schedule(new ClusterSnapshot(nodes, quotas, List.of(),
                List.of(aRun("never").quota("a/gpu").instances(2).gpus(6).within(RACK, "rack", false, 2, 2, "host").build())), T0);
        assertThat(never.waiting()).singleElement().satisfies(wait -> {
            assertThat(wait.reason()).isEqualTo(WaitReason.NoNodeFits);
            assertThat(wait.message()).contains("no host could ever hold a slice of 2 instances of node group main");
        });
    }

    private static String rackOf(String node) {
        return switch (node.charAt(0)) {
            case 'a' -> "r1";
            case 'c' -> "r2";
            default -> "r3";
        };
    }
}
