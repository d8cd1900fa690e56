package io.slipstream.scheduler;

import static io.slipstream.scheduler.SchedulerBenchmark.median;
import static io.slipstream.scheduler.SchedulerBenchmark.round;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * What topology-aware placement costs the scheduling core. Not part of the test run; {@code bench/run scheduler} runs
 * it after {@link SchedulerBenchmark}. {@link SchedulerBenchmark}'s cluster of 10,000 nodes of 8 GPUs, in racks of
 * 16 nodes and blocks of 8 racks, and its queue of 50,000 runs; 30% of the gangs (of 2 to 8 whole nodes) ask for a
 * rack, half of them {@code Required} and half {@code Preferred}. Against the same nodes and queue without any
 * placement asked (topology-blind), one after the other in the same JVM, medians of repeated cycles after a warm-up:
 * <ul>
 *   <li>a full cycle over all 50,000 runs on an empty cluster;</li>
 *   <li>the queue left after it, against the full cluster;</li>
 *   <li>the same once a third of the running runs (chosen at random) ended: room here and there, which the
 *       constrained gangs find in one rack or wait for ({@code WaitingForTopology}).</li>
 * </ul>
 * Prints a table and writes {@code target/scheduler-topology-benchmark.json}.
 */
class TopologyBenchmark {
    private static final int NODES = Integer.getInteger("bench.nodes", 10_000);
    private static final int PENDING = Integer.getInteger("bench.pending", 50_000);
    private static final int REPEATS = Integer.getInteger("bench.repeats", 5);
    private static final int RACK = 16;
    private static final int BLOCK = 8 * RACK;
    private static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");

    private final Scheduler scheduler = new Scheduler();

    @Test
    void topologyCost() throws Exception {
        ClusterSnapshot plain = SchedulerBenchmark.snapshot(NODES, PENDING, new Random(42));
        List<NodeState> placed = new ArrayList<>();
        for (NodeState node : plain.nodes()) {
            int i = Integer.parseInt(node.name().substring("node-".length()));
            placed.add(new NodeState(node.name(), node.capacity(), true,
                    List.of(String.format(Locale.ROOT, "b%02d", i / BLOCK), String.format(Locale.ROOT, "r%03d", i / RACK))));
        }
        ClusterSnapshot blind = new ClusterSnapshot(placed, plain.quotas(), List.of(), plain.pending());
        Random random = new Random(7);
        List<PendingRun> constrained = new ArrayList<>();
        int gangs = 0;
        int required = 0;
        int preferred = 0;
        for (PendingRun run : plain.pending()) {
            gangs += run.instances().size() > 1 ? 1 : 0;
            if (run.instances().size() > 1 && random.nextInt(10) < 3) {
                boolean must = random.nextBoolean();
                Locality rack = new Locality(1, "rack", must);
                required += must ? 1 : 0;
                preferred += must ? 0 : 1;
                List<InstanceRequest> instances = run.instances().stream()
                        .map(r -> new InstanceRequest(r.rank(), r.nodeGroup(), r.resources(), rack)).toList();
                constrained.add(new PendingRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.createdAt(), instances));
            } else {
                constrained.add(run);
            }
        }
        ClusterSnapshot aware = new ClusterSnapshot(placed, plain.quotas(), List.of(), constrained);

        // Both warmed up first, then timed turn by turn: the one timed first would otherwise pay the JIT's warm-up.
        Scenarios blindRuns = scenarios(blind);
        Scenarios awareRuns = scenarios(aware);
        List<List<Long>> blindNanos = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        List<List<Long>> awareNanos = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        for (int i = 0; i < REPEATS; i++) {
            blindRuns.time(blindNanos);
            awareRuns.time(awareNanos);
        }
        Map<String, Object> blindRow = blindRuns.row("topology-blind", blindNanos);
        Map<String, Object> awareRow = awareRuns.row("30% of gangs in one rack", awareNanos);
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "scheduler-topology");
        report.put("nodes", NODES);
        report.put("rackNodes", RACK);
        report.put("blockNodes", BLOCK);
        report.put("pendingRuns", PENDING);
        report.put("gangs", gangs);
        report.put("gangsRequiredRack", required);
        report.put("gangsPreferredRack", preferred);
        report.put("repeats", REPEATS);
        report.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        report.put("blind", blindRow);
        report.put("topology", awareRow);
        double full = (double) awareRow.get("fullCycleMillis") / (double) blindRow.get("fullCycleMillis");
        double busy = (double) awareRow.get("fullClusterCycleMillis") / (double) blindRow.get("fullClusterCycleMillis");
        double refill = (double) awareRow.get("refillCycleMillis") / (double) blindRow.get("refillCycleMillis");
        report.put("fullCycleRatio", round(full * 100) / 100);
        report.put("fullClusterCycleRatio", round(busy * 100) / 100);
        report.put("refillCycleRatio", round(refill * 100) / 100);
        System.out.printf(Locale.ROOT, "topology / blind: full cycle %.2f, full cluster %.2f, a third ended %.2f%n", full, busy, refill);
        String json = io.slipstream.api.codec.Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        Files.writeString(Path.of("target", "scheduler-topology-benchmark.json"), json);
        System.out.println(json);
    }

    /** The three cycles of one variant: on the empty cluster, on the full one, and once a third of the runs ended. */
    private record Scenarios(Scheduler scheduler, ClusterSnapshot empty, ClusterSnapshot full, ClusterSnapshot partly, CycleResult first,
            CycleResult refill) {
        void time(List<List<Long>> nanos) {
            List<ClusterSnapshot> cycles = List.of(empty, full, partly);
            for (int i = 0; i < cycles.size(); i++) {
                long start = System.nanoTime();
                scheduler.schedule(cycles.get(i), NOW);
                nanos.get(i).add(System.nanoTime() - start);
            }
        }

        Map<String, Object> row(String name, List<List<Long>> nanos) {
            long gangsAdmitted = first.admitted().stream().filter(a -> a.placements().size() > 1).count();
            long topologyWaits = refill.decisions().stream()
                    .filter(d -> d instanceof Decision.Wait w && w.message().contains("(placement Required)")).count();
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("fullCycleMillis", round(median(nanos.get(0)) / 1e6));
            row.put("admittedRuns", first.admitted().size());
            row.put("admittedGangRuns", gangsAdmitted);
            row.put("fullClusterCycleMillis", round(median(nanos.get(1)) / 1e6));
            row.put("fullClusterQueued", full.pending().size());
            row.put("refillCycleMillis", round(median(nanos.get(2)) / 1e6));
            row.put("refillAdmittedRuns", refill.admitted().size());
            row.put("refillWaitingForADomain", topologyWaits);
            System.out.printf(Locale.ROOT, "%-26s cycle over %d queued %.0f ms (%d runs, %d gangs admitted); full cluster %.0f ms over %d queued;"
                            + " a third ended %.0f ms (%d admitted, %d wait for a rack)%n",
                    name, empty.pending().size(), median(nanos.get(0)) / 1e6, first.admitted().size(), gangsAdmitted, median(nanos.get(1)) / 1e6,
                    full.pending().size(), median(nanos.get(2)) / 1e6, refill.admitted().size(), topologyWaits);
            assertThat(first.admitted()).isNotEmpty();
            return row;
        }
    }

    private Scenarios scenarios(ClusterSnapshot empty) {
        CycleResult first = scheduler.schedule(empty, NOW);
        ClusterSnapshot full = SchedulerBenchmark.fill(empty, first);
        // A third of the runs end, here and there: the queue finds room again, scattered over racks.
        List<ActiveRun> left = new ArrayList<>();
        Random random = new Random(11);
        for (ActiveRun run : full.active()) {
            if (random.nextInt(3) != 0) {
                left.add(run);
            }
        }
        ClusterSnapshot partly = new ClusterSnapshot(full.nodes(), full.quotas(), left, full.pending());
        CycleResult refill = scheduler.schedule(partly, NOW);
        Scenarios scenarios = new Scenarios(scheduler, empty, full, partly, first, refill);
        List<List<Long>> warmUp = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        scenarios.time(warmUp);
        scenarios.time(warmUp);
        return scenarios;
    }
}
