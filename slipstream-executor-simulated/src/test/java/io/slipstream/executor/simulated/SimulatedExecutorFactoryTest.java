package io.slipstream.executor.simulated;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.executor.ExecutorFactory;
import io.slipstream.executor.NodeInfo;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** The simulated executor's part of the config file: {@code nodes:}, declared as the local executor's, and {@code simulated:}. */
class SimulatedExecutorFactoryTest {
    private final SimulatedExecutorFactory factory = new SimulatedExecutorFactory();
    private final Problems problems = new Problems();

    private SimulatedExecutorSettings read(String yaml) {
        return factory.read(FieldReader.of(DocumentParser.parseOne(yaml.getBytes(StandardCharsets.UTF_8)), "", problems));
    }

    @Test
    void theServiceLoaderFindsItByName() {
        assertThat(ServiceLoader.load(ExecutorFactory.class).stream().map(p -> p.get().name())).contains("simulated");
    }

    @Test
    void anEmptyBlockIsTheDefaults() {
        assertThat(read("{}")).isEqualTo(SimulatedExecutorSettings.defaults());
        assertThat(problems.list()).isEmpty();
    }

    @Test
    void thousandsOfNodesAreAFewDeclarations() {
        SimulatedExecutorSettings settings = read("""
                nodes:
                  - {namePrefix: gpu, count: 5000, cpu: 64, memory: 512Gi, gpu: 8, gpuModel: h100, labels: {pool: training}}
                  - {name: cpu-only, cpu: 16, memory: 64Gi}
                simulated: {defaultDuration: 90s, stopAcknowledgedAfter: 500ms}
                """);
        assertThat(problems.list()).isEmpty();
        assertThat(settings.nodes()).hasSize(5001);
        assertThat(settings.nodes().get(4999)).satisfies(node -> {
            assertThat(node.name()).isEqualTo("gpu-5000");
            assertThat(node.capacity().gpu()).isEqualTo(8);
            assertThat(node.labels()).containsEntry("pool", "training");
        });
        assertThat(settings.nodes()).extracting(NodeInfo::name).contains("cpu-only");
        assertThat(settings.defaultDuration()).isEqualTo(Duration.ofSeconds(90));
        assertThat(settings.stopAcknowledgedAfter()).isEqualTo(Duration.ofMillis(500));
    }

    /** A count of nodes spread over racks of 4 and blocks of 8 by labels, for a topology (docs/topology.md). */
    @Test
    void nodesOfACountAreSpreadOverDomains() {
        SimulatedExecutorSettings settings = read("""
                nodes:
                  - namePrefix: gpu
                    count: 10
                    cpu: 64
                    memory: 512Gi
                    labels: {pool: training}
                    spread: [{label: topology.slipstream.io/rack, per: 4}, {label: topology.slipstream.io/block, per: 8, prefix: blk}]
                """);
        assertThat(problems.list()).isEmpty();
        assertThat(settings.nodes()).extracting(n -> n.labels().get("topology.slipstream.io/rack"))
                .containsExactly("rack-1", "rack-1", "rack-1", "rack-1", "rack-2", "rack-2", "rack-2", "rack-2", "rack-3", "rack-3");
        assertThat(settings.nodes()).extracting(n -> n.labels().get("topology.slipstream.io/block")).containsOnly("blk-1", "blk-2")
                .filteredOn("blk-2"::equals).hasSize(2);
        assertThat(settings.nodes().get(0).labels()).containsEntry("pool", "training");

        read("""
                nodes:
                  - {name: one, cpu: 1, memory: 1Gi, spread: [{label: topology.slipstream.io/rack, per: 4}]}
                  - {namePrefix: n, count: 2, cpu: 1, memory: 1Gi, spread: [{label: "bad label", per: 0}]}
                """);
        assertThat(problems.list()).extracting(p -> p.field()).contains("nodes[0].spread", "nodes[1].spread[0].label", "nodes[1].spread[0].per");
    }

    @Test
    void badFieldsAreNamed() {
        read("""
                nodes:
                  - {namePrefix: gpu, count: 2, cpu: 64, memory: 512Gi, gpu: 8}
                  - {name: a, cpu: 1, memory: 1Gi, gpuDevices: [0]}
                simulated: {defaultDuration: 0s, stopAcknowledgedAfter: soon, speed: 2}
                """);
        assertThat(problems.list()).extracting(p -> p.field()).contains("nodes[0].gpuModel", "nodes[1].gpuDevices", "simulated.defaultDuration",
                "simulated.stopAcknowledgedAfter", "simulated.speed");
    }

    @Test
    void nodesAutoIsTheLocalExecutorsAndOneProblemHere() {
        read("nodes: auto\n");
        assertThat(problems.list()).singleElement().satisfies(problem -> {
            assertThat(problem.field()).isEqualTo("nodes");
            assertThat(problem.message()).isEqualTo("must be a list of node declarations");
        });
    }
}
