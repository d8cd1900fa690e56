package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.slipstream.api.codec.Json;
import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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

/**
 * Restarts in place ({@code runType: Async}, and elastic runs' survivors) as they are on Kubernetes: a new pod of its
 * own name on the node the instance holds, with the instance's DNS name and the new environment; the ended pod's news,
 * a stop of the launch before and a restarted control plane never take one launch for the other.
 */
class KubernetesRestartInPlaceTest {
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

    private KubernetesExecutor executor() {
        KubernetesExecutor executor = cluster.executor(TestCluster.config(), Clock.systemUTC());
        executor.setListener(reports::add);
        executors.add(executor);
        return executor;
    }

    /** Two workers of a run, worker-0 on gpu-node-1 and worker-1 on gpu-node-2, reached by name. */
    private static ClusterMetadata metadata(KubernetesExecutor executor, RunId run, int worldSize) {
        List<ClusterMetadata.Instance> instances = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            var endpoint = executor.endpoint(new InstanceId(run, 1, rank), "team-a", "worker-" + rank, TestCluster.NODES.get(rank), 1,
                    java.util.Set.of());
            instances.add(new ClusterMetadata.Instance("worker-" + rank, "worker", rank, rank, TestCluster.NODES.get(rank), endpoint.hostname(),
                    endpoint.fqdn(), endpoint.ip(), endpoint.ports(), true));
        }
        return new ClusterMetadata(ClusterMetadata.FORMAT_VERSION, run.value(), "team-a", "train", 1, worldSize, "InParallel",
                new ClusterMetadata.Address(instances.get(0).fqdn(), 29500), instances, List.of());
    }

    private static LaunchSpec spec(InstanceId id, String script, Map<String, String> env, ClusterMetadata metadata) {
        String name = "worker-" + id.rank();
        return new LaunchSpec(id, name, TestCluster.NODES.get(id.rank()), List.of(), List.of("sh", "-c", script), env, null, IMAGE, metadata,
                null, null);
    }

    /** The reports about {@code id} that end a launch (exits and losses), in the order they came. */
    private List<InstanceReport> ends(InstanceId id) {
        return reports.stream().filter(r -> r.id().equals(id) && (r instanceof InstanceReport.Exited || r instanceof InstanceReport.Lost)).toList();
    }

    private InstanceReport awaitEnd(InstanceId id, int count) {
        await().atMost(TIMEOUT).until(() -> ends(id).size() >= count);
        return ends(id).get(count - 1);
    }

    private static String log(Executor executor, InstanceId id, Map<String, String> handle) {
        return new String(executor.readLog(id, handle, LogStream.STDOUT, 0, 1 << 20).data(), StandardCharsets.UTF_8);
    }

    private Pod pod(String name) {
        return cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withName(name).get();
    }

    /** A named pipe the instance blocks on ({@code read line < "$GATE"}) until {@link #open} writes to it. */
    private Path gate(String name) throws Exception {
        Path fifo = root.resolve("gate-" + name);
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
        return fifo;
    }

    private static void open(Path gate) throws Exception {
        Files.writeString(gate, "go\n");
    }

    @Test
    void aRestartIsANewPodOnTheSameNodeWithTheSameDnsNameTheNewEnvironmentAndItsOwnAddress() throws Exception {
        KubernetesExecutor executor = executor();
        RunId run = new RunId("elastic-1");
        InstanceId survivor = new InstanceId(run, 1, 0);
        InstanceId restarted = new InstanceId(run, 1, 1);
        Map<String, String> survivorHandle = executor.launch(spec(survivor, "echo up; exec sleep 600", Map.of(), metadata(executor, run, 2)));
        Map<String, String> first = executor.launch(spec(restarted, "echo first; exit 137", Map.of("WORLD_SIZE", "2"), metadata(executor, run, 2)));
        assertThat(((InstanceReport.Exited) awaitEnd(restarted, 1)).exitCode()).isEqualTo(137);
        await().atMost(TIMEOUT).until(() -> log(executor, survivor, survivorHandle).contains("up"));
        String oldIp = pod(first.get("pod")).getStatus().getPodIP();

        Path gate = gate("elastic-1");
        Map<String, String> second = executor.launch(spec(restarted, "echo \"host=$HOSTNAME world=$WORLD_SIZE\"; read line < \"$GATE\"; exit 3",
                Map.of("WORLD_SIZE", "3", "GATE", gate.toString()), metadata(executor, run, 3)).withRestart(1));

        assertThat(Executor.restartOf(second)).isEqualTo(1);
        assertThat(second.get("pod")).isEqualTo("ss-elastic-1-1-1-r1").isNotEqualTo(first.get("pod"));
        Pod pod = pod(second.get("pod"));
        assertThat(pod.getSpec().getNodeName()).as("pinned to the node the instance holds").isEqualTo("gpu-node-2");
        assertThat(pod.getSpec().getHostname() + "." + pod.getSpec().getSubdomain() + "." + TestCluster.NAMESPACE + ".svc.cluster.local")
                .as("its DNS name, which peers reach it by, is the one it had").isEqualTo("worker-1.ss-elastic-1.slipstream-jobs.svc.cluster.local");
        assertThat(pod.getMetadata().getLabels()).containsEntry("slipstream.io/rank", "1").containsEntry("slipstream.io/restart", "1");
        await().atMost(TIMEOUT).until(() -> log(executor, restarted, second).contains("host="));
        assertThat(log(executor, restarted, second)).isEqualTo("host=worker-1 world=3\n");

        // The metadata lists the new pod's address, not the ended one's, and the new world.
        await().atMost(TIMEOUT).until(() -> {
            var data = cluster.admin.configMaps().inNamespace(TestCluster.NAMESPACE).withName("ss-elastic-1-1-metadata").get().getData();
            ClusterMetadata seen = Json.mapper().readValue(data.get(Manifests.METADATA_KEY), ClusterMetadata.class);
            return data.containsKey(Manifests.COMPLETE_KEY) && seen.worldSize() == 3
                    && pod(second.get("pod")).getStatus().getPodIP().equals(seen.instances().get(1).ip());
        });
        assertThat(pod(second.get("pod")).getStatus().getPodIP()).isNotEqualTo(oldIp);

        // The ended pod is deleted; its log stays, read through its own handle.
        await().atMost(TIMEOUT).until(() -> pod(first.get("pod")) == null);
        assertThat(log(executor, restarted, first)).isEqualTo("first\n");
        assertThat(executor.find(restarted)).contains(second);

        // Its peer ran on through the restart: the same pod, never reported ended.
        assertThat(pod(survivorHandle.get("pod")).getMetadata().getUid()).isEqualTo(survivorHandle.get("uid"));
        open(gate);
        assertThat(awaitEnd(restarted, 2)).isInstanceOfSatisfying(InstanceReport.Exited.class, e -> assertThat(e.exitCode()).isEqualTo(3));
        assertThat(ends(survivor)).isEmpty();
        executor.terminate(survivor, survivorHandle, Duration.ZERO, "test");
    }

    /**
     * An elastic world whose ranks are not its slots (of a run of groups a and b, a shrink left a-0 and b-0: b-0 is slot
     * 2 and rank 1): each member is found by its instance, not by its rank, so the metadata lists it at its own pod's
     * address and its pod is labelled with its own group; the world starts.
     */
    @Test
    void aWorldWhoseRanksAreNotItsSlotsListsEachMemberAtItsOwnPodsAddress() {
        KubernetesExecutor executor = executor();
        RunId run = new RunId("gap-1");
        List<InstanceId> slots = List.of(new InstanceId(run, 1, 0), new InstanceId(run, 1, 2));
        List<String> names = List.of("a-0", "b-0");
        List<ClusterMetadata.Instance> members = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            var endpoint = executor.endpoint(slots.get(rank), "team-a", names.get(rank), TestCluster.NODES.get(rank), 1, java.util.Set.of());
            members.add(new ClusterMetadata.Instance(names.get(rank), names.get(rank).substring(0, 1), rank, 0, TestCluster.NODES.get(rank),
                    endpoint.hostname(), endpoint.fqdn(), endpoint.ip(), endpoint.ports(), true));
        }
        ClusterMetadata metadata = new ClusterMetadata(ClusterMetadata.FORMAT_VERSION, run.value(), "team-a", "train", 1, 2, "InParallel",
                new ClusterMetadata.Address(members.get(0).fqdn(), 29500), members, List.of());
        List<Map<String, String>> handles = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            handles.add(executor.launch(new LaunchSpec(slots.get(rank), names.get(rank), TestCluster.NODES.get(rank), List.of(),
                    List.of("sh", "-c", "echo up; exec sleep 600"), Map.of(), null, IMAGE, metadata, null, null)));
        }
        await("each main container starts once the metadata has every member's address").atMost(TIMEOUT)
                .until(() -> log(executor, slots.get(0), handles.get(0)).contains("up") && log(executor, slots.get(1), handles.get(1)).contains("up"));

        var data = cluster.admin.configMaps().inNamespace(TestCluster.NAMESPACE).withName("ss-gap-1-1-metadata").get().getData();
        ClusterMetadata seen = Json.mapper().readValue(data.get(Manifests.METADATA_KEY), ClusterMetadata.class);
        assertThat(seen.instances()).extracting(i -> i.name() + "@" + i.ip()).containsExactly(
                "a-0@" + pod(handles.get(0).get("pod")).getStatus().getPodIP(), "b-0@" + pod(handles.get(1).get("pod")).getStatus().getPodIP());
        assertThat(pod(handles.get(1).get("pod")).getMetadata().getLabels()).containsEntry("slipstream.io/rank", "2")
                .containsEntry("slipstream.io/node-group", "b");
        for (int rank = 0; rank < 2; rank++) {
            executor.terminate(slots.get(rank), handles.get(rank), Duration.ZERO, "test");
        }
    }

    @Test
    void aStopOfTheLaunchBeforeARestartLeavesTheRestartRunning() throws Exception {
        KubernetesExecutor executor = executor();
        InstanceId id = new InstanceId(new RunId("ps-1"), 1, 1);
        Map<String, String> first = executor.launch(spec(id, "exit 137", Map.of(), null));
        awaitEnd(id, 1);
        Path gate = gate("ps-1");
        Map<String, String> second = executor.launch(spec(id, "echo second; read line < \"$GATE\"; exit 3", Map.of("GATE", gate.toString()), null)
                .withRestart(1));
        await().atMost(TIMEOUT).until(() -> log(executor, id, second).contains("second"));

        // A control loop that still holds the ended launch's handle stops it: that launch is over, and the restart is not it.
        executor.terminate(id, first, Duration.ZERO, "stale");
        assertThat(pod(second.get("pod")).getMetadata().getDeletionTimestamp()).isNull();
        open(gate);
        assertThat(awaitEnd(id, 2)).as("the restart's own end, neither the first launch's again nor a kill")
                .isInstanceOfSatisfying(InstanceReport.Exited.class, e -> assertThat(e.terminated()).isFalse())
                .isInstanceOfSatisfying(InstanceReport.Exited.class, e -> assertThat(e.exitCode()).isEqualTo(3));
    }

    @Test
    void anInstanceWhoseLaunchStillRunsIsNotRestarted() {
        KubernetesExecutor executor = executor();
        InstanceId id = new InstanceId(new RunId("busy-1"), 1, 0);
        Map<String, String> first = executor.launch(spec(id, "echo up; exec sleep 600", Map.of(), null));
        await().atMost(TIMEOUT).until(() -> log(executor, id, first).contains("up"));

        assertThatThrownBy(() -> executor.launch(spec(id, "echo twice", Map.of(), null).withRestart(1)))
                .isInstanceOf(ExecutorException.class).hasMessageContaining("still running");
        assertThat(pod("ss-busy-1-1-0-r1")).as("no second pod of the rank").isNull();
        assertThat(executor.find(id)).contains(first);
        executor.terminate(id, first, Duration.ZERO, "test");
    }

    @Test
    void forgettingTheRunRemovesTheLogCopyOfALaunchWhosePodIsGone() throws Exception {
        KubernetesExecutor executor = executor();
        InstanceId id = new InstanceId(new RunId("forget-r-1"), 1, 0);
        Map<String, String> first = executor.launch(spec(id, "echo first; exit 137", Map.of(), null));
        awaitEnd(id, 1);
        Map<String, String> second = executor.launch(spec(id, "echo second", Map.of(), null).withRestart(1));
        awaitEnd(id, 2);
        await().atMost(TIMEOUT).until(() -> pod(first.get("pod")) == null);
        assertThat(log(executor, id, first)).isEqualTo("first\n");
        assertThat(log(executor, id, second)).isEqualTo("second\n");

        executor.forget(id.runId());
        // The first launch's pod was gone before: its copy is found by its name, not by a pod that lists it.
        try (var copies = Files.list(root.resolve("control-plane/pod-logs").resolve(TestCluster.NAMESPACE))) {
            assertThat(copies.map(file -> file.getFileName().toString())).noneMatch(name -> name.startsWith(first.get("pod") + "."));
        }
    }

    @Test
    void aRestartedControlPlaneFindsAndAdoptsTheNewestLaunch() throws Exception {
        KubernetesExecutor before = executor();
        InstanceId id = new InstanceId(new RunId("adopt-r-1"), 1, 0);
        before.launch(spec(id, "exit 137", Map.of(), null));
        awaitEnd(id, 1);
        Path gate = gate("adopt-r-1");
        Map<String, String> second = before.launch(spec(id, "echo second; read line < \"$GATE\"; exit 3", Map.of("GATE", gate.toString()), null)
                .withRestart(1));
        await().atMost(TIMEOUT).until(() -> log(before, id, second).contains("second"));
        before.close(); // the control plane goes away; the restart runs on

        KubernetesExecutor after = executor();
        Map<String, String> found = after.find(id).orElseThrow();
        assertThat(found).as("the newest launch, with its restart").isEqualTo(second).containsEntry(Executor.RESTART_KEY, "1");
        assertThat(after.launch(spec(id, "echo third", Map.of(), null).withRestart(1))).as("the same restart again is found, not made twice")
                .isEqualTo(second);
        after.adopt(Map.of(id, found));
        await().atMost(TIMEOUT).until(() -> reports.stream().anyMatch(r -> r instanceof InstanceReport.Running running && running.id().equals(id)
                && Executor.restartOf(running.handle()) == 1));
        open(gate);
        assertThat(awaitEnd(id, 2)).isInstanceOfSatisfying(InstanceReport.Exited.class, e -> assertThat(e.exitCode()).isEqualTo(3));
        assertThat(log(after, id, second)).isEqualTo("second\n");
    }
}
