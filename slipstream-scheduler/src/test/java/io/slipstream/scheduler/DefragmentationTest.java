package io.slipstream.scheduler;

import static io.slipstream.api.run.RealTimeResources.InQuota;
import static io.slipstream.api.run.RealTimeResources.NotInQuota;
import static io.slipstream.scheduler.Builders.T0;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static io.slipstream.scheduler.Builders.nodes;
import static io.slipstream.scheduler.Builders.outcome;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Fragmentation-aware placement and bounded moves, on 4 nodes x 8 GPUs. */
class DefragmentationTest {
    private static final Instant NOW = T0.plusSeconds(3600);
    private static final List<NodeState> FOUR = nodes("n", 4, "sim-gpu");

    // --- placement ---

    /** One row: what is running (run name -> node, guaranteed or not), the queued small run, and the node it must get. */
    record Placing(String name, List<ActiveRun> active, PendingRun run, String node) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Placing> placements() {
        return Stream.of(
                new Placing("next to its own quota's guaranteed work, not the best fit by name", List.of(
                        aRun("c-borrower").quota("c/gpu").idle(IdleMode.Acceptable).running(NotInQuota, 0, "n-1"),
                        aRun("b-1").quota("b/gpu").running(InQuota, 0, "n-2")),
                        aRun("b-2").quota("b/gpu").build(), "n-2"),
                new Placing("next to another quota's guaranteed work before a node only borrowers use", List.of(
                        aRun("c-borrower").quota("c/gpu").idle(IdleMode.Acceptable).running(NotInQuota, 0, "n-1"),
                        aRun("a-1").quota("a/gpu").running(InQuota, 0, "n-3")),
                        aRun("b-2").quota("b/gpu").build(), "n-3"),
                new Placing("a borrower fills a gap next to guaranteed work, where clearing a node could never help", List.of(
                        aRun("c-borrower").quota("c/gpu").idle(IdleMode.Acceptable).running(NotInQuota, 0, "n-1"),
                        aRun("a-1").quota("a/gpu").running(InQuota, 0, "n-4")),
                        aRun("c-2").quota("c/gpu").idle(IdleMode.Acceptable).build(), "n-4"),
                new Placing("the fullest of its quota's nodes", List.of(
                        aRun("b-1").quota("b/gpu").running(InQuota, 0, "n-1"),
                        aRun("b-2").quota("b/gpu").gpus(4).running(InQuota, 1, "n-3")),
                        aRun("b-3").quota("b/gpu").build(), "n-3"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("placements")
    void smallRunsPackWhereGuaranteedWorkIs(Placing row) {
        var result = new Scheduler().schedule(new ClusterSnapshot(FOUR, quotas(false), row.active(), List.of(row.run())), NOW);
        assertThat(result.admitted()).hasSize(1);
        assertThat(result.admitted().get(0).placements()).extracting(Placement::node).containsExactly(row.node());
    }

    @Test
    void scatteredSmallRunsArrivingOneByOneLeaveWholeNodesForAGang() {
        // Other teams' borrowers on every node, so best fit by name alone would spread b's runs over all four.
        List<ActiveRun> active = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            active.add(aRun("c-" + i).quota("c/gpu").idle(IdleMode.OnlyIdle).running(NotInQuota, 7, "n-" + i));
        }
        for (int i = 1; i <= 4; i++) {
            var result = new Scheduler().schedule(new ClusterSnapshot(FOUR, quotas(false), active,
                    List.of(aRun("b-" + i).quota("b/gpu").submittedSecondsAfterStart(i).build())), NOW);
            Placement placement = result.admitted().get(0).placements().get(0);
            active.add(new ActiveRun(new RunId("b-" + i), io.slipstream.api.run.QuotaId.parse("b/gpu"), IdleMode.Disabled, 0, T0, null, InQuota,
                    List.of(new Allocation(0, placement.node(), aRun("x").build().instances().get(0).resources(), placement.gpus())), false, null));
        }
        assertThat(active.subList(4, 8)).extracting(r -> r.allocations().get(0).node()).containsOnly("n-1");
        // The gang reclaims borrowers on two nodes that no guaranteed run holds: no move needed.
        var result = new Scheduler().schedule(new ClusterSnapshot(FOUR, quotas(false), active, List.of(gang())), NOW);
        assertThat(result.preempted()).extracting(p -> p.kind()).containsOnly(Decision.PreemptKind.Reclaim).hasSize(2);
        assertThat(outcome(result)).containsEntry("a-gang", "WaitingForReclaim");
    }

    @Test
    void anOlderSmallRunDoesNotBreakTheWholeNodesAQueuedGangThatFitsItsGuaranteeNeeds() {
        // n-3 and n-4 are full of guaranteed work; n-1 and n-2 are whole and free: the gang needs both.
        List<ActiveRun> active = List.of(aRun("c-full-3").quota("c/gpu").gpus(8).running(InQuota, 0, "n-3"),
                aRun("c-full-4").quota("c/gpu").gpus(8).running(InQuota, 0, "n-4"));
        var small = aRun("b-small").quota("b/gpu").createdAt(T0).build();
        var gang = aRun("a-gang").quota("a/gpu").instances(2).gpus(8).createdAt(T0.plusSeconds(60)).build();
        var result = new Scheduler().schedule(new ClusterSnapshot(FOUR, quotas(false), active, List.of(small, gang)), NOW);
        assertThat(outcome(result)).containsEntry("a-gang", "admit InQuota").containsEntry("b-small", "WaitingForResources");

        // A gang that does not fit its quota's guarantee reserves nothing: the small run goes first.
        var tooBig = aRun("a-gang").quota("a/gpu").instances(3).gpus(8).createdAt(T0.plusSeconds(60)).build();
        var without = new Scheduler().schedule(new ClusterSnapshot(FOUR, quotas(false), active, List.of(small, tooBig)), NOW);
        assertThat(outcome(without)).containsEntry("b-small", "admit InQuota");
    }

    @Test
    void aLaterRunStopsNoOneForTheRoomItsQuotaPromisedToARunWaitingForNodes() {
        // a's gang (2 x 8 GPUs, all of a's guarantee) waits for nodes: c's guaranteed runs are on both. a-small (4 GPUs)
        // could reclaim b's borrower on n-1, but the first of the two to find nodes would take the guarantee back.
        List<ActiveRun> active = List.of(aRun("c-1").quota("c/gpu").running(InQuota, 0, "n-1"),
                aRun("b-borrower").quota("b/gpu").idle(IdleMode.OnlyIdle).gpus(7).running(NotInQuota, 1, "n-1"),
                aRun("c-2").quota("c/gpu").gpus(8).running(InQuota, 0, "n-2"));
        var small = aRun("a-small").quota("a/gpu").gpus(4).createdAt(T0.plusSeconds(200)).build();
        List<NodeState> two = nodes("n", 2, "sim-gpu");
        var result = new Scheduler().schedule(new ClusterSnapshot(two, quotas(false), active, List.of(gang(), small)), NOW);
        assertThat(outcome(result)).isEqualTo(Map.of("a-gang", "WaitingForResources", "a-small", "WaitingForQuota"));

        // Without the gang ahead of it, it reclaims.
        var alone = new Scheduler().schedule(new ClusterSnapshot(two, quotas(false), active, List.of(small)), NOW);
        assertThat(outcome(alone)).isEqualTo(Map.of("a-small", "WaitingForReclaim", "b-borrower", "preempt"));
    }

    // --- moves ---

    /** One row: whether b's runs may move, their checkpoints, the moves allowed, and the decisions expected. */
    record Moving(String name, boolean allowMoves, boolean checkpointed, Instant movedAt, Defragmentation bounds, Map<String, String> expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Moving> moves() {
        var bounds = Defragmentation.DEFAULT;
        return Stream.of(
                new Moving("with the opt-in, the fewest runs are moved: one from each of two nodes", true, true, null, bounds,
                        Map.of("a-gang", "WaitingForReclaim", "b-1", "move", "b-2", "move")),
                new Moving("without the opt-in nothing moves", false, true, null, bounds,
                        Map.of("a-gang", "WaitingForResources")),
                new Moving("a run without a checkpoint is never moved", true, false, null, bounds,
                        Map.of("a-gang", "WaitingForResources")),
                new Moving("a run moved within the cooldown stays", true, true, NOW.minus(Duration.ofMinutes(10)), bounds,
                        Map.of("a-gang", "WaitingForResources")),
                new Moving("after the cooldown it may move again", true, true, NOW.minus(Duration.ofMinutes(31)), bounds,
                        Map.of("a-gang", "WaitingForReclaim", "b-1", "move", "b-2", "move")),
                new Moving("a budget of one move a cycle cannot clear two nodes: nothing moves", true, true, null, new Defragmentation(1, Duration.ZERO),
                        Map.of("a-gang", "WaitingForResources")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("moves")
    void aGangBlockedOnlyByFragmentationMovesTheFewestCheckpointingRuns(Moving row) {
        List<ActiveRun> scattered = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            ActiveRun run = aRun("b-" + i).quota("b/gpu").submittedSecondsAfterStart(i).running(InQuota, 0, "n-" + i);
            scattered.add(new ActiveRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.startedAt(),
                    row.checkpointed() ? NOW.minusSeconds(60) : null, run.realTimeResources(), run.allocations(), false, null, row.movedAt()));
        }
        var result = new Scheduler(row.bounds()).schedule(new ClusterSnapshot(FOUR, quotas(row.allowMoves()), scattered, List.of(gang())), NOW);
        assertThat(outcome(result)).isEqualTo(row.expected());
        for (Decision.Preempt preempt : result.preempted()) {
            assertThat(preempt.reason()).startsWith("Moved");
            assertThat(preempt.forRun().value()).isEqualTo("a-gang");
        }
    }

    @Test
    void theMovedRunsStopThenTheGangStartsOnWholeNodesAndTheyPackElsewhere() {
        List<ActiveRun> active = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            ActiveRun run = aRun("b-" + i).quota("b/gpu").submittedSecondsAfterStart(i).running(InQuota, 0, "n-" + i);
            active.add(new ActiveRun(run.id(), run.quota(), run.idleMode(), 0, run.startedAt(), NOW.minusSeconds(60), InQuota, run.allocations(), false, null));
        }
        var scheduler = new Scheduler();
        var first = scheduler.schedule(new ClusterSnapshot(FOUR, quotas(true), active, List.of(gang())), NOW);
        List<String> moved = first.preempted().stream().map(p -> p.runId().value()).toList();
        assertThat(moved).containsExactlyInAnyOrder("b-1", "b-2");

        // While they stop, the gang holds what it will need: nothing else takes it.
        List<ActiveRun> stopping = new ArrayList<>();
        for (ActiveRun run : active) {
            stopping.add(moved.contains(run.id().value()) ? new ActiveRun(run.id(), run.quota(), run.idleMode(), 0, run.startedAt(), run.lastCheckpointAt(),
                    InQuota, run.allocations(), true, new RunId("a-gang"), NOW) : run);
        }
        var intruder = aRun("c-small").quota("c/gpu").idle(IdleMode.Acceptable).gpus(4).build();
        var second = scheduler.schedule(new ClusterSnapshot(FOUR, quotas(true), stopping, List.of(gang().withReclaimed(true), intruder)), NOW.plusSeconds(10));
        assertThat(outcome(second)).containsEntry("a-gang", "WaitingForReclaim");
        for (Decision.Admit admit : second.admitted()) {
            assertThat(admit.placements()).extracting(Placement::node).doesNotContain("n-1", "n-2");
        }

        // They are gone and queued again: the gang starts on n-1 and n-2, and they go next to b's other runs.
        List<ActiveRun> left = active.stream().filter(r -> !moved.contains(r.id().value())).toList();
        List<PendingRun> queue = List.of(gang().withReclaimed(true), aRun("b-1").quota("b/gpu").submittedSecondsAfterStart(1).build(),
                aRun("b-2").quota("b/gpu").submittedSecondsAfterStart(2).build());
        var third = scheduler.schedule(new ClusterSnapshot(FOUR, quotas(true), left, queue), NOW.plusSeconds(40));
        Map<String, List<String>> nodes = new TreeMap<>();
        third.admitted().forEach(a -> nodes.put(a.runId().value(), a.placements().stream().map(Placement::node).toList()));
        assertThat(nodes).containsEntry("a-gang", List.of("n-1", "n-2")).containsEntry("b-1", List.of("n-3")).containsEntry("b-2", List.of("n-3"));
    }

    @Test
    void noMoveWhenTheMovedRunsCouldNotBePlacedElsewhere() {
        // b's runs on n-1 and n-2; n-3 and n-4 are full: clearing n-1 and n-2 leaves b's runs nowhere to go.
        List<ActiveRun> active = new ArrayList<>();
        for (int i = 1; i <= 2; i++) {
            ActiveRun run = aRun("b-" + i).quota("b/gpu").running(InQuota, 0, "n-" + i);
            active.add(new ActiveRun(run.id(), run.quota(), run.idleMode(), 0, run.startedAt(), NOW.minusSeconds(60), InQuota, run.allocations(), false, null));
        }
        active.add(aRun("c-3").quota("c/gpu").gpus(8).running(InQuota, 0, "n-3"));
        active.add(aRun("c-4").quota("c/gpu").gpus(8).running(InQuota, 0, "n-4"));
        var two = aRun("b-more").quota("b/gpu").gpus(7).running(InQuota, 1, "n-1");
        active.add(two);
        var result = new Scheduler().schedule(new ClusterSnapshot(FOUR, quotas(true), active, List.of(gang())), NOW);
        assertThat(result.preempted()).isEmpty();
    }

    @Test
    void aHalfNodeInstanceThatOnlyFragmentationBlocksMovesSmallerRunsNeverOneAsLarge() {
        // No node has 4 GPUs free (1, 2, 3, 2) and none are borrowed. Moving b-big (4 GPUs) alone would clear n-1, but
        // it would then need 4 free GPUs itself, which no node has: b's two 1-GPU runs on n-2 are moved instead.
        List<ActiveRun> active = new ArrayList<>(List.of(
                checkpointed(aRun("b-big").quota("b/gpu").gpus(4).running(InQuota, 0, "n-1")),
                aRun("c-fill-1").quota("c/gpu").gpus(3).running(InQuota, 4, "n-1"),
                checkpointed(aRun("b-s1").quota("b/gpu").running(InQuota, 0, "n-2")),
                checkpointed(aRun("b-s2").quota("b/gpu").running(InQuota, 1, "n-2")),
                aRun("c-fill-2").quota("c/gpu").gpus(4).running(InQuota, 2, "n-2"),
                aRun("c-fill-3").quota("c/gpu").gpus(5).running(InQuota, 0, "n-3"),
                aRun("c-fill-4").quota("c/gpu").gpus(6).running(InQuota, 0, "n-4")));
        var half = aRun("a-half").quota("a/gpu").gpus(4).build();
        var result = new Scheduler().schedule(new ClusterSnapshot(FOUR, quotas(true), active, List.of(half)), NOW);
        assertThat(outcome(result)).isEqualTo(Map.of("a-half", "WaitingForReclaim", "b-s1", "move", "b-s2", "move"));
    }

    @Test
    void onlyTheRunsTheInstanceNeedsGoneAreMoved() {
        // n-1 has 2 GPUs free; b-r1 (1 GPU, the least work to lose) comes first in victim order, then b-r2 (3 GPUs).
        // Taking both frees 6, but b-r2 alone frees 5: b-r1 stays, and b-r2 goes where 3 GPUs are free (n-4).
        List<ActiveRun> active = List.of(aRun("c-fill").quota("c/gpu").gpus(2).running(InQuota, 0, "n-1"),
                checkpointedAt(aRun("b-r1").quota("b/gpu").running(InQuota, 2, "n-1"), NOW.minusSeconds(60)),
                checkpointedAt(aRun("b-r2").quota("b/gpu").gpus(3).running(InQuota, 3, "n-1"), NOW.minusSeconds(600)),
                aRun("c-2").quota("c/gpu").gpus(7).running(InQuota, 0, "n-2"),
                aRun("c-3").quota("c/gpu").gpus(7).running(InQuota, 0, "n-3"),
                aRun("a-4").quota("a/gpu").gpus(5).running(InQuota, 0, "n-4"));
        var half = aRun("a-half").quota("a/gpu").gpus(4).build();
        var result = new Scheduler().schedule(new ClusterSnapshot(FOUR, quotas(true), active, List.of(half)), NOW);
        assertThat(outcome(result)).isEqualTo(Map.of("a-half", "WaitingForReclaim", "b-r2", "move"));
    }

    @Test
    void aMoveNeverEmptiesAWholeNodeKeptForAGangBeforeIt() {
        // Five nodes, none whole and free: a's gang (2 x 8 GPUs) waits for nodes and keeps whole ones from the runs
        // after it. Moving b's two 4-GPU runs would empty n-1 for a-five (5 GPUs): a whole node kept for the gang.
        List<ActiveRun> active = new ArrayList<>(List.of(checkpointed(aRun("b-4a").quota("b/gpu").gpus(4).running(InQuota, 0, "n-1")),
                checkpointed(aRun("b-4b").quota("b/gpu").gpus(4).running(InQuota, 4, "n-1"))));
        for (int i = 2; i <= 5; i++) {
            active.add(aRun("c-" + i).quota("c/gpu").gpus(4).running(InQuota, 0, "n-" + i));
        }
        var five = aRun("a-five").quota("a/gpu").gpus(5).createdAt(T0.plusSeconds(200)).build();
        var result = new Scheduler().schedule(new ClusterSnapshot(nodes("n", 5, "sim-gpu"), quotas(true), active, List.of(gang(), five)), NOW);
        assertThat(result.preempted()).isEmpty();
        assertThat(outcome(result)).containsEntry("a-gang", "WaitingForResources").containsEntry("a-five", "WaitingForQuota");
    }

    @Test
    void nothingIsMovedForARunWhoseInstancesAreUnderHalfANode() {
        // One GPU free on each node, and a 2-GPU run that fits its guarantee: moving a 7-GPU run for it would be churn.
        List<ActiveRun> active = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            ActiveRun run = aRun((i <= 2 ? "b-" : "c-") + i).quota(i <= 2 ? "b/gpu" : "c/gpu").gpus(i <= 2 ? 4 : 7).running(InQuota, 0, "n-" + i);
            active.add(new ActiveRun(run.id(), run.quota(), run.idleMode(), 0, run.startedAt(), NOW.minusSeconds(60), InQuota, run.allocations(), false, null));
        }
        active.add(aRun("b-fill-1").quota("b/gpu").gpus(3).running(InQuota, 4, "n-1"));
        active.add(aRun("b-fill-2").quota("b/gpu").gpus(3).running(InQuota, 4, "n-2"));
        var result = new Scheduler().schedule(new ClusterSnapshot(FOUR, quotas(true), active, List.of(aRun("a-two").quota("a/gpu").gpus(2).build())), NOW);
        assertThat(result.preempted()).isEmpty();
        assertThat(outcome(result)).containsEntry("a-two", "WaitingForResources");
    }

    /** The run as it is once it has saved a checkpoint: it may be moved. */
    private static ActiveRun checkpointed(ActiveRun run) {
        return checkpointedAt(run, NOW.minusSeconds(60));
    }

    private static ActiveRun checkpointedAt(ActiveRun run, Instant at) {
        return new ActiveRun(run.id(), run.quota(), run.idleMode(), 0, run.startedAt(), at, run.realTimeResources(), run.allocations(), false, null);
    }

    private static PendingRun gang() {
        return aRun("a-gang").quota("a/gpu").instances(2).gpus(8).createdAt(T0.plusSeconds(100)).build();
    }

    /** a: 16 GPUs (the gang's), b: 8 and c: 16 (small runs); c's runs may borrow. Moves: b's and c's runs, if allowed. */
    static List<QuotaState> quotas(boolean allowMoves) {
        return List.of(aQuota("a/gpu").minGpus(16).build(), aQuota("b/gpu").minGpus(8).build().withAllowMoves(allowMoves),
                aQuota("c/gpu").minGpus(16).build().withAllowMoves(allowMoves));
    }

}
