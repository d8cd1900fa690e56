package io.slipstream.scheduler;

import static io.slipstream.api.run.RealTimeResources.InQuota;
import static io.slipstream.api.run.RealTimeResources.NotInQuota;
import static io.slipstream.scheduler.Builders.T0;
import static io.slipstream.scheduler.Builders.aNode;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static io.slipstream.scheduler.Builders.nodes;
import static io.slipstream.scheduler.Builders.outcome;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SchedulerTest {
    private final Scheduler scheduler = new Scheduler();

    /** One row: a cluster, quotas, runs holding resources, queued runs, and what must happen to each run. */
    record Case(String name, List<NodeState> nodes, List<QuotaState> quotas, List<ActiveRun> active, List<PendingRun> pending,
                Map<String, String> expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> cases() {
        var teamA = aQuota("a/gpu").minGpus(8).build();
        var teamB = aQuota("b/gpu").minGpus(8).build();
        return Stream.of(
                // Gangs and placement
                new Case("a gang spreads over nodes when no node holds it whole", nodes("n", 2, "sim-gpu"), List.of(), List.of(),
                        List.of(aRun("r").instances(2).gpus(8).build()), Map.of("r", "admit NotInQuota")),
                new Case("a guaranteed gang larger than the nodes left up says so", List.of(aNode("n-1").build(), aNode("n-2").unschedulable().build()),
                        List.of(aQuota("a/gpu").minGpus(16).build()), List.of(),
                        List.of(aRun("r").quota("a/gpu").instances(2).gpus(8).build()), Map.of("r", "NoNodeFits")),
                new Case("a gang larger than the whole cluster can never fit", nodes("n", 2, "sim-gpu"), List.of(), List.of(),
                        List.of(aRun("r").instances(3).gpus(8).build()), Map.of("r", "NoNodeFits")),
                new Case("a gang that does not fit whole now is not started in part", nodes("n", 2, "sim-gpu"), List.of(), List.of(aRun("small").gpus(1).running(NotInQuota, 0, "n-1")),
                        List.of(aRun("r").instances(2).gpus(8).build()), Map.of("r", "WaitingForIdleCapacity")),
                new Case("an instance larger than every node can never fit", nodes("n", 1, "sim-gpu"), List.of(), List.of(),
                        List.of(aRun("r").gpus(16).build()), Map.of("r", "NoNodeFits")),
                new Case("a GPU model nobody has can never fit", nodes("n", 1, "sim-gpu"), List.of(), List.of(),
                        List.of(aRun("r").gpus(1).model("h100").build()), Map.of("r", "NoNodeFits")),
                new Case("unschedulable nodes take nothing", List.of(aNode("n").unschedulable().build()), List.of(), List.of(),
                        List.of(aRun("r").gpus(1).build()), Map.of("r", "NoNodeFits")),

                // Idle modes
                new Case("Disabled runs within the guarantee", nodes("n", 2, "sim-gpu"), List.of(teamA), List.of(),
                        List.of(aRun("r").quota("a/gpu").instances(1).gpus(8).build()), Map.of("r", "admit InQuota")),
                new Case("Disabled waits when its guarantee is used, though nodes are idle", nodes("n", 2, "sim-gpu"), List.of(teamA),
                        List.of(aRun("old").quota("a/gpu").gpus(8).running(InQuota, 0, "n-1")),
                        List.of(aRun("r").quota("a/gpu").gpus(8).build()), Map.of("r", "WaitingForQuota")),
                new Case("Acceptable borrows when its guarantee is used", nodes("n", 2, "sim-gpu"), List.of(teamA),
                        List.of(aRun("old").quota("a/gpu").gpus(8).running(InQuota, 0, "n-1")),
                        List.of(aRun("r").quota("a/gpu").idle(IdleMode.Acceptable).gpus(8).build()), Map.of("r", "admit NotInQuota")),
                new Case("Acceptable takes its guarantee first", nodes("n", 2, "sim-gpu"), List.of(teamA), List.of(),
                        List.of(aRun("r").quota("a/gpu").idle(IdleMode.Acceptable).gpus(8).build()), Map.of("r", "admit InQuota")),
                new Case("OnlyIdle borrows even when its guarantee is free", nodes("n", 2, "sim-gpu"), List.of(teamA), List.of(),
                        List.of(aRun("r").quota("a/gpu").idle(IdleMode.OnlyIdle).gpus(8).build()), Map.of("r", "admit NotInQuota")),
                new Case("OnlyIdle is not limited by its quota's size", nodes("n", 4, "sim-gpu"), List.of(teamA), List.of(),
                        List.of(aRun("r").quota("a/gpu").idle(IdleMode.OnlyIdle).instances(3).gpus(8).build()), Map.of("r", "admit NotInQuota")),
                new Case("a quota's max caps borrowing too", nodes("n", 4, "sim-gpu"), List.of(aQuota("a/gpu").minGpus(8).maxGpus(16).build()),
                        List.of(), List.of(aRun("r").quota("a/gpu").idle(IdleMode.OnlyIdle).instances(3).gpus(8).build()),
                        Map.of("r", "ExceedsQuotaMax")),
                new Case("a quota that does not exist", nodes("n", 1, "sim-gpu"), List.of(), List.of(),
                        List.of(aRun("r").quota("a/none").gpus(1).build()), Map.of("r", "QuotaNotFound")),

                // Sharing pools
                new Case("a General quota lends within its tree", nodes("n", 2, "sim-gpu"),
                        List.of(aQuota("org/root").minGpus(16).build(), aQuota("a/gpu").minGpus(8).parent("org/root").build(),
                                aQuota("b/gpu").minGpus(8).parent("org/root").build()),
                        List.of(aRun("mine").quota("a/gpu").gpus(8).running(InQuota, 0, "n-1")),
                        List.of(aRun("r").quota("a/gpu").idle(IdleMode.Acceptable).gpus(8).build()), Map.of("r", "admit NotInQuota")),
                new Case("a General quota does not borrow from another tree", nodes("n", 2, "sim-gpu"), List.of(teamA, teamB),
                        List.of(aRun("mine").quota("a/gpu").gpus(8).running(InQuota, 0, "n-1")),
                        List.of(aRun("r").quota("a/gpu").idle(IdleMode.Acceptable).gpus(8).build()), Map.of("r", "WaitingForIdleCapacity")),
                new Case("Dedicated quotas of one model lend to each other", nodes("h", 2, "h100"),
                        List.of(aQuota("a/h100").dedicated("h100").minGpus(8).build(), aQuota("b/h100").dedicated("h100").minGpus(8).build()),
                        List.of(), List.of(aRun("r").quota("a/h100").idle(IdleMode.OnlyIdle).instances(2).gpus(8).build()),
                        Map.of("r", "admit NotInQuota")),
                new Case("a Dedicated quota's runs stay on its model's nodes", List.of(aNode("s").model("sim-gpu").build()),
                        List.of(aQuota("a/h100").dedicated("h100").min(io.slipstream.api.spec.Resources.NONE).build()), List.of(),
                        List.of(aRun("r").quota("a/h100").idle(IdleMode.OnlyIdle).gpus(1).build()), Map.of("r", "NoNodeFits")),

                // Reclaim
                new Case("a guaranteed run reclaims its capacity from a borrower", nodes("n", 1, "sim-gpu"), List.of(teamA),
                        List.of(aRun("borrower").gpus(8).running(NotInQuota, 0, "n-1")),
                        List.of(aRun("owner").quota("a/gpu").gpus(8).build()), Map.of("borrower", "preempt", "owner", "WaitingForReclaim")),
                new Case("a guaranteed run is never reclaimed by another quota", nodes("n", 1, "sim-gpu"), List.of(teamA, teamB),
                        List.of(aRun("b-guaranteed").quota("b/gpu").gpus(8).running(InQuota, 0, "n-1")),
                        List.of(aRun("a-run").quota("a/gpu").gpus(8).build()), Map.of("a-run", "WaitingForResources")),
                new Case("only victims that help are preempted", nodes("n", 2, "sim-gpu"), List.of(teamA),
                        List.of(aRun("small-1").gpus(4).running(NotInQuota, 0, "n-1"), aRun("small-2").gpus(4).running(NotInQuota, 4, "n-1"),
                                aRun("elsewhere").gpus(4).running(NotInQuota, 0, "n-2")),
                        List.of(aRun("owner").quota("a/gpu").gpus(6).build()),
                        Map.of("elsewhere", "preempt", "owner", "WaitingForReclaim")),
                new Case("lower priority borrowers go first", nodes("n", 2, "sim-gpu"), List.of(teamA),
                        List.of(aRun("important").priority(5).gpus(8).running(NotInQuota, 0, "n-1"),
                                aRun("cheap").priority(1).gpus(8).running(NotInQuota, 0, "n-2")),
                        List.of(aRun("owner").quota("a/gpu").gpus(8).build()),
                        Map.of("cheap", "preempt", "owner", "WaitingForReclaim")),
                new Case("a run being reclaimed for is not given a second set of victims",
                        nodes("n", 2, "sim-gpu"), List.of(teamA),
                        List.of(new ActiveRun(new RunId("going"), null, IdleMode.OnlyIdle, 0, T0, null, NotInQuota,
                                        List.of(new Allocation(0, "n-1", new io.slipstream.api.spec.Resources(32000, 256L << 30, 8, null),
                                                List.of(0, 1, 2, 3, 4, 5, 6, 7))), true, new RunId("owner")),
                                aRun("other").gpus(8).running(NotInQuota, 0, "n-2")),
                        List.of(aRun("owner").quota("a/gpu").gpus(8).build()), Map.of("owner", "WaitingForReclaim")),
                new Case("within a quota, LowerPriority preempts lower-priority guaranteed runs", nodes("n", 1, "sim-gpu"),
                        List.of(aQuota("a/gpu").minGpus(8).lowerPriorityPreemption().build()),
                        List.of(aRun("low").quota("a/gpu").priority(1).gpus(8).running(InQuota, 0, "n-1")),
                        List.of(aRun("high").quota("a/gpu").priority(9).gpus(8).build()), Map.of("low", "preempt", "high", "WaitingForReclaim")),
                new Case("within a quota, Never leaves them alone", nodes("n", 1, "sim-gpu"), List.of(teamA),
                        List.of(aRun("low").quota("a/gpu").priority(1).gpus(8).running(InQuota, 0, "n-1")),
                        List.of(aRun("high").quota("a/gpu").priority(9).gpus(8).build()), Map.of("high", "WaitingForQuota")),

                new Case("a Disabled run larger than its quota's guarantee waits for the quota to grow, whatever runs", nodes("n", 2, "sim-gpu"),
                        List.of(teamA), List.of(), List.of(aRun("r").quota("a/gpu").gpus(8).instances(2).build()), Map.of("r", "ExceedsGuarantee")),
                new Case("a run that can never borrow is told so before that its quota's max is full", nodes("n", 4, "sim-gpu"),
                        List.of(aQuota("a/gpu").minGpus(8).maxGpus(24).build()),
                        List.of(aRun("mine").quota("a/gpu").gpus(8).running(InQuota, 0, "n-1")),
                        List.of(aRun("first").quota("a/gpu").idle(IdleMode.Acceptable).priority(5).gpus(8).build(),
                                aRun("second").quota("a/gpu").priority(1).gpus(8).instances(2).build()),
                        Map.of("first", "admit NotInQuota", "second", "ExceedsGuarantee")),
                new Case("a borrower that fits its quota's max waits for the quota's other runs", nodes("n", 4, "sim-gpu"),
                        List.of(aQuota("a/gpu").minGpus(8).maxGpus(16).build()),
                        List.of(aRun("mine").quota("a/gpu").gpus(8).running(InQuota, 0, "n-1"),
                                aRun("more").quota("a/gpu").idle(IdleMode.OnlyIdle).gpus(8).running(NotInQuota, 0, "n-2")),
                        List.of(aRun("r").quota("a/gpu").idle(IdleMode.OnlyIdle).gpus(8).build()), Map.of("r", "WaitingForQuota")),
                new Case("a run without a quota has nothing to borrow once quotas guarantee the whole cluster", nodes("n", 2, "sim-gpu"),
                        List.of(teamA, teamB), List.of(), List.of(aRun("r").gpus(1).build()), Map.of("r", "NothingToBorrow")),
                new Case("a borrower whose pool could never lend that much waits for quotas, not for runs", nodes("n", 1, "sim-gpu"),
                        List.of(teamA, aQuota("b/gpu").build()), List.of(),
                        List.of(aRun("r").quota("b/gpu").idle(IdleMode.OnlyIdle).gpus(1).build()), Map.of("r", "NothingToBorrow")),
                new Case("a borrower of a pool whose guarantees are busy waits for idle capacity", nodes("n", 1, "sim-gpu"),
                        List.of(teamA, aQuota("b/gpu").parent("a/gpu").build()),
                        List.of(aRun("mine").quota("a/gpu").gpus(8).running(InQuota, 0, "n-1")),
                        List.of(aRun("r").quota("b/gpu").idle(IdleMode.OnlyIdle).gpus(1).build()), Map.of("r", "WaitingForIdleCapacity")),
                new Case("capacity no quota guarantees is lent once, not to every pool", nodes("n", 2, "sim-gpu"),
                        List.of(teamA, aQuota("b/gpu").build(), aQuota("c/gpu").build()),
                        List.of(aRun("b-borrows").quota("b/gpu").idle(IdleMode.OnlyIdle).gpus(8).running(NotInQuota, 0, "n-1")),
                        List.of(aRun("c-wants").quota("c/gpu").idle(IdleMode.OnlyIdle).gpus(8).build()), Map.of("c-wants", "WaitingForIdleCapacity")),
                new Case("a General quota's cpu-only runs may use nodes whose GPUs are Dedicated", nodes("h", 1, "h100"),
                        List.of(aQuota("a/h100").dedicated("h100").minGpus(4).build(),
                                aQuota("team/cpu").min(new io.slipstream.api.spec.Resources(8000, 32L << 30, 0, null)).build()),
                        List.of(), List.of(aRun("cpu-only").quota("team/cpu").gpus(0).cpu(4).build()), Map.of("cpu-only", "admit InQuota")),

                // Promotion
                new Case("an Acceptable borrower is promoted when its guarantee frees", nodes("n", 2, "sim-gpu"), List.of(teamA),
                        List.of(aRun("r").quota("a/gpu").idle(IdleMode.Acceptable).gpus(8).running(NotInQuota, 0, "n-1")), List.of(),
                        Map.of("r", "promote")),
                new Case("a promotion does not take the guarantee a reclaim freed, once the victims are gone", nodes("n", 2, "sim-gpu"), List.of(teamA),
                        List.of(aRun("own-borrower").quota("a/gpu").idle(IdleMode.Acceptable).gpus(1).running(NotInQuota, 0, "n-2")),
                        List.of(aRun("reclaimer").quota("a/gpu").gpus(8).reclaimed().build()),
                        Map.of("reclaimer", "admit InQuota")),
                // Whole nodes kept for guaranteed gangs (found by review: the hold once applied to the whole queue and every model)
                new Case("a gang waiting for whole nodes does not hold back a guaranteed run before it in the queue", nodes("n", 6, "sim-gpu"),
                        List.of(aQuota("a/gpu").minGpus(4).build(), aQuota("b/gpu").minGpus(44).build()),
                        List.of(aRun("b1").quota("b/gpu").gpus(5).running(InQuota, 0, "n-1"), aRun("b2").quota("b/gpu").gpus(5).running(InQuota, 0, "n-2"),
                                aRun("b3").quota("b/gpu").gpus(5).running(InQuota, 0, "n-3"), aRun("b4").quota("b/gpu").gpus(5).running(InQuota, 0, "n-4")),
                        List.of(aRun("gang").quota("b/gpu").instances(3).gpus(8).build(),
                                aRun("first").quota("a/gpu").gpus(4).priority(10).submittedSecondsAfterStart(10).build()),
                        Map.of("first", "admit InQuota", "gang", "WaitingForResources")),
                new Case("a gang confined to one GPU model does not hold back whole nodes of another", List.of(aNode("a100-1").model("a100").build(),
                        aNode("h100-1").model("h100").build(), aNode("h100-2").model("h100").build(), aNode("h100-3").model("h100").build(),
                        aNode("h100-4").model("h100").build()),
                        List.of(aQuota("b/h100").dedicated("h100").minGpus(32).build(), aQuota("a/gpu").minGpus(8).build()),
                        List.of(aRun("b1").quota("b/h100").gpus(1).running(InQuota, 0, "h100-1"), aRun("b2").quota("b/h100").gpus(1).running(InQuota, 0, "h100-2")),
                        List.of(aRun("gang").quota("b/h100").instances(3).gpus(8).build(),
                                aRun("first").quota("a/gpu").gpus(4).priority(10).submittedSecondsAfterStart(10).build(),
                                aRun("later").quota("a/gpu").gpus(4).submittedSecondsAfterStart(20).build()),
                        Map.of("first", "admit InQuota", "later", "admit InQuota", "gang", "WaitingForResources")),
                // Runs waiting for nodes are told their quota has room as far as its guarantee goes, in queue order (issue 19:
                // every run of a quota whose guarantee had room for one was told so, and the simulator counted each one's
                // guarantee wait from then, though most were waiting for their own quota)
                new Case("the runs after a guaranteed run waiting for nodes are not told its guarantee is theirs too", nodes("n", 2, "sim-gpu"),
                        List.of(teamA, teamB),
                        List.of(aRun("b1").quota("b/gpu").gpus(1).running(InQuota, 0, "n-1"), aRun("b2").quota("b/gpu").gpus(1).running(InQuota, 0, "n-2")),
                        List.of(aRun("first").quota("a/gpu").gpus(8).build(), aRun("second").quota("a/gpu").gpus(8).submittedSecondsAfterStart(1).build()),
                        Map.of("first", "WaitingForResources", "second", "WaitingForQuota")),
                new Case("runs waiting for nodes are told they have room as far as the guarantee goes, in queue order", nodes("n", 2, "sim-gpu"),
                        List.of(aQuota("a/gpu").minGpus(16).build(), teamB),
                        List.of(aRun("b1").quota("b/gpu").gpus(1).running(InQuota, 0, "n-1"), aRun("b2").quota("b/gpu").gpus(1).running(InQuota, 0, "n-2")),
                        List.of(aRun("a1").quota("a/gpu").gpus(8).build(), aRun("a2").quota("a/gpu").gpus(8).submittedSecondsAfterStart(1).build(),
                                aRun("a3").quota("a/gpu").gpus(8).submittedSecondsAfterStart(2).build()),
                        Map.of("a1", "WaitingForResources", "a2", "WaitingForResources", "a3", "WaitingForQuota")),
                new Case("the wait reason changes, not what starts: a smaller run after a waiting one still takes the guarantee where it fits",
                        nodes("n", 2, "sim-gpu"), List.of(aQuota("a/gpu").minGpus(12).build(), teamB),
                        List.of(aRun("b1").quota("b/gpu").gpus(1).running(InQuota, 0, "n-1"), aRun("b2").quota("b/gpu").gpus(1).running(InQuota, 0, "n-2")),
                        List.of(aRun("gang").quota("a/gpu").gpus(8).build(), aRun("later").quota("a/gpu").gpus(8).submittedSecondsAfterStart(1).build(),
                                aRun("small").quota("a/gpu").gpus(4).submittedSecondsAfterStart(2).build()),
                        Map.of("gang", "WaitingForResources", "later", "WaitingForQuota", "small", "admit InQuota")),
                new Case("an OnlyIdle borrower is never promoted", nodes("n", 2, "sim-gpu"), List.of(teamA),
                        List.of(aRun("r").quota("a/gpu").idle(IdleMode.OnlyIdle).gpus(8).running(NotInQuota, 0, "n-1")), List.of(),
                        Map.of()),

                // Ordering
                new Case("higher priority goes first", nodes("n", 1, "sim-gpu"), List.of(), List.of(),
                        List.of(aRun("low").gpus(8).build(), aRun("high").gpus(8).priority(10).submittedSecondsAfterStart(60).build()),
                        Map.of("high", "admit NotInQuota", "low", "WaitingForIdleCapacity")),
                new Case("equal priority goes in submission order", nodes("n", 1, "sim-gpu"), List.of(), List.of(),
                        List.of(aRun("late").gpus(8).submittedSecondsAfterStart(5).build(), aRun("early").gpus(8).build()),
                        Map.of("early", "admit NotInQuota", "late", "WaitingForIdleCapacity"))
        ).map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decides(Case testCase) {
        CycleResult result = scheduler.schedule(new ClusterSnapshot(testCase.nodes(), testCase.quotas(), testCase.active(), testCase.pending()), T0);
        assertThat(outcome(result)).isEqualTo(new TreeMap<>(testCase.expected()));
    }

    @Test
    void packsGpuWorkOntoTheFullestNodeAndAssignsFreeGpus() {
        var busy = aRun("busy").gpus(4).running(NotInQuota, 0, "a-half");
        CycleResult result = scheduler.schedule(new ClusterSnapshot(List.of(aNode("a-half").build(), aNode("b-empty").build()), List.of(),
                List.of(busy), List.of(aRun("r").instances(2).gpus(2).build())), T0);
        Decision.Admit admit = result.admitted().get(0);
        assertThat(admit.placements()).extracting(Placement::node).containsExactly("a-half", "a-half");
        assertThat(admit.placements()).extracting(Placement::gpus).containsExactlyInAnyOrder(List.of(4, 5), List.of(6, 7));
    }

    /** A borrower that waits with GPUs idle is told what is idle and why it does not fit: too little, or in pieces. */
    @Test
    void aBorrowerWaitingWithGpusIdleIsToldWhatIsIdleAndWhyItDoesNotFit() {
        List<ActiveRun> halfFull = List.of(aRun("h1").gpus(4).running(NotInQuota, 0, "n-1"), aRun("h2").gpus(4).running(NotInQuota, 0, "n-2"),
                aRun("h3").gpus(4).running(NotInQuota, 0, "n-3"), aRun("h4").gpus(4).running(NotInQuota, 0, "n-4"));
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 4, "sim-gpu"), List.of(), halfFull,
                List.of(aRun("gang").instances(2).gpus(8).build(), aRun("big").instances(5).gpus(4).build())), T0);
        Map<String, String> messages = new TreeMap<>();
        result.waiting().forEach(w -> messages.put(w.runId().value(), w.reason() + ": " + w.message()));
        assertThat(messages.get("gang")).startsWith("WaitingForIdleCapacity: no idle capacity where its instances fit now: cpu=")
                .contains("gpu=16").contains("is idle where it may run, but not in pieces that hold its 2 instance(s) (the largest asks for");
        assertThat(messages.get("big")).startsWith("WaitingForIdleCapacity: its sharing pool cannot lend cpu=").contains("gpu=20")
                .contains("(idle on the nodes it may use: cpu=").contains("gpu=16");
    }

    @Test
    void waitingRunsCarryTheirPositionInTheirQuotasQueue() {
        var quota = aQuota("a/gpu").minGpus(8).build();
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 1, "sim-gpu"), List.of(quota),
                List.of(aRun("holder").quota("a/gpu").gpus(8).running(InQuota, 0, "n-1")), List.of(
                aRun("first").quota("a/gpu").gpus(8).build(),
                aRun("second").quota("a/gpu").gpus(8).submittedSecondsAfterStart(1).build(),
                aRun("other-queue").gpus(8).submittedSecondsAfterStart(2).build())), T0);
        Map<String, Integer> positions = new TreeMap<>();
        result.waiting().forEach(w -> positions.put(w.runId().value(), w.position()));
        assertThat(positions).containsExactlyEntriesOf(new TreeMap<>(Map.of("first", 1, "second", 2, "other-queue", 1)));
    }

    @Test
    void aLargeGuaranteedRunIsNotStarvedByAStreamOfSmallOnes() {
        var quota = aQuota("a/gpu").minGpus(24).build();
        // Three nodes have 2 GPUs busy with guaranteed work, one is empty; the big run needs two whole nodes.
        List<ActiveRun> active = new ArrayList<>(List.of(
                aRun("busy-1").quota("a/gpu").gpus(2).running(io.slipstream.api.run.RealTimeResources.InQuota, 0, "n-1"),
                aRun("busy-2").quota("a/gpu").gpus(2).running(io.slipstream.api.run.RealTimeResources.InQuota, 0, "n-2"),
                aRun("busy-3").quota("a/gpu").gpus(2).running(io.slipstream.api.run.RealTimeResources.InQuota, 0, "n-3")));
        List<PendingRun> pending = List.of(
                aRun("big").quota("a/gpu").idle(IdleMode.Disabled).instances(2).gpus(8).build(),
                aRun("small").idle(IdleMode.OnlyIdle).gpus(2).submittedSecondsAfterStart(1).build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 4, "sim-gpu"), List.of(quota), active, pending), T0);
        // The big run cannot start, so the two nodes it will use are held for it; the small run goes elsewhere.
        assertThat(outcome(result)).containsEntry("big", "WaitingForResources").containsEntry("small", "admit NotInQuota");
        Decision.Admit small = result.admitted().get(0);
        assertThat(small.placements()).extracting(Placement::node).doesNotContain("n-4", "n-1");
    }

    @Test
    void capacityReclaimedForARunGoesToItEvenWhenAnOlderRunWantsIt() {
        // One GPU is free: what the victims of "reclaimer" gave back. "older" (another quota) also fits its guarantee.
        var quotas = List.of(aQuota("a/gpu").minGpus(1).build(), aQuota("b/gpu").minGpus(1).build(), aQuota("c/gpu").minGpus(1).build());
        var busy = aRun("busy").quota("c/gpu").gpus(1).running(InQuota, 0, "n-1");
        var older = aRun("older").quota("b/gpu").gpus(1).build();
        var reclaimer = aRun("reclaimer").quota("a/gpu").gpus(1).submittedSecondsAfterStart(5).build();
        var cluster = List.of(aNode("n-1").gpus(2).build());

        CycleResult plain = scheduler.schedule(new ClusterSnapshot(cluster, quotas, List.of(busy), List.of(older, reclaimer)), T0);
        assertThat(outcome(plain)).containsEntry("older", "admit InQuota"); // queue order when nothing was reclaimed

        CycleResult reclaimed = scheduler.schedule(new ClusterSnapshot(cluster, quotas, List.of(busy), List.of(older, reclaimer.withReclaimed(true))), T0);
        assertThat(outcome(reclaimed)).containsEntry("reclaimer", "admit InQuota").doesNotContainEntry("older", "admit InQuota");
    }

    @Test
    void aRunWaitingForItsVictimsHoldsTheirNodesNotFreeCapacityAnEarlierRunNeeds() {
        // GPU 0 is free; GPU 1 is a victim stopping for "younger". "older" must get GPU 0, not lose it to younger's hold.
        var quota = aQuota("a/gpu").minGpus(2).build();
        var older = aRun("older").quota("a/gpu").gpus(1).build();
        var younger = aRun("younger").quota("a/gpu").gpus(1).submittedSecondsAfterStart(10).build();
        var victim = aRun("victim").gpus(1).running(NotInQuota, 1, "n-1");
        var stopping = new ActiveRun(victim.id(), null, IdleMode.OnlyIdle, 0, T0, null, NotInQuota, victim.allocations(), true, younger.id());

        CycleResult result = scheduler.schedule(new ClusterSnapshot(List.of(aNode("n-1").gpus(2).build()), List.of(quota), List.of(stopping),
                List.of(older, younger)), T0);

        assertThat(outcome(result)).containsEntry("older", "admit InQuota").containsEntry("younger", "WaitingForReclaim");
        assertThat(result.admitted()).singleElement().satisfies(a -> assertThat(a.placements().get(0).gpus()).containsExactly(0));
    }

    @Test
    void reclaimHoldsTheFreedCapacityForTheOwnerUntilTheVictimIsGone() {
        var quota = aQuota("a/gpu").minGpus(8).build();
        var owner = aRun("owner").quota("a/gpu").gpus(8).build();
        var late = aRun("late").gpus(8).submittedSecondsAfterStart(9).build();
        // Cycle 1: the borrower is preempted for the owner.
        var borrower = aRun("borrower").gpus(8).running(NotInQuota, 0, "n-1");
        CycleResult first = scheduler.schedule(new ClusterSnapshot(nodes("n", 1, "sim-gpu"), List.of(quota), List.of(borrower), List.of(owner)), T0);
        assertThat(first.preempted()).singleElement().satisfies(p -> assertThat(p.forRun().value()).isEqualTo("owner"));
        // Cycle 2: the victim is still stopping; nobody else may take what it frees.
        var stopping = new ActiveRun(borrower.id(), null, IdleMode.OnlyIdle, 0, T0, null, NotInQuota, borrower.allocations(), true, owner.id());
        CycleResult second = scheduler.schedule(new ClusterSnapshot(nodes("n", 1, "sim-gpu"), List.of(quota), List.of(stopping), List.of(owner, late)), T0);
        assertThat(outcome(second)).containsEntry("owner", "WaitingForReclaim").doesNotContainValue("preempt");
        // Cycle 3: the victim is gone; the owner starts, guaranteed, before the later run.
        CycleResult third = scheduler.schedule(new ClusterSnapshot(nodes("n", 1, "sim-gpu"), List.of(quota), List.of(), List.of(owner, late)), T0);
        // The later run has no quota and the quota guarantees all of the node: it has nothing to borrow, and says so.
        assertThat(outcome(third)).containsEntry("owner", "admit InQuota").containsEntry("late", "NothingToBorrow");
    }

    @Test
    void aPromotionDoesNotTakeTheGuaranteeARunIsReclaiming() {
        var quota = aQuota("a/gpu").minGpus(8).build();
        var owner = aRun("owner").quota("a/gpu").gpus(8).build();
        var stopping = new ActiveRun(new RunId("victim"), null, IdleMode.OnlyIdle, 0, T0, null, NotInQuota,
                List.of(new Allocation(0, "n-1", new io.slipstream.api.spec.Resources(32000, 256L << 30, 8, null), List.of(0, 1, 2, 3, 4, 5, 6, 7))),
                true, owner.id());
        var acceptable = aRun("acceptable").quota("a/gpu").idle(IdleMode.Acceptable).gpus(4).running(NotInQuota, 0, "n-2");
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 2, "sim-gpu"), List.of(quota), List.of(stopping, acceptable),
                List.of(owner)), T0);
        assertThat(outcome(result)).isEqualTo(Map.of("owner", "WaitingForReclaim"));
    }

    @Test
    void amongEqualPriorityVictimsTheOneThatLosesLeastWorkGoes() {
        var quota = aQuota("a/gpu").minGpus(8).build();
        var old = new ActiveRun(new RunId("old-no-checkpoint"), null, IdleMode.OnlyIdle, 0, T0, null, NotInQuota,
                List.of(new Allocation(0, "n-1", new io.slipstream.api.spec.Resources(32000, 256L << 30, 8, null), List.of(0, 1, 2, 3, 4, 5, 6, 7))),
                false, null);
        var fresh = new ActiveRun(new RunId("checkpointed"), null, IdleMode.OnlyIdle, 0, T0, T0.plusSeconds(3500), NotInQuota,
                List.of(new Allocation(0, "n-2", new io.slipstream.api.spec.Resources(32000, 256L << 30, 8, null), List.of(0, 1, 2, 3, 4, 5, 6, 7))),
                false, null);
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 2, "sim-gpu"), List.of(quota), List.of(old, fresh),
                List.of(aRun("owner").quota("a/gpu").gpus(8).build())), T0.plusSeconds(3600));
        assertThat(result.preempted()).extracting(p -> p.runId().value()).containsExactly("checkpointed");
    }
}
