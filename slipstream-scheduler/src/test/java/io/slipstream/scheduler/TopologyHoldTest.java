package io.slipstream.scheduler;

import static io.slipstream.api.run.RealTimeResources.InQuota;
import static io.slipstream.scheduler.Builders.T0;
import static io.slipstream.scheduler.Builders.aNode;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.WaitReason;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What is held for a gang placed by topology that waits, and what a gang that could never be placed so is told: only
 * a domain that could ever hold it is held, on nodes of its models that could hold an instance; one that none could
 * hold waits {@code NoNodeFits} and holds nothing.
 */
class TopologyHoldTest {
    private static final int RACK = 1;
    private final Scheduler scheduler = new Scheduler();

    private static Map<String, Set<String>> nodesByRun(CycleResult result) {
        Map<String, Set<String>> nodes = new TreeMap<>();
        result.admitted().forEach(a -> nodes.put(a.runId().value(), a.placements().stream().map(Placement::node).collect(Collectors.toCollection(java.util.TreeSet::new))));
        return nodes;
    }

    /**
     * r1 has the most free GPUs but one node of model B: the B gang could never fit there. r2 is held, the only rack
     * that could ever hold it, and the small B run goes to a1, not onto c2.
     */
    @Test
    void theRackHeldIsOneThatCouldEverHoldTheGangOnNodesOfItsModel() {
        List<NodeState> nodes = List.of(aNode("a1").model("B").in("b1", "r1").build(), aNode("a2").model("A").in("b1", "r1").build(),
                aNode("a3").model("A").in("b1", "r1").build(), aNode("c1").model("B").in("b1", "r2").build(),
                aNode("c2").model("B").in("b1", "r2").build());
        List<QuotaState> quotas = List.of(aQuota("a/gpu").minGpus(12).build(), aQuota("x/gpu").minGpus(4).build(), aQuota("c/gpu").minGpus(12).build());
        List<ActiveRun> busy = List.of(aRun("busy").quota("x/gpu").gpus(4).model("B").running(InQuota, 0, "c1"));
        List<PendingRun> pending = List.of(aRun("gang").quota("a/gpu").instances(2).gpus(6).model("B").within(RACK, "rack", true).build(),
                aRun("small").quota("c/gpu").gpus(6).model("B").submittedSecondsAfterStart(1).build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, quotas, busy, pending), T0);
        assertThat(result.waiting()).filteredOn(w -> w.runId().value().equals("gang")).singleElement()
                .satisfies(w -> assertThat(w.reason()).isEqualTo(WaitReason.WaitingForTopology));
        assertThat(nodesByRun(result).get("small")).as("the hold should protect r2 (the only rack with two B nodes), not a1").containsExactly("a1");
    }

    /** r1 has more free GPUs than r2, but on nodes too small for an instance: r2 is held, not r1. */
    @Test
    void theRackHeldHasNodesThatCouldHoldTheInstances() {
        List<NodeState> nodes = List.of(aNode("a1").gpus(4).in("b1", "r1").build(), aNode("a2").gpus(4).in("b1", "r1").build(),
                aNode("a3").gpus(4).in("b1", "r1").build(), aNode("a4").gpus(4).in("b1", "r1").build(), aNode("c1").in("b1", "r2").build(),
                aNode("c2").in("b1", "r2").build());
        List<QuotaState> quotas = List.of(aQuota("a/gpu").minGpus(12).build(), aQuota("x/gpu").minGpus(4).build(), aQuota("c/gpu").minGpus(12).build());
        List<ActiveRun> busy = List.of(aRun("busy").quota("x/gpu").gpus(4).running(InQuota, 0, "c1"));
        List<PendingRun> pending = List.of(aRun("gang").quota("a/gpu").instances(2).gpus(6).within(RACK, "rack", true).build(),
                aRun("small").quota("c/gpu").gpus(6).submittedSecondsAfterStart(1).build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, quotas, busy, pending), T0);
        assertThat(result.waiting()).filteredOn(w -> w.runId().value().equals("gang")).singleElement()
                .satisfies(w -> assertThat(w.message()).endsWith("nodes are held for it"));
        assertThat(nodesByRun(result)).as("c2 should be held for the gang (r2 is the only rack that could hold it)").doesNotContainKey("small");
    }

    /**
     * r1 (hosts of 8, 4 and 4 GPUs) could only ever hold one slice of 2 x 4 GPUs, not two: the gang never fits
     * ({@code NoNodeFits}), holds nothing, and an ordinary 4-GPU run starts on the idle cluster.
     */
    @Test
    void aSlicedGangNoRackCouldEverHoldNeverFitsAndHoldsNothing() {
        List<String> seen = new ArrayList<>();
        for (boolean required : List.of(true, false)) {
            List<NodeState> nodes = List.of(aNode("h1").in("b1", "r1", "h1").build(), aNode("h2").gpus(4).in("b1", "r1", "h2").build(),
                    aNode("h3").gpus(4).in("b1", "r1", "h3").build());
            List<QuotaState> quotas = List.of(aQuota("a/gpu").minGpus(16).build(), aQuota("c/gpu").minGpus(4).build());
            List<PendingRun> pending = List.of(aRun("gang").quota("a/gpu").instances(4).gpus(4).within(RACK, "rack", required, 2, 2, "host").build(),
                    aRun("small").quota("c/gpu").gpus(4).submittedSecondsAfterStart(1).build());
            CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, quotas, List.of(), pending), T0);
            seen.add("required=" + required + ": " + Builders.outcome(result) + " " + result.waiting().stream().map(Decision.Wait::message).toList());
        }
        assertThat(seen).allMatch(line -> line.contains("gang=NoNodeFits") && line.contains("small=admit"));
    }

    /** The slices and the group are counted in the same rack: r2's host holds a slice, r1 the group's GPUs, none both. */
    @Test
    void slicesAndTheGroupAreCountedInTheSameRack() {
        List<NodeState> nodes = List.of(aNode("a1").gpus(4).in("b1", "r1", "a1").build(), aNode("a2").gpus(4).in("b1", "r1", "a2").build(),
                aNode("a3").gpus(4).in("b1", "r1", "a3").build(), aNode("a4").gpus(4).in("b1", "r1", "a4").build(), aNode("c1").in("b1", "r2", "c1").build());
        // r1: four 4-GPU hosts (16 GPUs, no host holds a slice of 2 x 4); r2: one 8-GPU host (a slice, not the group).
        List<PendingRun> never = List.of(aRun("gang").quota("a/gpu").instances(4).gpus(4).within(RACK, "rack", true, 2, 2, "host").build(),
                aRun("small").quota("c/gpu").gpus(4).submittedSecondsAfterStart(1).build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, List.of(aQuota("a/gpu").minGpus(16).build(), aQuota("c/gpu").minGpus(8).build()),
                List.of(), never), T0);
        assertThat(Builders.outcome(result)).as(result.waiting().toString()).containsEntry("gang", "NoNodeFits");
    }

    /** Whole free nodes in two racks are not kept up front for a rack-bound gang: it cannot start, the run before it can. */
    @Test
    void wholeNodesInTwoRacksAreNotKeptUpFrontForARackBoundGang() {
        List<NodeState> nodes = List.of(aNode("a1").in("b1", "r1").build(), aNode("a2").in("b1", "r1").build(), aNode("c1").in("b1", "r2").build(),
                aNode("c2").in("b1", "r2").build());
        List<QuotaState> quotas = List.of(aQuota("a/gpu").minGpus(16).build(), aQuota("x/gpu").minGpus(16).build(), aQuota("c/gpu").minGpus(4).build());
        List<ActiveRun> busy = List.of(aRun("busy-a2").quota("x/gpu").gpus(8).running(InQuota, 0, "a2"), aRun("busy-c2").quota("x/gpu").gpus(8).running(InQuota, 0, "c2"));
        List<PendingRun> pending = List.of(aRun("early").quota("c/gpu").gpus(2).build(),
                aRun("gang").quota("a/gpu").instances(2).gpus(8).within(RACK, "rack", true).submittedSecondsAfterStart(1).build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, quotas, busy, pending), T0);
        assertThat(Builders.outcome(result)).as(result.waiting().toString()).containsEntry("early", "admit InQuota");
    }

    /** An allocation from before its node shrank names GPUs the node no longer has: given back, they are not added. */
    @Test
    void givingBackGpusANodeNoLongerHasAddsNone() {
        WorkingCluster cluster = new WorkingCluster(List.of(aNode("n1").gpus(4).in("b1", "r1").build()), new Journal());
        Allocation old = new Allocation(0, "n1", new Resources(1000, Builders.GI, 4, null), List.of(4, 5, 6, 7)); // held when n1 had 8
        cluster.hold(old);
        cluster.release(old); // as VictimSearch does with a victim's allocations
        assertThat(cluster.node("n1").freeGpuCount()).isLessThanOrEqualTo(4);
    }
}
