package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
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
 * The leader fence as the executor sends it: pods carry their leader's epoch, stops stamp the pod and delete it as
 * stamped, a reconciliation leaves a newer leader's pods alone; and with the fence policy installed in the (mock)
 * API server, a stale leader that got past its own check of the fence is refused there.
 */
class KubernetesFenceTest {
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

    private KubernetesExecutor executor(long epoch) {
        KubernetesExecutor executor = cluster.executor(TestCluster.config(), Clock.systemUTC());
        executor.setListener(reports::add);
        executors.add(executor);
        executor.fence(epoch);
        return executor;
    }

    private <R extends InstanceReport> void awaitReport(InstanceId id, Class<R> type) {
        await().atMost(TIMEOUT).until(() -> reports.stream().anyMatch(r -> r.id().equals(id) && type.isInstance(r)));
    }

    private static LaunchSpec spec(InstanceId id, String script) {
        return new LaunchSpec(id, "main-0", TestCluster.NODES.get(0), List.of(), List.of("sh", "-c", script), Map.of(), null,
                "registry.example.com/trainer:1");
    }

    /** Stopped once running: a pod deleted before the test kubelet starts it makes the kubelet complain. */
    private void awaitRunning(InstanceId id) {
        await().atMost(TIMEOUT).until(() -> pod(id) != null && pod(id).getStatus() != null && "Running".equals(pod(id).getStatus().getPhase()));
    }

    private Pod pod(InstanceId id) {
        return cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withName(Names.pod(id)).get();
    }

    private List<String> writes(InstanceId id) {
        return cluster.api.podWrites().stream().filter(w -> w.contains(" " + TestCluster.NAMESPACE + "/" + Names.pod(id) + " ")).toList();
    }

    @Test
    void everyPodCarriesTheEpochOfTheLeaderThatCreatedIt() {
        KubernetesExecutor executor = executor(7);
        InstanceId id = new InstanceId(new RunId("epoch-1"), 1, 0);
        executor.launch(spec(id, "exec sleep 600"));
        assertThat(pod(id).getMetadata().getLabels()).containsEntry("slipstream.io/epoch", "7");
        awaitRunning(id);
        assertThat(writes(id)).containsExactly("CREATE slipstream-jobs/ss-epoch-1-1-0 epoch=7");
        executor.terminate(id, executor.find(id).orElseThrow(), Duration.ZERO, "test");
    }

    @Test
    void aStopStampsThePodWithItsEpochThenDeletesThePodAsStampedWithTheGracePeriod() {
        cluster.api.installFencePolicy();
        KubernetesExecutor old = executor(1);
        InstanceId id = new InstanceId(new RunId("stop-1"), 1, 0);
        Map<String, String> handle = old.launch(spec(id, "trap 'exit 0' TERM; echo up; while true; do sleep 0.1; done"));
        old.close();

        KubernetesExecutor leader = executor(2); // a pod of an older epoch is ours: adopted and stopped
        leader.adopt(Map.of(id, handle));
        awaitReport(id, InstanceReport.Running.class);
        leader.terminate(id, handle, Duration.ofSeconds(5), "test");
        awaitReport(id, InstanceReport.Exited.class);

        List<String> writes = writes(id);
        assertThat(writes).hasSize(3);
        assertThat(writes.get(0)).isEqualTo("CREATE slipstream-jobs/ss-stop-1-1-0 epoch=1");
        assertThat(writes.get(1)).matches("STAMP slipstream-jobs/ss-stop-1-1-0 stop-epoch=2 rv=\\d+");
        String stamped = writes.get(1).replaceAll(".* rv=", "");
        assertThat(writes.get(2)).as("the delete acts on the pod as stamped, with the grace period asked for")
                .isEqualTo("DELETE slipstream-jobs/ss-stop-1-1-0 rv=" + stamped + " grace=5");
    }

    @Test
    void aPodThatChangedBetweenStampAndDeleteIsStampedAndDeletedAgain() {
        cluster.api.installFencePolicy();
        KubernetesExecutor executor = executor(3);
        InstanceId id = new InstanceId(new RunId("stop-2"), 1, 0);
        Map<String, String> handle = executor.launch(spec(id, "exec sleep 600"));
        awaitRunning(id);
        cluster.api.conflictOnNextDeletes(1);
        executor.terminate(id, handle, Duration.ZERO, "test");
        awaitReport(id, InstanceReport.Exited.class);
        await().atMost(TIMEOUT).until(() -> pod(id) == null);
        assertThat(writes(id)).hasSize(5).satisfies(w -> {
            assertThat(w.get(1)).startsWith("STAMP slipstream-jobs/ss-stop-2-1-0 stop-epoch=3 rv=");
            assertThat(w.get(2)).startsWith("DELETE slipstream-jobs/ss-stop-2-1-0 rv=").endsWith(" grace=0 -> 409");
            assertThat(w.get(3)).startsWith("STAMP slipstream-jobs/ss-stop-2-1-0 stop-epoch=3 rv=");
            assertThat(w.get(4)).isEqualTo("DELETE slipstream-jobs/ss-stop-2-1-0 rv=" + w.get(3).replaceAll(".* rv=", "") + " grace=0");
        });
    }

    @Test
    void aStaleLeaderPastItsOwnCheckIsRefusedByTheApiServer() {
        cluster.api.installFencePolicy();
        KubernetesExecutor old = executor(4);
        InstanceId running = new InstanceId(new RunId("stale-1"), 1, 0);
        Map<String, String> handle = old.launch(spec(running, "exec sleep 600"));
        KubernetesExecutor successor = executor(5);
        cluster.api.serveStaleFenceReads(4); // the old leader read the fence just before the successor moved it

        InstanceId late = new InstanceId(new RunId("stale-2"), 1, 0);
        assertThatThrownBy(() -> old.launch(spec(late, "echo never"))).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("fenced").hasMessageContaining("epoch 4, but epoch 5 leads");
        assertThat(pod(late)).isNull();
        assertThatThrownBy(() -> old.terminate(running, handle, Duration.ZERO, "stale")).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("fenced").hasMessageContaining("epoch 4, but epoch 5 leads");
        assertThat(pod(running)).as("the stale stop did not happen").isNotNull();
        assertThat(pod(running).getMetadata().getLabels()).doesNotContainKey("slipstream.io/stop-epoch");
        assertThat(writes(running)).containsExactly("CREATE slipstream-jobs/ss-stale-1-1-0 epoch=4",
                "STAMP slipstream-jobs/ss-stale-1-1-0 stop-epoch=4 -> 403");

        awaitRunning(running);
        successor.terminate(running, handle, Duration.ZERO, "test");
        await().atMost(TIMEOUT).until(() -> pod(running) == null);
    }

    /**
     * The old leader stamped the pod while it led, but its delete did not go through (the pod kept changing). Once a
     * newer leader fenced, the old one's next try (past its own stale check) stamps the same epoch again: the stamp
     * must still be refused, or its delete would act on the pod as "stamped" after the takeover.
     */
    @Test
    void aStaleLeaderCannotFinishAStopItStampedWhileItLed() {
        cluster.api.installFencePolicy();
        KubernetesExecutor old = executor(6);
        InstanceId id = new InstanceId(new RunId("stale-3"), 1, 0);
        Map<String, String> handle = old.launch(spec(id, "exec sleep 600"));
        awaitRunning(id);
        cluster.api.conflictOnNextDeletes(5);
        old.terminate(id, handle, Duration.ZERO, "while leading"); // stamped, never deleted: the control loop would ask again
        assertThat(pod(id).getMetadata().getLabels()).containsEntry("slipstream.io/stop-epoch", "6");

        KubernetesExecutor successor = executor(7);
        cluster.api.serveStaleFenceReads(6);
        assertThatThrownBy(() -> old.terminate(id, handle, Duration.ZERO, "stale")).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("fenced");
        assertThat(pod(id)).as("the stale stop did not happen").isNotNull();
        assertThat(pod(id).getMetadata().getDeletionTimestamp()).isNull();

        successor.terminate(id, handle, Duration.ZERO, "test");
        await().atMost(TIMEOUT).until(() -> pod(id) == null);
    }

    /**
     * The old leader stamped the pod while it led and was paused before its delete; a newer leader fenced and adopted
     * the pod. The delete that then arrives, with the resource version the stamp gave, must act on nothing: the
     * adoption changed the pod, so that the precondition fails (and the stale leader's stamp again is refused).
     */
    @Test
    void aStopInterruptedBetweenItsStampAndItsDeleteIsVoidOnceANewerLeaderAdoptedThePod() {
        cluster.api.installFencePolicy();
        KubernetesExecutor old = executor(8);
        InstanceId id = new InstanceId(new RunId("stale-4"), 1, 0);
        Map<String, String> handle = old.launch(spec(id, "exec sleep 600"));
        awaitRunning(id);
        cluster.api.conflictOnNextDeletes(5);
        old.terminate(id, handle, Duration.ZERO, "while leading"); // stamped; its delete is still to come
        String stamped = pod(id).getMetadata().getResourceVersion();

        KubernetesExecutor successor = executor(9);
        successor.adopt(Map.of(id, handle));
        assertThatThrownBy(() -> cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withName(Names.pod(id)).lockResourceVersion(stamped).delete())
                .as("the old leader's delete, as it would send it now").isInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class)
                .satisfies(e -> assertThat(((io.fabric8.kubernetes.client.KubernetesClientException) e).getCode()).isEqualTo(409));
        assertThat(pod(id)).isNotNull();
        assertThat(pod(id).getMetadata().getDeletionTimestamp()).isNull();

        successor.terminate(id, handle, Duration.ZERO, "test");
        await().atMost(TIMEOUT).until(() -> pod(id) == null);
    }

    /** Without the policy, each stamp is preceded by a read of the fence: a retry after a 409 is no unchecked stop. */
    @Test
    void withoutThePolicyEveryStampAttemptReadsTheFenceAgain() {
        KubernetesExecutor old = executor(10);
        InstanceId id = new InstanceId(new RunId("stale-5"), 1, 0);
        Map<String, String> handle = old.launch(spec(id, "exec sleep 600"));
        awaitRunning(id);
        KubernetesExecutor successor = executor(11);
        cluster.api.serveStaleFenceReads(10, 1); // the old leader's first check came just before the successor fenced
        cluster.api.conflictOnNextDeletes(1);
        assertThatThrownBy(() -> old.terminate(id, handle, Duration.ZERO, "stale")).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("fenced");
        assertThat(pod(id).getMetadata().getDeletionTimestamp()).isNull();
        assertThat(writes(id)).hasSize(3).last().asString().endsWith("-> 409");

        successor.terminate(id, handle, Duration.ZERO, "test");
        await().atMost(TIMEOUT).until(() -> pod(id) == null);
    }

    @Test
    void aReconciliationPassNeverDeletesAPodOfANewerEpoch() {
        // No policy installed: the executor itself must leave the newer leader's pod alone.
        KubernetesExecutor old = executor(1);
        RunId run = new RunId("newer-1");
        InstanceId current = new InstanceId(run, 2, 0);
        Map<String, String> handle = old.launch(spec(current, "exec sleep 600"));
        KubernetesExecutor successor = executor(2);
        InstanceId newer = new InstanceId(run, 1, 0); // an attempt older than the stale leader thinks current, made by the new leader
        successor.launch(spec(newer, "exec sleep 600"));
        cluster.api.serveStaleFenceReads(1);

        assertThatThrownBy(() -> old.adopt(Map.of(current, handle))).isInstanceOf(ExecutorException.class).hasMessageContaining("fenced")
                .hasMessageContaining("epoch 2");
        assertThat(pod(newer)).as("not a leftover: a newer leader made it").isNotNull();
        assertThat(pod(newer).getMetadata().getDeletionTimestamp()).isNull();
        assertThat(writes(newer)).containsExactly("CREATE slipstream-jobs/ss-newer-1-1-0 epoch=2");

        awaitRunning(newer);
        awaitRunning(current);
        successor.terminate(newer, successor.find(newer).orElseThrow(), Duration.ZERO, "test");
        successor.terminate(current, handle, Duration.ZERO, "test");
        await().atMost(TIMEOUT).until(() -> pod(newer) == null && pod(current) == null);
    }
}
