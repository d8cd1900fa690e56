package io.slipstream.scheduler;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Fixtures for scheduler tests: {@code aNode("n1").gpus(8)}, {@code aRun("a").instances(4).gpus(8).priority(10)}. */
final class Builders {
    static final Instant T0 = Instant.parse("2026-05-01T00:00:00Z");

    private Builders() {
    }

    static NodeBuilder aNode(String name) {
        return new NodeBuilder(name);
    }

    static RunBuilder aRun(String name) {
        return new RunBuilder(name);
    }

    static final class NodeBuilder {
        private final String name;
        private long milliCpu = 32_000;
        private long memory = 256L << 30;
        private int gpus = 8;
        private String model = "sim-gpu";
        private boolean schedulable = true;

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

        NodeState build() {
            NodeState node = NodeState.empty(name, new Resources(milliCpu, memory, gpus, model));
            return new NodeState(node.name(), node.capacity(), node.allocated(), node.usedGpus(), schedulable);
        }
    }

    static final class RunBuilder {
        private final String name;
        private int priority;
        private Instant createdAt = T0;
        private int instances = 1;
        private long milliCpu = 1000;
        private long memory = 1L << 30;
        private int gpus;
        private String model;

        RunBuilder(String name) {
            this.name = name;
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

        RunBuilder gpus(int gpus) {
            this.gpus = gpus;
            return this;
        }

        RunBuilder model(String model) {
            this.model = model;
            return this;
        }

        PendingRun build() {
            List<InstanceRequest> requests = new ArrayList<>();
            for (int rank = 0; rank < instances; rank++) {
                requests.add(new InstanceRequest(rank, "main", new Resources(milliCpu, memory, gpus, model)));
            }
            return new PendingRun(new RunId(name), "team-a", priority, createdAt, requests);
        }
    }
}
