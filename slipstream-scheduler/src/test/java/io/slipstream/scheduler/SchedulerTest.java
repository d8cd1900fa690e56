package io.slipstream.scheduler;

import static io.slipstream.scheduler.Builders.T0;
import static io.slipstream.scheduler.Builders.aNode;
import static io.slipstream.scheduler.Builders.aRun;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SchedulerTest {
    private final Scheduler scheduler = new Scheduler();

    /** One table row: a cluster, a queue, and what should happen to each run ("admit" or a wait reason). */
    record Case(String name, List<NodeState> nodes, List<PendingRun> pending, Map<String, String> expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                new Case("a run that fits is admitted",
                        List.of(aNode("n1").build()),
                        List.of(aRun("a").gpus(4).build()),
                        Map.of("a", "admit")),
                new Case("a gang spreads over nodes when no single node holds it",
                        List.of(aNode("n1").build(), aNode("n2").build()),
                        List.of(aRun("a").instances(2).gpus(8).build()),
                        Map.of("a", "admit")),
                new Case("a gang that does not fit whole is not started in part",
                        List.of(aNode("n1").build(), aNode("n2").build()),
                        List.of(aRun("a").instances(3).gpus(8).build()),
                        Map.of("a", "WaitingForResources")),
                new Case("an instance larger than every node can never fit",
                        List.of(aNode("n1").build()),
                        List.of(aRun("a").gpus(16).build()),
                        Map.of("a", "NoNodeFits")),
                new Case("a GPU model nobody has can never fit",
                        List.of(aNode("n1").build()),
                        List.of(aRun("a").gpus(1).model("h100").build()),
                        Map.of("a", "NoNodeFits")),
                new Case("higher priority goes first",
                        List.of(aNode("n1").build()),
                        List.of(aRun("low").gpus(8).build(), aRun("high").gpus(8).priority(10).submittedSecondsAfterStart(60).build()),
                        Map.of("high", "admit", "low", "WaitingForResources")),
                new Case("equal priority goes in submission order",
                        List.of(aNode("n1").build()),
                        List.of(aRun("late").gpus(8).submittedSecondsAfterStart(5).build(), aRun("early").gpus(8).build()),
                        Map.of("early", "admit", "late", "WaitingForResources")),
                new Case("a run that waits does not block smaller ones behind it",
                        List.of(aNode("n1").build()),
                        List.of(aRun("big").gpus(8).instances(2).build(), aRun("small").gpus(2).submittedSecondsAfterStart(1).build()),
                        Map.of("big", "WaitingForResources", "small", "admit")),
                new Case("cpu bounds placement as well as GPUs",
                        List.of(aNode("n1").cpu(4).build()),
                        List.of(aRun("a").cpu(3).build(), aRun("b").cpu(3).submittedSecondsAfterStart(1).build()),
                        Map.of("a", "admit", "b", "WaitingForResources")),
                new Case("unschedulable nodes take nothing",
                        List.of(aNode("n1").unschedulable().build()),
                        List.of(aRun("a").gpus(1).build()),
                        Map.of("a", "NoNodeFits"))
        ).map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decides(Case testCase) {
        CycleResult result = scheduler.schedule(new ClusterSnapshot(testCase.nodes(), testCase.pending()), T0);
        Map<String, String> actual = result.decisions().stream().collect(Collectors.toMap(
                d -> d.runId().value(),
                d -> d instanceof Decision.Wait wait ? wait.reason() : "admit"));
        assertThat(actual).isEqualTo(testCase.expected());
    }

    @Test
    void packsGpuWorkOntoTheFullestNodeAndAssignsDistinctGpus() {
        NodeState half = aNode("a-half").build().withAllocation(new Resources(1000, 1L << 30, 4, null), List.of(0, 1, 2, 3));
        NodeState empty = aNode("b-empty").build();
        CycleResult result = scheduler.schedule(new ClusterSnapshot(List.of(empty, half),
                List.of(aRun("r").instances(2).gpus(2).build())), T0);
        Decision.Admit admit = result.admitted().get(0);
        assertThat(admit.placements()).extracting(Placement::node).containsExactly("a-half", "a-half");
        assertThat(admit.placements()).extracting(Placement::gpus).containsExactly(List.of(4, 5), List.of(6, 7));
    }

    @Test
    void waitingRunsCarryTheirPositionInTheQueue() {
        CycleResult result = scheduler.schedule(new ClusterSnapshot(List.of(aNode("n1").build()), List.of(
                aRun("first").gpus(8).build(),
                aRun("second").gpus(8).submittedSecondsAfterStart(1).build(),
                aRun("third").gpus(8).submittedSecondsAfterStart(2).build())), T0);
        assertThat(result.waiting()).extracting(Decision.Wait::runId, Decision.Wait::position)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(new RunId("second"), 1), org.assertj.core.groups.Tuple.tuple(new RunId("third"), 2));
        assertThat(result.waiting().get(0).message()).contains("1 instance(s)");
    }
}
