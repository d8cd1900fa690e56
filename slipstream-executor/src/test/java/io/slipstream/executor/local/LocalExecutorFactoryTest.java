package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorContext;
import io.slipstream.executor.ExecutorFactory;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The local executor's part of the config file: {@code nodes:} and its fields of {@code instances:}. */
class LocalExecutorFactoryTest {
    private static final NodeInfo MACHINE = new NodeInfo("this-machine", new Resources(16_000, 128L << 30, 1, "nvidia-h200"),
            List.of("GPU-0a1b"), Map.of());
    private final LocalExecutorFactory factory = new LocalExecutorFactory(() -> MACHINE);
    private final Problems problems = new Problems();

    /** What the server hands the factory: a view of the config file with the executor's fields only. */
    private LocalExecutorSettings read(String yaml) {
        return factory.read(FieldReader.of(DocumentParser.parseOne(yaml.getBytes(StandardCharsets.UTF_8)), "", problems));
    }

    @Test
    void theServiceLoaderFindsItByName() {
        assertThat(ServiceLoader.load(ExecutorFactory.class).stream().map(p -> p.get().name())).contains("local");
        assertThat(factory.configFields()).contains("nodes", "instances.isolation", "instances.logLimit")
                .doesNotContain("instances.gracePeriod");
    }

    @Test
    void anEmptyBlockIsTheDefaults() {
        assertThat(read("{}")).isEqualTo(LocalExecutorSettings.defaults());
        assertThat(problems.list()).isEmpty();
        assertThat(LocalExecutorSettings.defaults().nodes()).extracting(NodeInfo::name).containsExactly("node-1", "node-2", "node-3", "node-4");
        assertThat(LocalExecutorSettings.defaults().isolation()).isEqualTo(Isolation.Mode.auto);
    }

    @Test
    void readsItsFields() {
        LocalExecutorSettings settings = read("""
                nodes:
                  - {namePrefix: gpu, count: 2, cpu: 64, memory: 512Gi, gpu: 8, gpuModel: h100}
                instances: {inheritEnv: [PATH], isolation: "on", uidRange: 300000-300999, uidClaims: /srv/uids, logLimit: 2Gi,
                            maxProcessesPerRun: 2048, imageRetention: 2d, imagePullTimeout: 30m, launcher: shell}
                """);
        assertThat(problems.list()).isEmpty();
        assertThat(settings.nodes()).extracting(NodeInfo::name).containsExactly("gpu-1", "gpu-2");
        assertThat(settings.inheritEnv()).containsExactly("PATH");
        assertThat(settings.isolation()).isEqualTo(Isolation.Mode.on);
        assertThat(settings.uidRange()).isEqualTo(new UidRangeClaims.Range(300_000, 1000));
        assertThat(settings.uidClaims()).isEqualTo(Path.of("/srv/uids"));
        assertThat(settings.logLimit()).isEqualTo(2L << 30);
        assertThat(settings.maxProcessesPerRun()).isEqualTo(2048);
        assertThat(settings.images()).isEqualTo(new ImageSettings(java.time.Duration.ofDays(2), java.time.Duration.ofMinutes(30)));
        assertThat(settings.launcher()).isEqualTo(SupervisorProgram.Mode.shell);
        assertThat(read("nodes: auto\n").nodes()).containsExactly(MACHINE);
        assertThat(read("nodes: auto\n").launcher()).isEqualTo(SupervisorProgram.Mode.auto);
    }

    @Test
    void everyMistakeIsNamedWithItsPath() {
        read("""
                nodes:
                  - {name: Bad_Name, cpu: 1, memory: 1Gi}
                  - {name: n, cpu: -2, memory: lots, gpu: 4}
                  - {namePrefix: n, count: 1, name: m, cpu: 1, memory: 1Gi, colour: blue}
                  - {name: g, cpu: 1, memory: 1Gi, gpu: 2, gpuModel: h100, gpuDevices: [relative, /etc/passwd, /dev/null, /dev/null]}
                  - {name: h, cpu: 1, memory: 1Gi, gpu: 2, gpuModel: h100, gpuDevices: [/dev/null]}
                instances: {inheritEnv: ["1X"], isolation: sometimes, uidRange: 5-3, uidClaims: relative, logLimit: 1Ki,
                            maxProcessesPerRun: 1, imageRetention: 5m, imagePullTimeout: 7h, launcher: native, cgroups: sometimes}
                """);
        assertThat(problems.list()).extracting(Problem::field).containsExactlyInAnyOrder(
                "nodes[0].name", "nodes[1].cpu", "nodes[1].memory", "nodes[1].gpuModel", "nodes[2].name", "nodes[2].colour",
                "nodes[3].gpuDevices[0]", "nodes[3].gpuDevices[1]", "nodes[3].gpuDevices[3]", "nodes[4].gpuDevices",
                "instances.inheritEnv[0]", "instances.isolation", "instances.uidRange", "instances.uidClaims", "instances.logLimit",
                "instances.maxProcessesPerRun", "instances.imageRetention", "instances.imagePullTimeout", "instances.launcher",
                "instances.cgroups");
        assertThat(problems.list()).extracting(Problem::message).contains("must be a device node: /etc/passwd is not a device node",
                "names /dev/null twice", "must name one device per GPU: the node has 2, not 1");
    }

    @Test
    void burstableMemoryIsTheAdminsChoiceAndOffByDefault() {
        assertThat(factory.configFields()).contains("instances.burstableMemory");
        assertThat(LocalExecutorSettings.defaults().burstableMemory()).isFalse();
        assertThat(read("instances: {burstableMemory: true}\n").burstableMemory()).isTrue();
        assertThat(read("instances: {burstableMemory: false}\n").burstableMemory()).isFalse();
        assertThat(problems.list()).isEmpty();
        read("instances: {burstableMemory: sometimes}\n");
        assertThat(problems.list()).extracting(Problem::field).containsExactly("instances.burstableMemory");
    }

    @Test
    void aNodeNamesTheDeviceNodeOfEachGpu() {
        LocalExecutorSettings settings = read("""
                nodes: [{name: g, cpu: 1, memory: 1Gi, gpu: 2, gpuModel: h100, gpuDevices: [/dev/full, /dev/null]}]
                instances: {cgroups: off}
                """);
        assertThat(problems.list()).isEmpty();
        assertThat(settings.nodes().get(0).gpuDevices()).containsExactly("/dev/full", "/dev/null");
        assertThat(settings.cgroups()).isEqualTo(io.slipstream.executor.local.cgroup.Cgroups.Mode.off);

        // A GPU is one node's: never two nodes' (namePrefix with count, or a device, by its number, declared twice).
        read("""
                nodes:
                  - {namePrefix: box, count: 2, cpu: 1, memory: 1Gi, gpu: 1, gpuModel: h100, gpuDevices: [/dev/zero]}
                  - {name: a, cpu: 1, memory: 1Gi, gpu: 1, gpuModel: h100, gpuDevices: [/dev/full]}
                  - {name: b, cpu: 1, memory: 1Gi, gpu: 1, gpuModel: h100, gpuDevices: [/dev/full]}
                """);
        assertThat(problems.list()).extracting(Problem::field).containsExactlyInAnyOrder("nodes[0].gpuDevices", "nodes[2].gpuDevices[0]");
        assertThat(problems.list()).extracting(Problem::message).contains("names the device c 1:7 that nodes[1].gpuDevices[0] declares already:"
                + " each GPU is one node's");
    }

    @Test
    void aNodeMayPinItsInstancesToCoresTheServerMayUse() {
        LocalExecutorSettings settings = read("""
                nodes: [{name: a, cpu: 1, memory: 1Gi, cpuset: "0,0"}]
                """);
        assertThat(problems.list()).isEmpty();
        assertThat(settings.nodes().get(0).cpuset()).isEqualTo("0");
        read("""
                nodes:
                  - {name: b, cpu: 2, memory: 1Gi, cpuset: "0"}
                  - {name: c, cpu: 1, memory: 1Gi, cpuset: "0-9999"}
                  - {name: d, cpu: 1, memory: 1Gi, cpuset: "8000-8001"}
                  - {name: e, cpu: 1, memory: 1Gi, cpuset: "3-1"}
                """);
        assertThat(problems.list()).extracting(Problem::field).containsExactlyInAnyOrder("nodes[0].cpu", "nodes[1].cpuset", "nodes[2].cpuset",
                "nodes[3].cpuset");
        assertThat(problems.list()).extracting(Problem::message).contains("is more than the 1 core(s) of its cpuset (0) can give",
                "the range 3-1 runs backwards");
        assertThat(problems.list().get(2).message()).startsWith("names cores 8000-8001, which this machine does not have");
    }

    @Test
    void createsAnExecutorOverItsNodes(@TempDir Path dataDir) throws Exception {
        LocalExecutorSettings settings = LocalExecutorSettings.defaults().withIsolation(Isolation.Mode.off)
                .withNodes(List.of(new NodeInfo("only", new Resources(1000, 1L << 30, 0, null), null, Map.of())));
        ExecutorContext context = new ExecutorContext() {
            @Override
            public Path dataDir() {
                return dataDir;
            }

            @Override
            public Clock clock() {
                return Clock.systemUTC();
            }

            @Override
            public Optional<Path> instanceTools() {
                return Optional.empty();
            }
        };
        try (Executor executor = factory.create(settings, context)) {
            assertThat(executor).isInstanceOf(LocalProcessExecutor.class);
            assertThat(executor.nodes()).extracting(NodeInfo::name).containsExactly("only");
        }
    }

    @Test
    void theExecutorChangesNoSystemProperty(@TempDir Path root) {
        String before = System.getProperty("jdk.lang.Process.launchMechanism");
        new LocalProcessExecutor(root, List.of(), List.of(), Clock.systemUTC()).close();
        assertThat(System.getProperty("jdk.lang.Process.launchMechanism")).isEqualTo(before);
    }
}
