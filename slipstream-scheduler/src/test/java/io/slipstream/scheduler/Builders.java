package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Fixtures for scheduler tests: {@code aNode("n1").gpus(8)}, {@code aQuota("a/gpu").minGpus(16)},
 * {@code aRun("r").quota("a/gpu").instances(4).gpus(8).priority(10)}, and {@code aRun(...).runningOn(...)} for runs
 * that already hold resources.
 */
final class Builders {
    static final Instant T0 = Instant.parse("2026-05-01T00:00:00Z");
    static final long GI = 1L << 30;

    private Builders() {
    }

    static NodeBuilder aNode(String name) {
        return new NodeBuilder(name);
    }

    static QuotaBuilder aQuota(String id) {
        return new QuotaBuilder(id);
    }

    /** A cycle's decisions, run id to what happened: {@code admit InQuota}, a wait reason, {@code preempt}, {@code move}, {@code promote}. */
    static Map<String, String> outcome(CycleResult result) {
        Map<String, String> outcome = new TreeMap<>();
        for (Decision decision : result.decisions()) {
            String text;
            if (decision instanceof Decision.Admit admit) {
                text = "admit " + admit.realTimeResources();
            } else if (decision instanceof Decision.Wait wait) {
                text = wait.reason().name();
            } else if (decision instanceof Decision.Preempt preempt) {
                text = preempt.kind() == Decision.PreemptKind.Move ? "move" : "preempt";
            } else if (decision instanceof Decision.Grow grow) {
                text = "grow " + grow.placements().stream().map(Placement::rank).toList() + (grow.borrowed().isEmpty() ? "" : " borrowed " + grow.borrowed());
            } else if (decision instanceof Decision.Shrink shrink) {
                text = "shrink " + shrink.ranks();
            } else {
                text = "promote";
            }
            outcome.put(decision.runId().value(), text);
        }
        return outcome;
    }

    static RunBuilder aRun(String name) {
        return new RunBuilder(name);
    }

    /** {@code count} nodes named {@code prefix-1..count} of 32 cpu, 256Gi and 8 GPUs of {@code model}. */
    static List<NodeState> nodes(String prefix, int count, String model) {
        List<NodeState> nodes = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            nodes.add(aNode(prefix + "-" + i).model(model).build());
        }
        return nodes;
    }

    static final class NodeBuilder {
        private final String name;
        private long milliCpu = 32_000;
        private long memory = 256 * GI;
        private int gpus = 8;
        private String model = "sim-gpu";
        private boolean schedulable = true;
        private List<String> domains = List.of();

        NodeBuilder(String name) {
            this.name = name;
        }

        NodeBuilder gpus(int gpus) {
            this.gpus = gpus;
            return this;
        }

        NodeBuilder cpu(int cores) {
            this.milliCpu = cores * 1000L;
            return this;
        }

        NodeBuilder model(String model) {
            this.model = model;
            return this;
        }

        NodeBuilder unschedulable() {
            this.schedulable = false;
            return this;
        }

        /** Where it is in the topology: its domain at each level, broadest first. */
        NodeBuilder in(String... levels) {
            this.domains = List.of(levels);
            return this;
        }

        NodeState build() {
            return new NodeState(name, new Resources(milliCpu, memory, gpus, gpus == 0 ? null : model), schedulable, domains);
        }
    }

    static final class QuotaBuilder {
        private final String id;
        private QuotaType type = QuotaType.General;
        private String model;
        private String parent;
        private Resources min = Resources.NONE;
        private Resources max;
        private WithinQuota withinQuota = WithinQuota.Never;
        private double weight = 1;

        QuotaBuilder(String id) {
            this.id = id;
        }

        /** A guarantee of whole 8-GPU nodes' worth of GPUs, and the cpu and memory that goes with them. */
        QuotaBuilder minGpus(int gpus) {
            this.min = new Resources(gpus * 4000L, gpus * 32 * GI, gpus, null);
            return this;
        }

        QuotaBuilder min(Resources min) {
            this.min = min;
            return this;
        }

        QuotaBuilder maxGpus(int gpus) {
            this.max = new Resources(Long.MAX_VALUE, Long.MAX_VALUE, gpus, null);
            return this;
        }

        QuotaBuilder dedicated(String model) {
            this.type = QuotaType.Dedicated;
            this.model = model;
            return this;
        }

        QuotaBuilder parent(String parent) {
            this.parent = parent;
            return this;
        }

        QuotaBuilder weight(double weight) {
            this.weight = weight;
            return this;
        }

        QuotaBuilder lowerPriorityPreemption() {
            this.withinQuota = WithinQuota.LowerPriority;
            return this;
        }

        QuotaState build() {
            return new QuotaState(QuotaId.parse(id), type, model, parent == null ? null : QuotaId.parse(parent), min, max, withinQuota, false, weight);
        }
    }

    static final class RunBuilder {
        private final String name;
        private String quota;
        private IdleMode idleMode;
        private int priority;
        private Instant createdAt = T0;
        private int instances = 1;
        private long milliCpu = 4000;
        private long memory = 32 * GI;
        private int gpus = 1;
        private String model;
        private boolean reclaimed;
        private Locality locality;
        private Integer minReplicas;

        RunBuilder(String name) {
            this.name = name;
        }

        RunBuilder quota(String quota) {
            this.quota = quota;
            return this;
        }

        RunBuilder idle(IdleMode idleMode) {
            this.idleMode = idleMode;
            return this;
        }

        RunBuilder priority(int priority) {
            this.priority = priority;
            return this;
        }

        RunBuilder createdAt(Instant createdAt) {
            this.createdAt = createdAt;
            return this;
        }

        RunBuilder submittedSecondsAfterStart(long seconds) {
            return createdAt(T0.plusSeconds(seconds));
        }

        RunBuilder instances(int instances) {
            this.instances = instances;
            return this;
        }

        RunBuilder cpu(int cores) {
            this.milliCpu = cores * 1000L;
            return this;
        }

        /** GPUs per instance, with 4 cpu and 32Gi per GPU (at least 1 cpu and 4Gi). */
        RunBuilder gpus(int gpus) {
            this.gpus = gpus;
            this.milliCpu = Math.max(1000, gpus * 4000L);
            this.memory = Math.max(4 * GI, gpus * 32 * GI);
            return this;
        }

        RunBuilder model(String model) {
            this.model = model;
            return this;
        }

        /** Its instances (one node group) in one domain of topology level {@code level} ({@code required}), or preferably. */
        RunBuilder within(int level, String levelName, boolean required) {
            this.locality = new Locality(level, levelName, required);
            return this;
        }

        /** As {@link #within}, in slices of {@code sliceSize} consecutive ranks, each in one domain of {@code sliceLevel}. */
        RunBuilder within(int level, String levelName, boolean required, int sliceSize, int sliceLevel, String sliceLevelName) {
            this.locality = new Locality(level, levelName, required, sliceSize, sliceLevel, sliceLevelName);
            return this;
        }

        /** Elastic: it runs with as few as {@code min} of its instances (its one group, "main"). */
        RunBuilder min(int min) {
            this.minReplicas = min;
            return this;
        }

        /** Borrowers were preempted for it and are gone. */
        RunBuilder reclaimed() {
            this.reclaimed = true;
            return this;
        }

        private IdleMode mode() {
            return idleMode != null ? idleMode : quota == null ? IdleMode.OnlyIdle : IdleMode.Disabled;
        }

        private Resources perInstance() {
            return new Resources(milliCpu, memory, gpus, model);
        }

        PendingRun build() {
            List<InstanceRequest> requests = new ArrayList<>();
            for (int rank = 0; rank < instances; rank++) {
                requests.add(new InstanceRequest(rank, "main", perInstance(), locality));
            }
            return new PendingRun(new RunId(name), quota == null ? null : QuotaId.parse(quota), mode(), priority, createdAt, requests, reclaimed,
                    minReplicas == null ? Map.of() : Map.of("main", minReplicas));
        }

        /**
         * The run as active and elastic (give it {@link #min}): its slot {@code r} live on {@code nodes[r]} where that is
         * not {@code null}, GPUs from {@code firstGpu} on; {@code borrowed}: ranks on idle capacity while it is InQuota.
         */
        ActiveRun runningElastic(RealTimeResources where, int firstGpu, java.util.Set<Integer> borrowed, String... nodes) {
            List<Allocation> allocations = new ArrayList<>();
            for (int rank = 0; rank < nodes.length; rank++) {
                if (nodes[rank] != null) {
                    allocations.add(allocation(rank, nodes[rank], firstGpu));
                }
            }
            return new ActiveRun(new RunId(name), quota == null ? null : QuotaId.parse(quota), mode(), priority, createdAt, null, where, allocations, false,
                    null, null, elastic(borrowed, List.of()));
        }

        /** The elastic shape of the run: its slots, its minimum, how its instances stand and what is being released. */
        ElasticRun elastic(java.util.Set<Integer> borrowed, List<ElasticRun.Release> releasing) {
            return new ElasticRun(build().instances(), Map.of("main", minReplicas), borrowed, releasing);
        }

        /** What instance {@code rank} holds on {@code node}, GPUs from {@code firstGpu} on. */
        Allocation allocation(int rank, String node, int firstGpu) {
            List<Integer> gpuIndices = new ArrayList<>();
            for (int g = 0; g < gpus; g++) {
                gpuIndices.add(firstGpu + g);
            }
            return new Allocation(rank, node, perInstance(), gpuIndices);
        }

        /** The run as active: one instance per listed node, GPUs from {@code firstGpu} on. */
        ActiveRun running(RealTimeResources where, int firstGpu, String... nodes) {
            List<Allocation> allocations = new ArrayList<>();
            for (int rank = 0; rank < nodes.length; rank++) {
                List<Integer> gpuIndices = new ArrayList<>();
                for (int g = 0; g < gpus; g++) {
                    gpuIndices.add(firstGpu + g);
                }
                allocations.add(new Allocation(rank, nodes[rank], perInstance(), gpuIndices));
            }
            return new ActiveRun(new RunId(name), quota == null ? null : QuotaId.parse(quota), mode(), priority, createdAt, null, where, allocations, false, null);
        }
    }
}
