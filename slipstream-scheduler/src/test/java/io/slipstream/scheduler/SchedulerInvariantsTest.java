package io.slipstream.scheduler;

import static io.slipstream.scheduler.Builders.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Random sequences of submissions, admissions and finishes, checked after every cycle against the properties that
 * must always hold. A failure names its seed; rerun one seed by setting {@code -Dscheduler.seed=N}.
 */
class SchedulerInvariantsTest {
    private static final int SEQUENCES = 40;
    private static final int STEPS = 150;

    private final Scheduler scheduler = new Scheduler();

    @Test
    void invariantsHoldOverRandomSequences() {
        String only = System.getProperty("scheduler.seed");
        if (only != null) {
            runSequence(Long.parseLong(only));
            return;
        }
        for (long seed = 1; seed <= SEQUENCES; seed++) {
            runSequence(seed);
        }
    }

    private void runSequence(long seed) {
        try {
            new Simulation(seed).run();
        } catch (AssertionError e) {
            throw new AssertionError("invariant broken with seed " + seed + " (rerun with -Dscheduler.seed=" + seed + ")", e);
        }
    }

    private final class Simulation {
        private final Random random;
        private final List<NodeState> nodes = new ArrayList<>();
        private final Map<RunId, PendingRun> pending = new HashMap<>();
        private final Map<RunId, List<Placement>> running = new HashMap<>();
        private final Map<RunId, PendingRun> runningRuns = new HashMap<>();
        private int next;

        Simulation(long seed) {
            this.random = new Random(seed);
            int count = 1 + random.nextInt(6);
            for (int i = 0; i < count; i++) {
                String model = random.nextBoolean() ? "sim-gpu" : "other-gpu";
                nodes.add(NodeState.empty("node-" + i, new Resources((8 + random.nextInt(56)) * 1000L, 256L << 30, random.nextInt(9), model)));
            }
        }

        void run() {
            for (int step = 0; step < STEPS; step++) {
                int action = random.nextInt(10);
                if (action < 6) {
                    submit();
                } else if (!running.isEmpty()) {
                    finishOne();
                }
                cycle();
            }
        }

        private void submit() {
            int instances = 1 + random.nextInt(4);
            int gpus = random.nextInt(5);
            String model = random.nextInt(4) == 0 ? "other-gpu" : null;
            List<InstanceRequest> requests = new ArrayList<>();
            for (int rank = 0; rank < instances; rank++) {
                requests.add(new InstanceRequest(rank, "main", new Resources((1 + random.nextInt(8)) * 1000L, 1L << 30, gpus, model)));
            }
            RunId id = new RunId("run-" + next++);
            pending.put(id, new PendingRun(id, "team-a", random.nextInt(3), T0.plusSeconds(random.nextInt(1000)), requests));
        }

        private void finishOne() {
            List<RunId> ids = new ArrayList<>(running.keySet());
            Collections.sort(ids);
            RunId done = ids.get(random.nextInt(ids.size()));
            running.remove(done);
            runningRuns.remove(done);
        }

        private ClusterSnapshot snapshot(List<PendingRun> order) {
            List<NodeState> current = new ArrayList<>();
            for (NodeState node : nodes) {
                NodeState state = node;
                for (var entry : running.entrySet()) {
                    PendingRun run = runningRuns.get(entry.getKey());
                    for (Placement placement : entry.getValue()) {
                        if (placement.node().equals(node.name())) {
                            state = state.withAllocation(run.instances().get(placement.rank()).resources(), placement.gpus());
                        }
                    }
                }
                current.add(state);
            }
            return new ClusterSnapshot(current, order);
        }

        private void cycle() {
            List<PendingRun> order = new ArrayList<>(pending.values());
            order.sort((a, b) -> a.id().compareTo(b.id()));
            ClusterSnapshot snapshot = snapshot(order);
            CycleResult result = scheduler.schedule(snapshot, T0);

            // Deterministic: the same snapshot in another order gives the same decisions.
            List<PendingRun> shuffled = new ArrayList<>(order);
            Collections.shuffle(shuffled, random);
            List<NodeState> shuffledNodes = new ArrayList<>(snapshot.nodes());
            Collections.shuffle(shuffledNodes, random);
            assertThat(scheduler.schedule(new ClusterSnapshot(shuffledNodes, shuffled), T0)).isEqualTo(result);

            assertThat(result.decisions()).extracting(Decision::runId).doesNotHaveDuplicates().hasSize(order.size());
            for (Decision.Admit admit : result.admitted()) {
                PendingRun run = pending.remove(admit.runId());
                // Gangs are all or nothing: every rank placed exactly once.
                assertThat(admit.placements()).extracting(Placement::rank)
                        .containsExactlyInAnyOrderElementsOf(run.instances().stream().map(InstanceRequest::rank).toList());
                running.put(admit.runId(), admit.placements());
                runningRuns.put(admit.runId(), run);
            }
            assertNoNodeOverCapacity();
        }

        private void assertNoNodeOverCapacity() {
            for (NodeState node : nodes) {
                long cpu = 0;
                long memory = 0;
                Set<Integer> gpus = new HashSet<>();
                for (var entry : running.entrySet()) {
                    PendingRun run = runningRuns.get(entry.getKey());
                    for (Placement placement : entry.getValue().stream().filter(p -> p.node().equals(node.name())).collect(Collectors.toList())) {
                        Resources resources = run.instances().get(placement.rank()).resources();
                        cpu += resources.milliCpu();
                        memory += resources.memoryBytes();
                        assertThat(placement.gpus()).hasSize(resources.gpu());
                        for (int gpu : placement.gpus()) {
                            assertThat(gpus.add(gpu)).as("GPU %d of %s given twice", gpu, node.name()).isTrue();
                            assertThat(gpu).isBetween(0, node.capacity().gpu() - 1);
                        }
                        if (resources.gpu() > 0 && resources.gpuModel() != null) {
                            assertThat(node.capacity().gpuModel()).isEqualTo(resources.gpuModel());
                        }
                    }
                }
                assertThat(cpu).as("cpu of %s", node.name()).isLessThanOrEqualTo(node.capacity().milliCpu());
                assertThat(memory).as("memory of %s", node.name()).isLessThanOrEqualTo(node.capacity().memoryBytes());
            }
        }
    }
}
