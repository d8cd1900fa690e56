package io.slipstream.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Placement throughput of the pure scheduling core. Not part of the test run (its name does not end in Test); run
 * it with {@code bench/run scheduler}. For 500, 5,000 and 10,000 nodes of 8 GPUs, 50 quotas (5 trees of 9 teams,
 * 80% of the cluster guaranteed) and 50,000 queued runs (80% one GPU, 15% one whole node, 5% gangs of 2 to 8 whole
 * nodes; idle modes 40% Disabled, 40% Acceptable, 20% OnlyIdle), one thread, medians of repeated cycles after a
 * warm-up:
 * <ul>
 *   <li>a full cycle over all 50,000 runs on an empty cluster (it admits until the cluster is full): instances
 *       placed per second, gang runs admitted, and the cycle's time;</li>
 *   <li>the same queue's 2,500 gangs alone on an empty cluster: gang admissions per second;</li>
 *   <li>the queue left after the first cycle against the full cluster: every run gets its reason.</li>
 * </ul>
 * Prints a table and writes {@code target/scheduler-benchmark.json}.
 */
class SchedulerBenchmark {
    private static final int PENDING = Integer.getInteger("bench.pending", 50_000);
    private static final int REPEATS = Integer.getInteger("bench.repeats", 5);
    private static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");
    private static final Resources NODE = new Resources(64_000, 512L << 30, 8, "sim-gpu");

    private final Scheduler scheduler = new Scheduler();

    @Test
    void placementThroughput() throws Exception {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int nodes : new int[] {500, 5_000, 10_000}) {
            rows.add(measure(nodes));
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "scheduler-placement-throughput");
        report.put("pendingRuns", PENDING);
        report.put("quotas", 50);
        report.put("repeats", REPEATS);
        report.put("cores", Runtime.getRuntime().availableProcessors());
        report.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        report.put("results", rows);
        String json = io.slipstream.api.codec.Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        Files.writeString(Path.of("target", "scheduler-benchmark.json"), json);
        System.out.println(json);
    }

    private Map<String, Object> measure(int nodeCount) {
        ClusterSnapshot empty = snapshot(nodeCount, PENDING, new Random(42));
        List<PendingRun> gangs = empty.pending().stream().filter(p -> p.instances().size() > 1).toList();
        ClusterSnapshot gangsOnly = new ClusterSnapshot(empty.nodes(), empty.quotas(), List.of(), gangs);

        CycleResult first = null;
        for (int i = 0; i < 2; i++) {
            first = scheduler.schedule(empty, NOW); // warm-up
            scheduler.schedule(gangsOnly, NOW);
        }
        List<Long> mixedNanos = new ArrayList<>();
        for (int i = 0; i < REPEATS; i++) {
            long start = System.nanoTime();
            first = scheduler.schedule(empty, NOW);
            mixedNanos.add(System.nanoTime() - start);
        }
        int admittedRuns = first.admitted().size();
        int admittedInstances = first.admitted().stream().mapToInt(a -> a.placements().size()).sum();
        long admittedGangs = first.admitted().stream().filter(a -> a.placements().size() > 1).count();

        CycleResult gangResult = null;
        List<Long> gangNanos = new ArrayList<>();
        for (int i = 0; i < REPEATS; i++) {
            long start = System.nanoTime();
            gangResult = scheduler.schedule(gangsOnly, NOW);
            gangNanos.add(System.nanoTime() - start);
        }
        int gangsAdmitted = gangResult.admitted().size();

        ClusterSnapshot full = fill(empty, first);
        List<Long> fullNanos = new ArrayList<>();
        for (int i = 0; i < REPEATS; i++) {
            long start = System.nanoTime();
            scheduler.schedule(full, NOW);
            fullNanos.add(System.nanoTime() - start);
        }
        double mixedSeconds = median(mixedNanos) / 1e9;
        double gangSeconds = median(gangNanos) / 1e9;
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("nodes", nodeCount);
        row.put("gpus", nodeCount * 8);
        row.put("fullCycleMillis", round(mixedSeconds * 1000));
        row.put("admittedRuns", admittedRuns);
        row.put("admittedInstances", admittedInstances);
        row.put("admittedGangRuns", admittedGangs);
        row.put("instancePlacementsPerSecond", Math.round(admittedInstances / mixedSeconds));
        row.put("gangsOnlyCycleMillis", round(gangSeconds * 1000));
        row.put("gangsQueued", gangs.size());
        row.put("gangsAdmitted", gangsAdmitted);
        row.put("gangAdmissionsPerSecond", Math.round(gangsAdmitted / gangSeconds));
        row.put("fullClusterCycleMillis", round(median(fullNanos) / 1e6));
        row.put("fullClusterQueued", full.pending().size());
        System.out.printf(Locale.ROOT, "%6d nodes: cycle over %d queued %.0f ms (%d runs, %d instances, %d gangs admitted: %.0f placements/s);"
                        + " %d gangs alone %.0f ms (%d admitted: %.0f gangs/s); full cluster %.0f ms over %d queued%n",
                nodeCount, PENDING, mixedSeconds * 1000, admittedRuns, admittedInstances, admittedGangs, admittedInstances / mixedSeconds,
                gangs.size(), gangSeconds * 1000, gangsAdmitted, gangsAdmitted / gangSeconds, median(fullNanos) / 1e6, full.pending().size());
        assertThat(admittedInstances).isPositive();
        return row;
    }

    /** The cluster, 50 quotas, and the queue described in the class comment. */
    static ClusterSnapshot snapshot(int nodeCount, int pendingCount, Random random) {
        List<NodeState> nodes = new ArrayList<>();
        for (int i = 0; i < nodeCount; i++) {
            nodes.add(NodeState.of(String.format(Locale.ROOT, "node-%05d", i), NODE));
        }
        List<QuotaState> quotas = new ArrayList<>();
        int trees = 5;
        int leavesPerTree = 9;
        int perTree = nodeCount * 8 * 8 / 10 / trees; // 80% of the GPUs are guaranteed
        for (int t = 0; t < trees; t++) {
            String root = "org-" + t + "/root";
            quotas.add(new QuotaState(QuotaId.parse(root), QuotaType.General, null, null, gpus(perTree), null, WithinQuota.Never));
            for (int l = 0; l < leavesPerTree; l++) {
                quotas.add(new QuotaState(new QuotaId("team-" + t + "-" + l, "gpu"), QuotaType.General, null, QuotaId.parse(root), gpus(perTree / leavesPerTree), null,
                        WithinQuota.Never));
            }
        }
        List<QuotaId> leaves = quotas.stream().filter(q -> q.parent() != null).map(QuotaState::id).toList();
        List<PendingRun> pending = new ArrayList<>();
        for (int i = 0; i < pendingCount; i++) {
            int shape = random.nextInt(100);
            int instances = shape < 95 ? 1 : 2 + random.nextInt(7);
            int gpus = shape < 80 ? 1 : 8;
            Resources perInstance = new Resources(gpus * 8000L, gpus * (64L << 30), gpus, null);
            List<InstanceRequest> requests = new ArrayList<>(instances);
            for (int rank = 0; rank < instances; rank++) {
                requests.add(new InstanceRequest(rank, "main", perInstance));
            }
            int mode = random.nextInt(10);
            IdleMode idle = mode < 4 ? IdleMode.Disabled : mode < 8 ? IdleMode.Acceptable : IdleMode.OnlyIdle;
            pending.add(new PendingRun(new RunId(String.format(Locale.ROOT, "run-%05d", i)), leaves.get(random.nextInt(leaves.size())), idle,
                    random.nextInt(3), NOW.minusSeconds(pendingCount - i), requests));
        }
        Collections.shuffle(pending, random);
        return new ClusterSnapshot(nodes, quotas, List.of(), pending);
    }

    static Resources gpus(int count) {
        return new Resources(count * 8000L, count * (64L << 30), count, null);
    }

    /** The cluster after the admissions of a cycle: admitted runs hold their placements, the rest still wait. */
    static ClusterSnapshot fill(ClusterSnapshot snapshot, CycleResult result) {
        Map<RunId, PendingRun> byId = new LinkedHashMap<>();
        snapshot.pending().forEach(p -> byId.put(p.id(), p));
        List<ActiveRun> active = new ArrayList<>();
        for (Decision.Admit admit : result.admitted()) {
            PendingRun run = byId.remove(admit.runId());
            List<Allocation> allocations = new ArrayList<>();
            for (Placement placement : admit.placements()) {
                allocations.add(new Allocation(placement.rank(), placement.node(), run.instances().get(placement.rank()).resources(), placement.gpus()));
            }
            active.add(new ActiveRun(run.id(), run.quota(), run.idleMode(), run.priority(), NOW, null, admit.realTimeResources(), allocations,
                    false, null));
        }
        return new ClusterSnapshot(snapshot.nodes(), snapshot.quotas(), active, new ArrayList<>(byId.values()));
    }

    static double median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }
}
