package io.slipstream.scheduler;

import static io.slipstream.api.run.RealTimeResources.InQuota;
import static io.slipstream.api.run.RealTimeResources.NotInQuota;
import static io.slipstream.scheduler.Builders.T0;
import static io.slipstream.scheduler.Builders.aNode;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static io.slipstream.scheduler.Builders.outcome;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A node closed to new instances (the server closes nodes cordoned, draining or down: {@code NodeState.schedulable}
 * false) with runs still on it: they keep running, nothing new goes there, and what they hold there does not use up
 * what the open nodes lend. Two nodes of 8 GPUs, {@code n-1} cordoned.
 */
class CordonedNodesTest {
    private static final List<NodeState> ONE_CORDONED = List.of(aNode("n-1").unschedulable().build(), aNode("n-2").build());

    record Case(String name, List<QuotaState> quotas, List<ActiveRun> active, List<PendingRun> pending, Map<String, String> expected,
                Map<String, String> placedOn) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        QuotaState teamA = aQuota("a/gpu").minGpus(8).build();
        return Stream.of(
                new Case("what runs there keeps running, and the next run goes to the open node", List.of(),
                        List.of(aRun("there").gpus(8).running(NotInQuota, 0, "n-1")), List.of(aRun("r").gpus(8).build()),
                        Map.of("r", "admit NotInQuota"), Map.of("r", "n-2")),
                new Case("nothing new goes there though it has room", List.of(),
                        List.of(aRun("there").gpus(4).running(NotInQuota, 0, "n-1"), aRun("busy").gpus(8).running(NotInQuota, 0, "n-2")),
                        List.of(aRun("r").gpus(4).build()), Map.of("r", "WaitingForIdleCapacity"), Map.of()),
                new Case("a guaranteed run is not placed there either: it reclaims on the open node", List.of(teamA),
                        List.of(aRun("borrower").gpus(8).running(NotInQuota, 0, "n-2")), List.of(aRun("owner").quota("a/gpu").gpus(8).build()),
                        Map.of("borrower", "preempt", "owner", "WaitingForReclaim"), Map.of()),
                new Case("a guaranteed run there leaves the open node to borrowers", List.of(teamA),
                        List.of(aRun("guaranteed").quota("a/gpu").gpus(8).running(InQuota, 0, "n-1")), List.of(aRun("r").gpus(8).build()),
                        Map.of("r", "admit NotInQuota"), Map.of("r", "n-2")),
                new Case("a gang that needs it waits for a change", List.of(), List.of(), List.of(aRun("gang").instances(2).gpus(8).build()),
                        Map.of("gang", "NoNodeFits"), Map.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decides(Case testCase) {
        CycleResult result = new Scheduler().schedule(new ClusterSnapshot(ONE_CORDONED, testCase.quotas(), testCase.active(), testCase.pending()), T0);
        assertThat(outcome(result)).isEqualTo(new TreeMap<>(testCase.expected()));
        Map<String, String> placedOn = new TreeMap<>();
        result.admitted().forEach(admit -> admit.placements().forEach(p -> placedOn.put(admit.runId().value(), p.node())));
        assertThat(placedOn).isEqualTo(new TreeMap<>(testCase.placedOn()));
    }

    @Test
    void aKeptStateCountsARunOnAClosedNodeUntilItIsRemoved() {
        ClusterState state = new ClusterState(ONE_CORDONED, List.of());
        ActiveRun there = aRun("there").gpus(8).running(NotInQuota, 0, "n-1");
        state.add(there);
        assertThat(state.lendableGpus(null)).as("its part of n-1 beside it, n-2 to lend").isEqualTo(8);
        state.remove(there.id());
        assertThat(state.lendableGpus(null)).as("gone: n-1 is no capacity").isEqualTo(8);
        assertThat(state.book.unguaranteed().gpu).isEqualTo(8);
    }

    @Test
    void theLedgerCountsWhatARunHoldsOnAClosedNodeAsTheSchedulerDoes() {
        QuotaLedger ledger = QuotaLedger.of(new ClusterSnapshot(ONE_CORDONED, List.of(), List.of(aRun("there").gpus(8).running(NotInQuota, 0, "n-1")),
                List.of()));
        assertThat(ledger.capacity().gpu()).as("the open node, and what is held on the closed one").isEqualTo(16);
        assertThat(ledger.unguaranteed().gpu()).as("what may be borrowed: the open node and what is held on the closed one").isEqualTo(16);
    }
}
