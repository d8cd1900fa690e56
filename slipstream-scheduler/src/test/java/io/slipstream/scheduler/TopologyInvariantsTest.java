package io.slipstream.scheduler;

import static io.slipstream.scheduler.Builders.aNode;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Random topologies, runs and reclaims, checked after every cycle: a running group that must be in one domain of its
 * level is inside one domain of that level, each slice of a group that has slices is inside one domain of its slice
 * level, and no node holds more than it has. A failure names its seed; rerun one
 * with {@code -Dtopology.seed=N}.
 */
class TopologyInvariantsTest {
    private static final int SEQUENCES = 150;
    private static final int STEPS = 40;
    private static final List<String> LEVELS = List.of("block", "rack", "host");

    @Test
    void aRequiredGroupIsAlwaysInsideOneDomainOfItsLevelAndSlicesAlwaysHold() {
        String only = System.getProperty("topology.seed");
        long first = only == null ? 1 : Long.parseLong(only);
        long last = only == null ? SEQUENCES : first;
        int constrainedRuns = 0;
        int slicedRuns = 0;
        for (long seed = first; seed <= last; seed++) {
            try {
                Sequence sequence = new Sequence(seed);
                constrainedRuns += sequence.run();
                slicedRuns += sequence.slicedRuns();
            } catch (AssertionError e) {
                throw new AssertionError("invariant broken with seed " + seed + " (rerun with -Dtopology.seed=" + seed + "): " + e.getMessage(), e);
            }
        }
        assertThat(constrainedRuns).as("constrained runs that ran, over all sequences").isGreaterThan(SEQUENCES);
        assertThat(slicedRuns).as("runs in slices that ran, over all sequences").isGreaterThan(SEQUENCES / 2);
    }

    private static final class Sequence {
        private final Random random;
        private final List<NodeState> nodes = new ArrayList<>();
        private final Map<String, NodeState> byName = new HashMap<>();
        private final Map<RunId, PendingRun> runs = new HashMap<>();
        private final Settling cluster;
        private final Set<RunId> sawRunning = new HashSet<>();

        Sequence(long seed) {
            random = new Random(seed);
            int blocks = 1 + random.nextInt(3);
            for (int b = 1; b <= blocks; b++) {
                int racks = 1 + random.nextInt(3);
                for (int r = 1; r <= racks; r++) {
                    int perRack = 1 + random.nextInt(4);
                    for (int n = 1; n <= perRack; n++) {
                        // Some nodes lack a rack label, or both: they are in no domain of that level.
                        int labels = random.nextInt(10) == 0 ? random.nextInt(2) : 2;
                        String name = "n" + b + r + n;
                        String[] domains = labels == 2 ? new String[] {"b" + b, "r" + r, name} : labels == 1 ? new String[] {"b" + b} : new String[0];
                        NodeState node = aNode(name).gpus(random.nextBoolean() ? 8 : 4).in(domains).build();
                        nodes.add(node);
                        byName.put(node.name(), node);
                    }
                }
            }
            int gpus = nodes.stream().mapToInt(n -> n.capacity().gpu()).sum();
            List<QuotaState> quotas = List.of(aQuota("org/root").minGpus(gpus).build(), aQuota("a/gpu").minGpus(gpus / 2).parent("org/root").build(),
                    aQuota("b/gpu").parent("org/root").build());
            cluster = new Settling(new Scheduler(), nodes, quotas, 1 + random.nextInt(2));
        }

        /** Returns how many runs with a Required group ran. */
        int run() {
            for (int step = 0; step < STEPS; step++) {
                switch (random.nextInt(4)) {
                    case 0, 1 -> submit(step);
                    case 2 -> finishOne();
                    default -> { }
                }
                cluster.cycle();
                check();
            }
            return (int) sawRunning.stream().filter(id -> required(runs.get(id)) != null).count();
        }

        private void submit(int step) {
            int[] sizes = {1, 2, 4, 8};
            int instances = 1 + random.nextInt(4);
            var builder = aRun("run-" + step).instances(instances).gpus(sizes[random.nextInt(sizes.length)]).submittedSecondsAfterStart(step);
            int kind = random.nextInt(5);
            int level = kind == 0 ? 0 : 1;
            boolean required = kind < 3;
            if (kind < 4) {
                // Slices of 2 (or the whole group), in a domain of the group's level or a narrower one, now and then.
                int slice = random.nextInt(3) == 0 ? (instances % 2 == 0 && random.nextBoolean() ? 2 : instances) : 0;
                int sliceLevel = level + random.nextInt(LEVELS.size() - level);
                if (slice > 0) {
                    builder.within(level, LEVELS.get(level), required, slice, sliceLevel, LEVELS.get(sliceLevel));
                } else {
                    builder.within(level, LEVELS.get(level), required);
                }
            }
            if (random.nextBoolean()) {
                builder.quota("a/gpu");
            } else {
                builder.quota("b/gpu").idle(IdleMode.OnlyIdle);
            }
            PendingRun run = builder.build();
            runs.put(run.id(), run);
            cluster.submit(run);
        }

        private void finishOne() {
            List<RunId> running = cluster.active.values().stream().filter(r -> !r.stopping()).map(ActiveRun::id).toList();
            if (!running.isEmpty()) {
                cluster.end(running.get(random.nextInt(running.size())));
            }
        }

        int slicedRuns() {
            return (int) sawRunning.stream().filter(id -> runs.get(id).instances().get(0).locality() != null
                    && runs.get(id).instances().get(0).locality().sliced()).count();
        }

        private static Locality required(PendingRun run) {
            return run.instances().get(0).locality() != null && run.instances().get(0).locality().required() ? run.instances().get(0).locality() : null;
        }

        private void check() {
            Map<String, Integer> gpusUsed = new HashMap<>();
            Map<String, Set<Integer>> gpuIndices = new HashMap<>();
            for (ActiveRun active : cluster.active.values()) {
                sawRunning.add(active.id());
                Locality locality = required(runs.get(active.id()));
                if (locality != null) {
                    Set<String> domains = new HashSet<>();
                    for (Allocation allocation : active.allocations()) {
                        domains.add(domain(byName.get(allocation.node()), locality.level()));
                    }
                    assertThat(domains).as("%s must be in one %s: its nodes' are %s", active.id(), LEVELS.get(locality.level()), domains)
                            .hasSize(1).doesNotContainNull();
                }
                Locality asked = runs.get(active.id()).instances().get(0).locality();
                if (asked != null && asked.sliced()) {
                    List<Allocation> byRank = new ArrayList<>(active.allocations());
                    byRank.sort(java.util.Comparator.comparingInt(Allocation::rank));
                    for (int from = 0; from < byRank.size(); from += asked.sliceSize()) {
                        Set<String> domains = new HashSet<>();
                        for (Allocation allocation : byRank.subList(from, from + asked.sliceSize())) {
                            domains.add(domain(byName.get(allocation.node()), asked.sliceLevel()));
                        }
                        assertThat(domains).as("ranks %d.. of %s must share a %s: their nodes' are %s", from, active.id(), asked.sliceLevelName(), domains)
                                .hasSize(1).doesNotContainNull();
                    }
                }
                for (Allocation allocation : active.allocations()) {
                    gpusUsed.merge(allocation.node(), allocation.gpus().size(), Integer::sum);
                    for (int gpu : allocation.gpus()) {
                        assertThat(gpuIndices.computeIfAbsent(allocation.node(), n -> new HashSet<>()).add(gpu))
                                .as("GPU %d of %s held twice", gpu, allocation.node()).isTrue();
                    }
                }
            }
            gpusUsed.forEach((node, used) -> assertThat(used).as("GPUs held on %s", node).isLessThanOrEqualTo(byName.get(node).capacity().gpu()));
        }

        /** The node's domain path at {@code level}, or {@code null} where it has none. */
        private static String domain(NodeState node, int level) {
            if (node.domains().size() <= level) {
                return null;
            }
            return String.join("/", node.domains().subList(0, level + 1));
        }
    }
}
