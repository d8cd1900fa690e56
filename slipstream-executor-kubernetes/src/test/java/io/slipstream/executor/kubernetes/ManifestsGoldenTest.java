package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.slipstream.api.codec.Json;
import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.SecretValue;
import io.slipstream.api.spec.StartupProbe;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LaunchSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The exact objects made for a two-group job (one coordinator with a startup probe, two 8-GPU workers that get a
 * secret variable and a secret's files and may use memory up to their limits.memory, job- and run-scoped storage), against a file under version control. After a deliberate change, regenerate it with
 * {@code mvn test -pl slipstream-executor-kubernetes -Dtest=ManifestsGoldenTest -Dgolden.update=true} and review the diff.
 */
class ManifestsGoldenTest {
    private static final Path GOLDEN = Path.of("src/test/resources/golden/two-group-job.yaml");
    private static final RunId RUN = new RunId("bert-pretrain-7k2m9x4q");
    private static final String NAMESPACE = "ml-jobs";
    private static final String IMAGE = "registry.example.com/team-b/bert:2.1";
    private static final String SECRET_VALUE = "hf_never-in-a-pod-spec";

    private final Manifests manifests = new Manifests(new KubernetesConfig(null, null, NAMESPACE, null, null, null, null, null, "nfs-rwx", "1Ti", null,
            null, List.of("registry"), "http://slipstream.slipstream.svc:8080"));

    private static ClusterMetadata metadata() {
        List<ClusterMetadata.Instance> instances = new ArrayList<>();
        String[][] ranks = {{"coordinator-0", "coordinator", "0", "0", "gpu-node-1"}, {"worker-0", "worker", "1", "0", "gpu-node-1"},
                {"worker-1", "worker", "2", "1", "gpu-node-2"}};
        for (String[] rank : ranks) {
            String fqdn = rank[0] + "." + Names.service(RUN) + "." + NAMESPACE + ".svc.cluster.local";
            instances.add(new ClusterMetadata.Instance(rank[0], rank[1], Integer.parseInt(rank[2]), Integer.parseInt(rank[3]), rank[4], rank[0], fqdn,
                    null, List.of(29500), rank[1].equals("coordinator")));
        }
        return new ClusterMetadata(ClusterMetadata.FORMAT_VERSION, RUN.value(), "team-b", "bert-pretrain", 2, 3, "InOrder",
                new ClusterMetadata.Address(instances.get(0).fqdn(), 29500), instances,
                List.of(new ClusterMetadata.Storage("datasets", "job", "datasets", "/data"),
                        new ClusterMetadata.Storage("scratch", "run", "scratch", "/mnt/scratch")));
    }

    private static LaunchSpec instance(int rank, String name, String node, Resources resources, StartupProbe probe) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("LEARNING_RATE", "0.1");
        env.put("SLIPSTREAM_RUN_ID", RUN.value());
        env.put("SLIPSTREAM_RANK", Integer.toString(rank));
        env.put("MASTER_ADDR", metadata().master().addr());
        env.put("MASTER_PORT", "29500");
        env.put("SLIPSTREAM_RUN_TOKEN", "ss_not-in-the-pod-spec");
        env.put("SLIPSTREAM_SERVER", "http://127.0.0.1:8080");
        LaunchSpec spec = new LaunchSpec(new InstanceId(RUN, 2, rank), name, node, resources.gpu() == 0 ? List.of() : List.of(0, 1, 2, 3, 4, 5, 6, 7),
                List.of("python", "-m", "bert.train", "--role", name.replaceAll("-\\d+$", "")), env, null, IMAGE, metadata(), probe, resources);
        if (!name.startsWith("worker")) {
            return spec;
        }
        SecretValue token = SecretValue.of(SECRET_VALUE);
        return spec.withMemoryLimit(240L << 30).withSecrets(Map.of("HF_TOKEN", new LaunchSpec.SecretEnv("hf", "token", token)),
                List.of(new LaunchSpec.SecretFiles("hf", "/root/.cache/huggingface", Map.of("token", token, "config.json", SecretValue.of("{}")))));
    }

    private List<HasMetadata> objects() {
        List<HasMetadata> objects = new ArrayList<>();
        objects.add(manifests.service(RUN, NAMESPACE));
        objects.add(manifests.networkPolicy(RUN, NAMESPACE));
        objects.addAll(manifests.claims(RUN, metadata(), NAMESPACE));
        objects.add(manifests.attemptSecret(RUN, 2, NAMESPACE, "ss_not-in-the-pod-spec", instance(1, "worker-0", "gpu-node-1",
                new Resources(32_000, 200L << 30, 8, "nvidia-h100-80gb-hbm3"), null)));
        objects.add(manifests.metadata(RUN, 2, NAMESPACE, metadata(), Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(metadata()), false));
        objects.add(manifests.pod(instance(0, "coordinator-0", "gpu-node-1", new Resources(4_000, 16L << 30, 0, null),
                new StartupProbe(List.of("test", "-f", "/tmp/ready"), 5, 60, 10)), NAMESPACE, 3));
        Resources worker = new Resources(32_000, 200L << 30, 8, "nvidia-h100-80gb-hbm3");
        objects.add(manifests.pod(instance(1, "worker-0", "gpu-node-1", worker, null), NAMESPACE, 3));
        objects.add(manifests.pod(instance(2, "worker-1", "gpu-node-2", worker, null), NAMESPACE, 3));
        return objects;
    }

    @Test
    void theObjectsOfATwoGroupJobAreExactlyTheReviewedOnes() throws Exception {
        KubernetesSerialization serialization = new KubernetesSerialization();
        StringBuilder yaml = new StringBuilder("# Generated by ManifestsGoldenTest: the objects of a run of a two-group job, attempt 2.\n");
        for (HasMetadata object : objects()) {
            String document = serialization.asYaml(object);
            yaml.append(document.startsWith("---") ? document : "---\n" + document);
        }
        if (Boolean.getBoolean("golden.update")) {
            Files.createDirectories(GOLDEN.getParent());
            Files.writeString(GOLDEN, yaml, StandardCharsets.UTF_8);
        }
        assertThat(yaml.toString()).isEqualTo(Files.readString(GOLDEN, StandardCharsets.UTF_8));
    }

    @Test
    void secretValuesAreInTheAttemptsSecretOnlyNeverInAPodSpec() throws Exception {
        KubernetesSerialization serialization = new KubernetesSerialization();
        String base64 = java.util.Base64.getEncoder().encodeToString(SECRET_VALUE.getBytes(StandardCharsets.UTF_8));
        for (HasMetadata object : objects()) {
            String yaml = serialization.asYaml(object);
            assertThat(yaml).doesNotContain(SECRET_VALUE).doesNotContain("ss_not-in-the-pod-spec");
            if (!(object instanceof io.fabric8.kubernetes.api.model.Secret)) {
                assertThat(yaml).doesNotContain(base64);
            }
        }
        LaunchSpec worker = instance(1, "worker-0", "gpu-node-1", new Resources(32_000, 200L << 30, 8, null), null);
        assertThat(manifests.attemptSecret(RUN, 2, NAMESPACE, null, worker).getData())
                .containsEntry("secret.hf.token", base64).containsKey("secret.hf.config.json").doesNotContainKey("SLIPSTREAM_RUN_TOKEN");
    }

    @Test
    void aNodeGroupWithoutAnImageIsRefusedWithTheReason() {
        LaunchSpec noImage = new LaunchSpec(new InstanceId(RUN, 1, 0), "main-0", "gpu-node-1", List.of(), List.of("true"), Map.of(), null, null);
        assertThatThrownBy(() -> manifests.pod(noImage, NAMESPACE, 3)).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("main-0 has no image");
    }

    @Test
    void pathsFromInputStayInsideTheirVolume() {
        LaunchSpec escaping = new LaunchSpec(new InstanceId(RUN, 1, 0), "main-0", "gpu-node-1", List.of(), List.of("true"), Map.of(), "../etc",
                IMAGE);
        assertThatThrownBy(() -> manifests.pod(escaping, NAMESPACE, 3)).isInstanceOf(ExecutorException.class).hasMessageContaining("'..'");
        ClusterMetadata metadata = metadata();
        ClusterMetadata outside = new ClusterMetadata(metadata.version(), metadata.runId(), metadata.workspace(), metadata.job(), 1, 3, "InOrder",
                metadata.master(), metadata.instances(), List.of(new ClusterMetadata.Storage("x", "job", "/etc", "/x")));
        assertThatThrownBy(() -> manifests.mounts(RUN, outside)).isInstanceOf(ExecutorException.class).hasMessageContaining("relative");
    }

    @Test
    void longRunIdsGiveNamesKubernetesAccepts() {
        RunId longId = new RunId("a-job-with-a-really-long-name-that-goes-on-and-on-and-on-abcdefgh");
        assertThat(Names.service(longId)).hasSizeLessThanOrEqualTo(63).matches("[a-z]([-a-z0-9]*[a-z0-9])?");
        assertThat(Names.runKey(longId)).isNotEqualTo(Names.runKey(new RunId("a-job-with-a-really-long-name-that-goes-on-and-on-and-on-abcdefgz")));
        assertThat(Names.hostname("worker-12", 13)).isEqualTo("worker-12");
        assertThat(Names.hostname("Worker_12", 13)).isEqualTo("rank-13");
    }
}
