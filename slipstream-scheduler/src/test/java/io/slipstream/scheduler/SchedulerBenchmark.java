package io.slipstream.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

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
 * Times the pure scheduling core on synthetic clusters. Not part of the test run (its name does not end in Test):
 *
 * <pre>mvn -B -pl slipstream-scheduler -am test -Dtest=SchedulerBenchmark -Dsurefire.failIfNoSpecifiedTests=false</pre>
 *
 * Two cycles per size: "empty" (10,000 queued runs onto an idle cluster: admits until it is full) and "full" (the
 * same queue against the cluster the first cycle filled: nothing more fits, every run gets its reason). Medians of
 * repeated cycles after a warm-up; one thread. Prints a table and writes target/scheduler-benchmark.json.
 */
class SchedulerBenchmark {
    private static final int PENDING = 10_000;
    private static final int QUOTAS = 50;
    private static final int REPEATS = 7;
    private static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");
    private static final Resources NODE = new Resources(64_000, 512L << 30, 8, "sim-gpu");

    private final Scheduler scheduler = new Scheduler();

    @Test
    void cycleTimeAndThroughput() throws Exception {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int nodes : new int[] {100, 1_000, 5_000}) {
            rows.add(measure(nodes));
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "scheduler-cycle");
        report.put("pendingRuns", PENDING);
        report.put("quotas", QUOTAS);
        report.put("cores", Runtime.getRuntime().availableProcessors());
        report.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        report.put("results", rows);
        String json = io.slipstream.api.codec.Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        Files.writeString(Path.of("target", "scheduler-benchmark.json"), json);
        System.out.println(json);
    }

    private Map<String, Object> measure(int nodeCount) {
        ClusterSnapshot empty = snapshot(nodeCount, new Random(42));
        long heapBefore = usedHeap();
        ClusterSnapshot keep = snapshot(nodeCount, new Random(42));
        long snapshotBytes = usedHeap() - heapBefore;

        CycleResult first = null;
        for (int i = 0; i < 3; i++) {
            first = scheduler.schedule(empty, NOW); // warm-up
        }
        List<Long> emptyNanos = new ArrayList<>();
        for (int i = 0; i < REPEATS; i++) {
            long start = System.nanoTime();
            first = scheduler.schedule(empty, NOW);
            emptyNanos.add(System.nanoTime() - start);
        }
        int admittedRuns = first.admitted().size();
        int admittedInstances = first.admitted().stream().mapToInt(a -> a.placements().size()).sum();

        ClusterSnapshot full = fill(empty, first);
        List<Long> fullNanos = new ArrayList<>();
        for (int i = 0; i < REPEATS; i++) {
            long start = System.nanoTime();
            scheduler.schedule(full, NOW);
            fullNanos.add(System.nanoTime() - start);
        }
        double emptyMillis = median(emptyNanos) / 1e6;
        double fullMillis = median(fullNanos) / 1e6;
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("nodes", nodeCount);
        row.put("emptyClusterCycleMillis", round(emptyMillis));
        row.put("admittedRuns", admittedRuns);
        row.put("admittedInstances", admittedInstances);
        row.put("instancesAdmittedPerSecond", Math.round(admittedInstances / (emptyMillis / 1000)));
        row.put("runsAdmittedPerSecond", Math.round(admittedRuns / (emptyMillis / 1000)));
        row.put("fullClusterCycleMillis", round(fullMillis));
        row.put("snapshotMiB", round(snapshotBytes / (1024.0 * 1024.0)));
        System.out.printf(Locale.ROOT, "%5d nodes: empty-cluster cycle %.1f ms (%d runs, %d instances admitted, %d instances/s); full-cluster cycle %.1f ms; snapshot %.1f MiB%n",
                nodeCount, emptyMillis, admittedRuns, admittedInstances, Math.round(admittedInstances / (emptyMillis / 1000)), fullMillis,
                snapshotBytes / (1024.0 * 1024.0));
        assertThat(keep.pending()).hasSize(PENDING);
        return row;
    }

    /** A cluster of whole 8-GPU nodes (a tenth of them h100), 50 quotas in 5 trees and 5 Dedicated, 10,000 queued runs. */
    static ClusterSnapshot snapshot(int nodeCount, Random random) {
        List<NodeState> nodes = new ArrayList<>();
        for (int i = 0; i < nodeCount; i++) {
            String model = i % 10 == 9 ? "h100" : "sim-gpu";
            nodes.add(NodeState.of(String.format(Locale.ROOT, "node-%05d", i), new Resources(NODE.milliCpu(), NODE.memoryBytes(), 8, model)));
        }
        int h100Nodes = nodeCount / 10;
        int generalNodes = nodeCount - h100Nodes;
        List<QuotaState> quotas = new ArrayList<>();
        int trees = 5;
        int dedicated = 5;
        int leavesPerTree = (QUOTAS - trees - dedicated) / trees;
        int perTree = generalNodes * 8 / 10 / trees; // 80% of the general capacity is guaranteed
        for (int t = 0; t < trees; t++) {
            String root = "org-" + t + "/root";
            quotas.add(new QuotaState(root, QuotaType.General, null, null, nodes(perTree), null, WithinQuota.Never));
            for (int l = 0; l < leavesPerTree; l++) {
                quotas.add(new QuotaState("team-" + t + "-" + l + "/gpu", QuotaType.General, null, root, nodes(perTree / leavesPerTree),
                        new Resources(Long.MAX_VALUE, Long.MAX_VALUE, perTree * 8, null), WithinQuota.Never));
            }
        }
        for (int d = 0; d < dedicated; d++) {
            quotas.add(new QuotaState("team-h" + d + "/h100", QuotaType.Dedicated, "h100", null, nodes(h100Nodes / dedicated), null,
                    WithinQuota.Never));
        }
        List<String> leaves = quotas.stream().filter(q -> q.parent() != null || q.type() == QuotaType.Dedicated).map(QuotaState::id).toList();
        List<PendingRun> pending = new ArrayList<>();
        for (int i = 0; i < PENDING; i++) {
            int shape = random.nextInt(100);
            int instances;
            int gpus;
            if (shape < 70) {
                instances = 1;
                gpus = 1 << random.nextInt(4);
            } else if (shape < 95) {
                instances = 2 + random.nextInt(7);
                gpus = 8;
            } else {
                instances = 16 + random.nextInt(49);
                gpus = 8;
            }
            Resources perInstance = new Resources(gpus * 8000L, gpus * (64L << 30), gpus, null);
            List<InstanceRequest> requests = new ArrayList<>(instances);
            for (int rank = 0; rank < instances; rank++) {
                requests.add(new InstanceRequest(rank, "main", perInstance));
            }
            int mode = random.nextInt(10);
            IdleMode idle = mode < 4 ? IdleMode.Disabled : mode < 8 ? IdleMode.Acceptable : IdleMode.OnlyIdle;
            pending.add(new PendingRun(new RunId(String.format(Locale.ROOT, "run-%05d", i)), leaves.get(random.nextInt(leaves.size())), idle,
                    random.nextInt(3), NOW.minusSeconds(PENDING - i), requests));
        }
        Collections.shuffle(pending, random);
        return new ClusterSnapshot(nodes, quotas, List.of(), pending);
    }

    private static Resources nodes(int count) {
        return new Resources(count * NODE.milliCpu(), count * NODE.memoryBytes(), count * 8, null);
    }

    /** The cluster after the admissions of a cycle: admitted runs hold their placements, the rest still wait. */
    private static ClusterSnapshot fill(ClusterSnapshot snapshot, CycleResult result) {
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

    private static long usedHeap() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }

    private static double median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }

}
