package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import io.slipstream.testing.SlurmCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the Slurm executor does that the contract does not say: the nodes are Slurm's, with their GPUs, features and
 * states; each instance is a job pinned to its node with its resources, named after it; Slurm fences the GPUs; bad input
 * fails the launch in Slurm's words; a node Slurm takes down loses its instances; a job Slurm keeps waiting is given up;
 * a job submitted just before a crash is found by its name. Against a real cluster ({@link SlurmCluster}).
 */
class SlurmExecutorTest {
    @RegisterExtension
    static final SlurmCluster CLUSTER = new SlurmCluster();
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final AtomicInteger RUNS = new AtomicInteger();

    @TempDir
    Path dataDir;

    private final List<Executor> executors = new ArrayList<>();
    private final LinkedBlockingQueue<InstanceReport> reports = new LinkedBlockingQueue<>();

    private Executor executor(SlurmSettings settings) {
        Executor executor = new SlurmExecutor(settings, dataDir.resolve("state"), Clock.systemUTC());
        executor.setListener(reports::add);
        executors.add(executor);
        return executor;
    }

    private Executor executor() {
        return executor(ClusterSettings.of(CLUSTER, dataDir.resolve("shared")));
    }

    /** Whatever a test left running is cancelled (the cluster is shared by the class's tests). */
    @AfterEach
    void cancelEverything() throws Exception {
        executors.forEach(Executor::close);
        cancelAll();
        for (int i = 1; i <= SlurmCluster.NODES; i++) {
            CLUSTER.slurm("scontrol", "update", "nodename=" + SlurmCluster.node(i), "state=resume"); // one not down or drained says so, and stays
        }
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        for (int polls = 1; !CLUSTER.slurm("squeue", "--noheader", "--format=%i").isBlank()
                || !CLUSTER.slurm("sinfo", "--noheader", "--Node", "--states=idle", "--format=%N").lines().toList().equals(
                        List.of("node01", "node02", "node03", "node04")); polls++) {
            assertThat(System.nanoTime()).as("the cluster is idle again").isLessThan(deadline);
            if (polls % 20 == 0) {
                cancelAll(); // a job that went from pending to running between the two cancels was missed by both
            }
            TimeUnit.MILLISECONDS.sleep(100); // polling the cluster, with a deadline
        }
    }

    /** Kills the running jobs' batch steps at once and cancels the pending jobs. */
    private static void cancelAll() throws Exception {
        CLUSTER.slurm("scancel", "--partition=" + SlurmCluster.PARTITION, "--signal=KILL", "--batch");
        CLUSTER.slurm("scancel", "--partition=" + SlurmCluster.PARTITION, "--state=PENDING");
    }

    private static InstanceId newInstanceId() {
        return new InstanceId(new RunId("slurm-" + RUNS.incrementAndGet()), 1, 0);
    }

    private static LaunchSpec spec(InstanceId id, String node, String script, Resources resources, List<Integer> gpus) {
        return new LaunchSpec(id, "main-0", node, gpus, List.of("sh", "-c", script), Map.of(), null, null, null, null, resources);
    }

    private <R extends InstanceReport> R awaitReport(InstanceId id, Class<R> type) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        List<InstanceReport> others = new ArrayList<>();
        try {
            while (System.nanoTime() < deadline) {
                InstanceReport report = reports.poll(100, TimeUnit.MILLISECONDS);
                if (report != null && report.id().equals(id) && type.isInstance(report)) {
                    return type.cast(report);
                }
                if (report != null && report.id().equals(id) && !(report instanceof InstanceReport.Running)) {
                    throw new AssertionError("expected " + type.getSimpleName() + " for " + id + " but got " + report);
                }
                if (report != null) {
                    others.add(report);
                }
            }
        } finally {
            reports.addAll(others);
        }
        throw new AssertionError("no " + type.getSimpleName() + " report for " + id + " within " + TIMEOUT);
    }

    private static String stdout(Executor executor, InstanceId id, Map<String, String> handle) {
        return new String(executor.readLog(id, handle, LogStream.STDOUT, 0, 1 << 20).data(), StandardCharsets.UTF_8);
    }

    private void awaitOutput(Executor executor, InstanceId id, Map<String, String> handle, String text) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!stdout(executor, id, handle).contains(text)) {
            assertThat(System.nanoTime()).as("instance " + id + " prints " + text).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(50); // polling the log, with a deadline
        }
    }

    private static Map<String, String> jobFields(String job) throws Exception {
        Map<String, String> fields = new java.util.LinkedHashMap<>();
        for (String word : CLUSTER.slurm("scontrol", "show", "job", "--oneliner", job).trim().split(" ")) {
            int equals = word.indexOf('=');
            if (equals > 0) {
                fields.putIfAbsent(word.substring(0, equals), word.substring(equals + 1));
            }
        }
        return fields;
    }

    @Test
    void theNodesAreThePartitionsWithTheirGpusAndFeaturesAndADrainedNodeTakesNoInstance() throws Exception {
        Executor executor = executor();
        assertThat(executor.nodes()).extracting(NodeInfo::name).containsExactly("node01", "node02", "node03", "node04");
        NodeInfo gpuNode = executor.nodes().get(0);
        assertThat(gpuNode.capacity()).isEqualTo(new Resources(8000, 8000L << 20, 4, "tesla"));
        assertThat(gpuNode.labels()).containsEntry("feature.slurm.slipstream.io/ib", "true")
                .as("its place in Slurm's network tree (topology.conf)").containsEntry("topology.slurm.slipstream.io/switch-level-0", "leaf1")
                .containsEntry("topology.slurm.slipstream.io/switch-level-1", "spine");
        assertThat(executor.nodes().get(3).capacity()).isEqualTo(new Resources(4000, 4000L << 20, 0, null));
        assertThat(executor.endpoint(newInstanceId(), "team-a", "main-0", "node02", 2, Set.of(30_000))).satisfies(endpoint -> {
            assertThat(endpoint.hostname()).isEqualTo("localhost");
            assertThat(endpoint.ip()).isEqualTo("127.0.0.1");
            assertThat(endpoint.ports()).hasSize(2).doesNotContain(30_000).allSatisfy(port -> assertThat(port).isBetween(30_000, 39_999));
        });
        assertThat(executor.containment()).as("proctrack/pgid").isEqualTo(Executor.Containment.PROCESS_TREE);
        assertThat(executor.enforcement().enforced()).as("task/none").isEmpty();

        CLUSTER.slurm("scontrol", "update", "nodename=node03", "state=drain", "reason=disk trouble");
        awaitNodes(executor, List.of("node01", "node02", "node04"));
        CLUSTER.slurm("scontrol", "update", "nodename=node03", "state=resume");
        awaitNodes(executor, List.of("node01", "node02", "node03", "node04"));
    }

    private static void awaitNodes(Executor executor, List<String> names) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!executor.nodes().stream().map(NodeInfo::name).toList().equals(names)) {
            assertThat(System.nanoTime()).as("the nodes become " + names).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100); // polling the executor's refresh, with a deadline
        }
    }

    @Test
    void anInstanceIsAJobPinnedToItsNodeWithItsResourcesNamedAfterIt() throws Exception {
        Executor executor = executor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = executor.launch(spec(id, "node02", "echo \"job=$SLURM_JOB_ID gpus=$CUDA_VISIBLE_DEVICES\"; "
                + "echo \"locale=${LC_ALL-none}\"; sleep 600", new Resources(2000, 512L << 20, 2, "tesla"), List.of(0, 1)));
        awaitOutput(executor, id, handle, "locale=");
        Map<String, String> job = jobFields(handle.get(SlurmHandles.JOB));
        assertThat(job).containsEntry("JobName", "slipstream." + id.runId().value() + ".1.0.0")
                .containsEntry("Partition", SlurmCluster.PARTITION)
                .containsEntry("NodeList", "node02")
                .containsEntry("NumCPUs", "2")
                .containsEntry("Requeue", "0")
                .containsEntry("JobState", "RUNNING");
        assertThat(job.get("TRES")).contains("mem=512M");
        assertThat(job.get("TresPerNode")).contains("gpu:2");
        assertThat(CLUSTER.slurm("squeue", "--noheader", "--jobs=" + handle.get(SlurmHandles.JOB), "--format=%k").trim())
                .isEqualTo("slipstream run " + id.runId().value() + " attempt 1 rank 0 restart 0 (leader epoch 0)");
        assertThat(stdout(executor, id, handle)).startsWith("job=" + handle.get(SlurmHandles.JOB) + " gpus=").containsPattern("gpus=\\d,\\d\n")
                .as("the instance's environment is its own, not what the executor ran sbatch with")
                .contains("locale=" + java.util.Objects.requireNonNullElse(System.getenv("LC_ALL"), "none"));
    }

    @Test
    void slurmFencesTheGpusOfEachInstance() throws Exception {
        Executor executor = executor();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 2; i++) {
            InstanceId id = newInstanceId();
            Map<String, String> handle = executor.launch(spec(id, "node01", "echo \"gpus=$CUDA_VISIBLE_DEVICES\"; sleep 600",
                    new Resources(1000, 100L << 20, 2, "tesla"), List.of(2 * i, 2 * i + 1)));
            awaitOutput(executor, id, handle, "\n");
            String gpus = stdout(executor, id, handle).trim().substring("gpus=".length());
            assertThat(gpus.split(",")).hasSize(2);
            seen.addAll(Arrays.asList(gpus.split(",")));
        }
        assertThat(seen).as("Slurm gave each instance GPUs of its own").hasSize(4);
    }

    @Test
    void badInputFailsTheLaunchSayingWhy() {
        Executor executor = executor();
        assertThatThrownBy(() -> executor.launch(spec(newInstanceId(), "node04", "true", new Resources(1000, 1L << 20, 1, null), List.of(0))))
                .isInstanceOf(ExecutorException.class).hasMessageContaining("node04 has no GPU 0");
        assertThatThrownBy(() -> executor.launch(spec(newInstanceId(), "node99", "true", null, List.of())))
                .isInstanceOf(ExecutorException.class).hasMessageContaining("no node named node99");
        // What only Slurm can tell (its own view of the node) fails the launch in its words, at once.
        SlurmSettings settings = ClusterSettings.of(CLUSTER, dataDir.resolve("shared"));
        SlurmCommands commands = new SlurmCommands(null, CLUSTER.conf(), settings.commandTimeout());
        InstanceId id = newInstanceId();
        Path script = InstanceScript.install(dataDir.resolve("state"));
        List<String> arguments = JobSubmission.arguments(settings, spec(id, "node04", "true", new Resources(1000, 1L << 20, 2, null), List.of(0, 1)),
                JobName.of("slipstream", id, 0), "test", dataDir, dataDir, script, null);
        assertThatThrownBy(() -> commands.run("sbatch", arguments)).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("sbatch failed").hasMessageContaining("Requested node configuration is not available");
    }

    @Test
    void anInstanceOnANodeSlurmTakesDownIsLostWithItsNode() throws Exception {
        Executor executor = executor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = executor.launch(spec(id, "node03", "echo up; sleep 600", new Resources(1000, 100L << 20, 0, null), List.of()));
        awaitOutput(executor, id, handle, "up");
        CLUSTER.slurm("scontrol", "update", "nodename=node03", "state=down", "reason=power supply");
        InstanceReport.Lost lost = awaitReport(id, InstanceReport.Lost.class);
        assertThat(lost.nodeLost()).isTrue();
        assertThat(lost.reason()).contains("node03").contains("NODE_FAIL");
    }

    @Test
    void aJobSlurmKeepsWaitingIsCancelledAndItsInstanceLost() throws Exception {
        Executor executor = executor(ClusterSettings.of(CLUSTER, dataDir.resolve("shared")).withStartTimeout(Duration.ofSeconds(2)));
        InstanceId all = newInstanceId();
        Map<String, String> first = executor.launch(spec(all, "node04", "echo up; sleep 600", new Resources(4000, 100L << 20, 0, null), List.of()));
        awaitOutput(executor, all, first, "up");
        InstanceId waiting = newInstanceId();
        Map<String, String> handle = executor.launch(spec(waiting, "node04", "true", new Resources(1000, 100L << 20, 0, null), List.of()));
        InstanceReport.Lost lost = awaitReport(waiting, InstanceReport.Lost.class);
        assertThat(lost.reason()).contains("waiting to start on node node04").contains("Resources").contains("slurm.startTimeout");
        assertThat(lost.nodeLost()).isFalse();
        CLUSTER.assertJobGone(handle.get(SlurmHandles.JOB));
    }

    /** The server crashed after sbatch, before it recorded the job: the job is found by its name, never submitted twice. */
    @Test
    void aJobSubmittedJustBeforeACrashIsFoundByItsName() throws Exception {
        Executor before = executor();
        InstanceId id = newInstanceId();
        LaunchSpec spec = spec(id, "node01", "sleep 600", null, List.of());
        Map<String, String> handle = before.launch(spec);
        before.close();
        Path dir = dataDir.resolve("shared/instances").resolve(id.runId().value()).resolve("1/0");
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!Files.exists(dir.resolve(InstanceScript.REPORT).resolve(InstanceScript.SLURM_JOB))) {
            assertThat(System.nanoTime()).as("the job runs").isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(50); // polling for its wrapper, with a deadline
        }
        Files.delete(dir.resolve("slurm_handle"));
        Files.delete(dir.resolve(InstanceScript.REPORT).resolve(InstanceScript.SLURM_JOB)); // as if it had not started yet: only Slurm's queue knows it

        Executor after = executor();
        assertThat(after.find(id)).contains(handle);
        assertThat(after.launch(spec)).isEqualTo(handle);
        assertThat(CLUSTER.slurm("squeue", "--noheader", "--name=slipstream." + id.runId().value() + ".1.0.0", "--format=%i").trim())
                .isEqualTo(handle.get(SlurmHandles.JOB));
    }

    /** scancel applies its filters to the ids it is given: a job of another name (or partition) is left alone. */
    @Test
    void aCancelOfAnotherJobNameLeavesTheJobAlone() throws Exception {
        Executor executor = executor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = executor.launch(spec(id, "node02", "echo up; sleep 600", null, List.of()));
        awaitOutput(executor, id, handle, "up");
        String job = handle.get(SlurmHandles.JOB);
        CLUSTER.slurm("scancel", "--signal=KILL", "--batch", "--name=slipstream.other.1.0.0", "--partition=" + SlurmCluster.PARTITION, "--", job);
        CLUSTER.slurm("scancel", "--name=slipstream.other.1.0.0", "--partition=" + SlurmCluster.PARTITION, "--", job);
        CLUSTER.slurm("scancel", "--name=slipstream." + id.runId().value() + ".1.0.0", "--partition=elsewhere", "--", job);
        TimeUnit.SECONDS.sleep(1); // what a cancel would have done by now
        assertThat(CLUSTER.slurm("squeue", "--noheader", "--jobs=" + job, "--format=%T").trim()).isEqualTo("RUNNING");

        executor.terminate(id, handle, Duration.ZERO, "test");
        awaitReport(id, InstanceReport.Exited.class);
        CLUSTER.assertJobGone(job);
    }

    /** A directory that records a launch on another node (the workload can write it) is not taken for the launch asked. */
    @Test
    void aRecordedLaunchOnAnotherNodeIsRefused() throws Exception {
        Executor executor = executor();
        InstanceId id = newInstanceId();
        executor.launch(spec(id, "node01", "sleep 600", null, List.of()));
        assertThatThrownBy(() -> executor.launch(spec(id, "node02", "sleep 600", null, List.of()))).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("records a launch on node \"node01\"");
    }
}
