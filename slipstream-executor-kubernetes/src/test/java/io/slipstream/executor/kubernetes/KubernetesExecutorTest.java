package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.slipstream.api.codec.Json;
import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the Kubernetes executor does beyond the executor contract: nodes, metadata, lost nodes, adoption, clean-up. */
class KubernetesExecutorTest {
    private static final String IMAGE = "registry.example.com/trainer:1";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path root;

    private TestCluster cluster;
    private final List<KubernetesExecutor> executors = new ArrayList<>();
    private final List<InstanceReport> reports = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        cluster = new TestCluster(root);
    }

    @AfterEach
    void stop() {
        executors.forEach(KubernetesExecutor::close);
        List<String> forbidden = cluster.api.forbiddenExecutorRequests();
        cluster.close();
        assertThat(forbidden).as("requests the RBAC manifest does not allow").isEmpty();
    }

    private KubernetesExecutor executor(KubernetesConfig config) {
        KubernetesExecutor executor = cluster.executor(config, Clock.systemUTC());
        executor.setListener(reports::add);
        executors.add(executor);
        return executor;
    }

    private KubernetesExecutor executor() {
        return executor(TestCluster.config());
    }

    @SuppressWarnings("unchecked")
    private <R extends InstanceReport> R awaitReport(InstanceId id, Class<R> type) {
        await().atMost(TIMEOUT).until(() -> reports.stream().anyMatch(r -> r.id().equals(id) && type.isInstance(r)));
        return (R) reports.stream().filter(r -> r.id().equals(id) && type.isInstance(r)).findFirst().orElseThrow();
    }

    private static LaunchSpec spec(InstanceId id, String name, String node, String script, ClusterMetadata metadata) {
        return new LaunchSpec(id, name, node, List.of(), List.of("sh", "-c", script), Map.of(), null, IMAGE, metadata, null,
                new Resources(1000, 1L << 30, 1, "nvidia-h100-80gb-hbm3"));
    }

    /** A run's metadata as the control plane makes it on Kubernetes: addresses are names, IPs are not known yet. */
    private static ClusterMetadata metadata(KubernetesExecutor executor, RunId run, int count, String storageScope) {
        List<ClusterMetadata.Instance> instances = new ArrayList<>();
        for (int rank = 0; rank < count; rank++) {
            var endpoint = executor.endpoint(new InstanceId(run, 1, rank), "team-a", "worker-" + rank, TestCluster.NODES.get(rank % 2), 1,
                    java.util.Set.of());
            instances.add(new ClusterMetadata.Instance("worker-" + rank, "worker", rank, rank, TestCluster.NODES.get(rank % 2), endpoint.hostname(),
                    endpoint.fqdn(), endpoint.ip(), endpoint.ports(), true));
        }
        return new ClusterMetadata(ClusterMetadata.FORMAT_VERSION, run.value(), "team-a", "train", 1, count, "InParallel",
                new ClusterMetadata.Address(instances.get(0).fqdn(), 29500), instances,
                storageScope == null ? List.of() : List.of(new ClusterMetadata.Storage("out", storageScope, "out", "/mnt/out")));
    }

    private String log(KubernetesExecutor executor, InstanceId id, Map<String, String> handle) {
        return new String(executor.readLog(id, handle, LogStream.STDOUT, 0, 1 << 20).data(), StandardCharsets.UTF_8);
    }

    /** A job's own mounts may not hide or clash with the pod's own files (its identity tokens, Secrets, metadata, notice). */
    @Test
    void mountsOnOrAboveThePodsOwnDirectoriesAreRefused() {
        KubernetesExecutor executor = executor();
        io.slipstream.api.spec.JobSpec job = (io.slipstream.api.spec.JobSpec) io.slipstream.api.spec.Documents.readAll("""
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: j, workspace: w}
                spec:
                  storage: [{name: data, scope: job, mountPath: /var/lib/slipstream}, {name: ok, scope: job, mountPath: /data}]
                  nodeGroups:
                  - name: g
                    image: registry.example.com/t:1
                    command: [x]
                    resources: {cpu: 1, memory: 1Gi}
                    secrets: [{name: hf, mountPath: /var/run/slipstream/identity}, {name: aws, mountPath: /etc/aws}]
                """.getBytes(java.nio.charset.StandardCharsets.UTF_8)).get(0).spec();
        assertThat(executor.refusals(job)).containsOnlyKeys("nodeGroups[0].secrets[0].mountPath", "storage[0].mountPath");
        assertThat(executor.refusals(job).get("storage[0].mountPath")).contains("/var/lib/slipstream/checkpoints");
    }

    @Test
    void theNodesAreTheManagedClusterNodesWithTheirGpus() {
        cluster.admin.nodes().resource(TestCluster.node("cpu-node", true)).create();
        cluster.admin.nodes().withName("cpu-node").edit(node -> {
            node.getMetadata().getLabels().remove("slipstream.io/pool");
            return node;
        });
        KubernetesExecutor all = executor();
        await().atMost(TIMEOUT).until(() -> all.nodes().size() == 3);
        NodeInfo node = all.nodes().get(1);
        assertThat(node.name()).isEqualTo("gpu-node-1");
        assertThat(node.capacity()).isEqualTo(new Resources(32_000, 256L << 30, 8, "nvidia-h100-80gb-hbm3"));
        assertThat(node.labels()).containsEntry("slipstream.io/pool", "training");

        KubernetesConfig selected = new KubernetesConfig(null, null, TestCluster.NAMESPACE, null, null, Map.of("slipstream.io/pool", "training"),
                null, Duration.ofSeconds(2), null, null, null, null, null, null);
        KubernetesExecutor pool = executor(selected);
        assertThat(pool.nodes()).extracting(NodeInfo::name).containsExactly("gpu-node-1", "gpu-node-2");
        assertThatThrownBy(() -> pool.launch(spec(new InstanceId(new RunId("r-1"), 1, 0), "worker-0", "cpu-node", "true", null)))
                .isInstanceOf(ExecutorException.class).hasMessageContaining("no node named cpu-node");

        cluster.setReady("gpu-node-2", false);
        cluster.admin.nodes().withName("gpu-node-1").edit(n -> {
            n.getSpec().setTaints(List.of(new Taint("NoSchedule", "maintenance", null, "true")));
            return n;
        });
        await().atMost(TIMEOUT).until(() -> pool.nodes().isEmpty());
    }

    @Test
    void instancesStartOnceTheMetadataListsEveryAddressAndReachEachOtherByName() throws Exception {
        KubernetesExecutor executor = executor();
        RunId run = new RunId("train-4x");
        ClusterMetadata metadata = metadata(executor, run, 2, "job");
        List<Map<String, String>> handles = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            InstanceId id = new InstanceId(run, 1, rank);
            handles.add(executor.launch(spec(id, "worker-" + rank, TestCluster.NODES.get(rank), "cat \"$SLIPSTREAM_METADATA_FILE\"", metadata)));
        }
        for (int rank = 0; rank < 2; rank++) {
            InstanceId id = new InstanceId(run, 1, rank);
            assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
            ClusterMetadata seen = Json.mapper().readValue(log(executor, id, handles.get(rank)), ClusterMetadata.class);
            assertThat(seen.instances()).allSatisfy(instance -> assertThat(instance.ip()).startsWith("10.42.0."));
            assertThat(seen.instances()).extracting(ClusterMetadata.Instance::fqdn)
                    .containsExactly("worker-0.ss-train-4x.slipstream-jobs.svc.cluster.local", "worker-1.ss-train-4x.slipstream-jobs.svc.cluster.local");
            assertThat(seen.storage()).singleElement().satisfies(storage -> assertThat(storage.path()).isEqualTo("/mnt/out"));
        }
        Pod pod = cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withName("ss-train-4x-1-1").get();
        assertThat(pod.getSpec().getNodeName()).isEqualTo("gpu-node-2");
        assertThat(pod.getSpec().getHostname()).isEqualTo("worker-1");
        assertThat(pod.getMetadata().getLabels()).containsEntry("slipstream.io/run", "train-4x").containsEntry("slipstream.io/attempt", "1")
                .containsEntry("slipstream.io/rank", "1").containsEntry("slipstream.io/node-group", "worker");
        assertThat(pod.getSpec().getContainers().get(0).getResources().getLimits()).containsKey("nvidia.com/gpu");
        assertThat(cluster.admin.services().inNamespace(TestCluster.NAMESPACE).withName("ss-train-4x").get().getSpec().getClusterIP()).isEqualTo("None");
        assertThat(cluster.admin.network().networkPolicies().inNamespace(TestCluster.NAMESPACE).withName("ss-train-4x").get()).isNotNull();
    }

    @Test
    void metadataLeftIncompleteByAControlPlaneThatStoppedIsCompletedByTheNextOne() {
        KubernetesExecutor before = executor();
        RunId run = new RunId("half-1");
        ClusterMetadata metadata = metadata(before, run, 2, null);
        cluster.kubelet.pause();
        for (int rank = 0; rank < 2; rank++) {
            before.launch(spec(new InstanceId(run, 1, rank), "worker-" + rank, TestCluster.NODES.get(rank), "exit 0", metadata));
        }
        before.close(); // no pod has an IP yet: the metadata is not complete

        KubernetesExecutor after = executor();
        after.adopt(Map.of(new InstanceId(run, 1, 0), after.find(new InstanceId(run, 1, 0)).orElseThrow(),
                new InstanceId(run, 1, 1), after.find(new InstanceId(run, 1, 1)).orElseThrow()));
        cluster.kubelet.resume();
        assertThat(awaitReport(new InstanceId(run, 1, 0), InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(awaitReport(new InstanceId(run, 1, 1), InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(cluster.admin.configMaps().inNamespace(TestCluster.NAMESPACE).withName("ss-half-1-1-metadata").get().getData())
                .containsKey("complete");
    }

    @Test
    void aWorkspaceWithANamespaceOfItsOwnGetsEverythingThere() {
        KubernetesExecutor executor = executor();
        RunId run = new RunId("ns-1");
        var endpoint = executor.endpoint(new InstanceId(run, 1, 0), "team-b", "worker-0", "gpu-node-1", 1, java.util.Set.of());
        assertThat(endpoint.fqdn()).isEqualTo("worker-0.ss-ns-1.team-b-jobs.svc.cluster.local");
        ClusterMetadata metadata = new ClusterMetadata(ClusterMetadata.FORMAT_VERSION, run.value(), "team-b", "train", 1, 1, "InParallel",
                new ClusterMetadata.Address(endpoint.fqdn(), 29500), List.of(new ClusterMetadata.Instance("worker-0", "worker", 0, 0, "gpu-node-1",
                        endpoint.hostname(), endpoint.fqdn(), null, endpoint.ports(), true)), List.of());
        InstanceId id = new InstanceId(run, 1, 0);
        Map<String, String> handle = executor.launch(spec(id, "worker-0", "gpu-node-1", "echo in-b", metadata));
        assertThat(handle).containsEntry("namespace", TestCluster.TEAM_B_NAMESPACE);
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(log(executor, id, handle)).isEqualTo("in-b\n");
        assertThat(cluster.admin.services().inNamespace(TestCluster.TEAM_B_NAMESPACE).withName("ss-ns-1").get()).isNotNull();
        assertThat(cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withLabel("slipstream.io/run", "ns-1").list().getItems()).isEmpty();
        assertThat(executor().find(id)).hasValueSatisfying(found -> assertThat(found).containsEntry("namespace", TestCluster.TEAM_B_NAMESPACE));

        executor.forget(run);
        await().atMost(TIMEOUT).until(() -> executor.find(id).isEmpty());
        assertThat(cluster.admin.services().inNamespace(TestCluster.TEAM_B_NAMESPACE).withName("ss-ns-1").get()).isNull();
    }

    @Test
    void aNodeGroupThatStartsLaterAddsItsSecretsToTheAttemptsSecretWhichGoesWithTheRun() {
        KubernetesExecutor executor = executor();
        RunId run = new RunId("secrets-1");
        ClusterMetadata metadata = metadata(executor, run, 2, null);
        // InOrder: the second group is not started when the first is.
        List<ClusterMetadata.Instance> onlyFirst = new ArrayList<>();
        for (ClusterMetadata.Instance i : metadata.instances()) {
            onlyFirst.add(new ClusterMetadata.Instance(i.name(), i.nodeGroup(), i.rank(), i.groupRank(), i.node(), i.hostname(), i.fqdn(), i.ip(),
                    i.ports(), i.rank() == 0));
        }
        ClusterMetadata firstStarted = new ClusterMetadata(metadata.version(), metadata.runId(), metadata.workspace(), metadata.job(),
                metadata.attempt(), metadata.worldSize(), "InOrder", metadata.master(), onlyFirst, metadata.storage());
        io.slipstream.api.spec.SecretValue first = io.slipstream.api.spec.SecretValue.of("value-of-a");
        io.slipstream.api.spec.SecretValue second = io.slipstream.api.spec.SecretValue.of("value-of-b");
        InstanceId coordinator = new InstanceId(run, 1, 0);
        LaunchSpec withToken = new LaunchSpec(coordinator, "worker-0", TestCluster.NODES.get(0), List.of(), List.of("sh", "-c", "echo \"$A\""),
                Map.of(LaunchSpec.RUN_TOKEN_ENV, "ss_token"), null, IMAGE, firstStarted, null, null)
                .withSecrets(Map.of("A", new LaunchSpec.SecretEnv("a", "x", first)), List.of());
        Map<String, String> firstHandle = executor.launch(withToken);
        assertThat(awaitReport(coordinator, InstanceReport.Exited.class).exitCode()).isZero();
        InstanceId worker = new InstanceId(run, 1, 1);
        Map<String, String> secondHandle = executor.launch(spec(worker, "worker-1", TestCluster.NODES.get(1),
                "cat \"$SLIPSTREAM_SECRETS_DIR/b/y\"", metadata)
                .withSecrets(Map.of(), List.of(new LaunchSpec.SecretFiles("b", "/etc/b", Map.of("y", second)))));
        assertThat(awaitReport(worker, InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(log(executor, coordinator, firstHandle)).isEqualTo("value-of-a\n");
        assertThat(log(executor, worker, secondHandle)).isEqualTo("value-of-b");
        assertThat(cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withName(Names.pod(worker)).get().getSpec().getContainers().get(0)
                .getVolumeMounts()).anySatisfy(mount -> assertThat(mount.getMountPath()).isEqualTo("/etc/b"));

        var secrets = cluster.admin.secrets().inNamespace(TestCluster.NAMESPACE).withLabel("slipstream.io/run", "secrets-1");
        assertThat(secrets.list().getItems()).singleElement().satisfies(secret -> assertThat(secret.getData())
                .containsOnlyKeys(LaunchSpec.RUN_TOKEN_ENV, "secret.a.x", "secret.b.y"));
        assertThat(cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withLabel("slipstream.io/run", "secrets-1").list().getItems())
                .allSatisfy(pod -> assertThat(io.slipstream.api.codec.Json.mapper().writeValueAsString(pod)).doesNotContain("value-of"));
        executor.forget(run);
        await().atMost(TIMEOUT).until(() -> secrets.list().getItems().isEmpty());
    }

    @Test
    void anImageThatCannotBePulledFailsTheInstanceWithTheReasonInsteadOfHanging() {
        KubernetesExecutor executor = executor();
        InstanceId id = new InstanceId(new RunId("pull-1"), 1, 0);
        executor.launch(new LaunchSpec(id, "main-0", TestCluster.NODES.get(0), List.of(), List.of("true"), Map.of(), null, "missing/trainer:9"));
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        assertThat(exited.exitCode()).isEqualTo(127);
        assertThat(exited.terminated()).isFalse();
        assertThat(exited.reason()).startsWith("ImagePullFailed: ImagePullBackOff").contains("missing/trainer:9");
        await().atMost(TIMEOUT).until(() -> cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withName("ss-pull-1-1-0").get() == null);
    }

    @Test
    void aNodeNotReadyForLongerThanTheTimeoutLosesItsInstances() {
        KubernetesExecutor executor = executor();
        InstanceId onLostNode = new InstanceId(new RunId("lost-1"), 1, 0);
        InstanceId elsewhere = new InstanceId(new RunId("lost-2"), 1, 0);
        Map<String, String> handle = executor.launch(spec(onLostNode, "main-0", "gpu-node-2", "echo up; exec sleep 600", null));
        executor.launch(spec(elsewhere, "main-0", "gpu-node-1", "exec sleep 600", null));
        await().atMost(TIMEOUT).until(() -> log(executor, onLostNode, handle).contains("up"));

        cluster.setReady("gpu-node-2", false);
        InstanceReport.Lost lost = awaitReport(onLostNode, InstanceReport.Lost.class);
        assertThat(lost.reason()).startsWith("NodeLost: node gpu-node-2 is NotReady for");
        assertThat(lost.nodeLost()).isTrue();
        await().atMost(TIMEOUT).until(() -> cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withName("ss-lost-1-1-0").get() == null);
        assertThat(reports).noneMatch(r -> r.id().equals(elsewhere) && !(r instanceof InstanceReport.Running));
        executor.terminate(elsewhere, executor.find(elsewhere).orElseThrow(), Duration.ZERO, "test");
    }

    @Test
    void theNoticeWithReasonAndDeadlineReachesTheInstanceWithTheSignal() {
        KubernetesExecutor executor = executor();
        InstanceId id = new InstanceId(new RunId("notice-1"), 1, 0);
        Map<String, String> handle = executor.launch(spec(id, "main-0", "gpu-node-1",
                "trap 'cat \"$SLIPSTREAM_PREEMPTION_NOTICE_FILE\"; echo; echo saved; exit 0' TERM; echo started; "
                        + "while true; do sleep 0.1; done", null));
        await().atMost(TIMEOUT).until(() -> log(executor, id, handle).contains("started"));
        executor.terminate(id, handle, Duration.ofSeconds(30), "ReclaimedByQuotaOwner: team-a needs its GPUs");
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        assertThat(exited.terminated()).isTrue();
        assertThat(exited.exitCode()).isZero();
        String log = log(executor, id, handle);
        assertThat(log).contains("\"reason\":\"ReclaimedByQuotaOwner: team-a needs its GPUs\"", "\"deadline\"", "saved");
        assertThat(cluster.kubelet.anyProcessAlive(handle.get("pod"))).isFalse();
    }

    @Test
    void aRestartedControlPlaneAdoptsPodsNeverDuplicatesThemAndDeletesThoseOfOlderAttempts() {
        KubernetesExecutor before = executor();
        RunId run = new RunId("adopt-1");
        InstanceId old = new InstanceId(run, 1, 0);
        InstanceId current = new InstanceId(run, 2, 0);
        before.launch(spec(old, "main-0", "gpu-node-1", "exec sleep 600", null)); // left over from a restart under way
        Map<String, String> handle = before.launch(spec(current, "main-0", "gpu-node-1", "echo up; exec sleep 600", null));
        await().atMost(TIMEOUT).until(() -> log(before, current, handle).contains("up"));
        before.close();

        KubernetesExecutor after = executor();
        assertThat(after.launch(spec(current, "main-0", "gpu-node-1", "echo twice; exec sleep 600", null)).get("uid"))
                .as("a launch the store had not recorded finds the pod instead of making a second one").isEqualTo(handle.get("uid"));
        after.adopt(Map.of(current, handle));
        awaitReport(current, InstanceReport.Running.class);
        await().atMost(TIMEOUT).until(() -> cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withName("ss-adopt-1-1-0").get() == null);
        assertThat(cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withLabel("slipstream.io/run", "adopt-1").list().getItems())
                .extracting(p -> p.getMetadata().getName()).containsExactly("ss-adopt-1-2-0");
        assertThat(log(after, current, handle)).isEqualTo("up\n");

        after.terminate(current, handle, Duration.ofSeconds(5), "test");
        assertThat(awaitReport(current, InstanceReport.Exited.class).terminated()).isTrue();
    }

    @Test
    void forgettingARunDeletesItsObjectsButKeepsWhatItsJobShares() {
        KubernetesExecutor executor = executor();
        RunId run = new RunId("forget-1");
        InstanceId id = new InstanceId(run, 1, 0);
        executor.launch(spec(id, "worker-0", "gpu-node-1", "echo done > \"$SLIPSTREAM_STORAGE_OUT/result\"", metadata(executor, run, 1, "job")));
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        var claims = cluster.admin.persistentVolumeClaims().inNamespace(TestCluster.NAMESPACE);
        assertThat(claims.list().getItems()).extracting(c -> c.getMetadata().getName()).containsExactlyInAnyOrder("ss-forget-1-run", "ss-job-team-a-train");

        executor.forget(run);

        await().atMost(TIMEOUT).until(() -> executor.find(id).isEmpty());
        assertThat(claims.list().getItems()).extracting(c -> c.getMetadata().getName()).containsExactly("ss-job-team-a-train");
        assertThat(cluster.admin.services().inNamespace(TestCluster.NAMESPACE).withLabel("slipstream.io/run", "forget-1").list().getItems()).isEmpty();
        assertThat(cluster.admin.configMaps().inNamespace(TestCluster.NAMESPACE).withLabel("slipstream.io/run", "forget-1").list().getItems()).isEmpty();
        assertThat(cluster.admin.network().networkPolicies().inNamespace(TestCluster.NAMESPACE).withLabel("slipstream.io/run", "forget-1").list()
                .getItems()).isEmpty();
    }
}
