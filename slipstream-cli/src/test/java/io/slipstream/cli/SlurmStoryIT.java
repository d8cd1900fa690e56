package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
import io.slipstream.testing.SlurmCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The demo's story ({@code slipstream demo}) on the Slurm executor, end to end: a real Slurm cluster of four emulated
 * GPU nodes ({@link SlurmCluster}), the packaged server with {@code executor: slurm} on it, the real CLI, and the demo's
 * own documents (examples/quotas, examples/fault-tolerance) sized to the cluster. Team B trains on team A's idle GPUs,
 * one rank per node, each rank a Slurm job. The server is killed (-9) in the middle of the run and started again: it
 * adopts the jobs (the same Slurm jobs run on, none is submitted twice, the attempt stays 1). Team A then takes its GPUs
 * back: B's ranks get the notice, save a checkpoint and end; B resumes as attempt 2 once A is done and ends with weights
 * bit-identical to those of a run never interrupted.
 *
 * <p>B's ranks are held (SIGSTOP) from their first checkpoint until the reclaim's notice is out, so that the test, not
 * the machine's speed, decides where in the run the restart and the reclaim come.
 */
class SlurmStoryIT {
    /** Registered first, so stopped last: the check that no process is left runs while the cluster still stands. */
    @RegisterExtension
    @Order(1)
    static final SlurmCluster CLUSTER = new SlurmCluster(SlurmCluster.NODES);

    @RegisterExtension
    @Order(2)
    static final NoProcessLeftBehind NOTHING_LEFT = new NoProcessLeftBehind();

    private static final Duration PATIENCE = Duration.ofMinutes(3);
    private static final int RANKS = SlurmCluster.NODES;
    /** The training, shorter and narrower than the demo's (600 steps, 1024 wide): the story needs a checkpoint, not a long run. */
    private static final int STEPS = 200;
    private static final List<String> TRAINING = List.of("STEPS=" + STEPS, "CHECKPOINT_EVERY=20", "HIDDEN=256", "BENCHMARK_MB=0");
    /** Each rank and each of team A's instances takes a whole node's GPUs and little else. */
    private static final String WHOLE_NODE = "{cpu: 1, memory: 1Gi, gpu: " + SlurmCluster.GPUS_PER_NODE + "}";

    @TempDir
    static Path work;

    private static Server server;
    private static final List<Long> held = new ArrayList<>();

    @AfterAll
    static void stopServer() throws Exception {
        signal("CONT", held); // a failed test must not leave ranks stopped that a cancel then waits on
        if (server != null) {
            server.close(); // cancels what is left and waits for it
        }
    }

    @Test
    void teamBTrainsOnTeamAsIdleGpusThroughAServerRestartAndAReclaimAndEndsBitIdentical() throws Exception {
        long began = System.nanoTime();
        Path config = Files.writeString(work.resolve("slurm.yaml"), """
                executor: slurm
                slurm:
                  sharedDirectory: %s
                  slurmConf: %s
                  partition: %s
                  trustedTenants: true    # one user, one machine
                  allowRootJobs: true     # tests run as root
                  pollInterval: 200ms
                  nodeRefresh: 1s
                  ports: 29000-29999      # below the ephemeral ports, and not the executor's tests' (30000-)
                """.formatted(work.resolve("shared"), CLUSTER.conf(), SlurmCluster.PARTITION));
        Path data = work.resolve("data");
        Map<String, String> env = Map.of("PATH", instanceTools() + ":" + System.getenv("PATH"));
        server = SlipstreamProcess.startServer(data, env, "--config", config.toString());

        // Two teams share the cluster: A is guaranteed all of it, B nothing but may borrow what A leaves idle.
        String teams = Files.readString(example("quotas/teams.yaml"));
        String all = "min: {cpu: " + SlurmCluster.NODES * SlurmCluster.GPU_NODE_CPUS + ", memory: "
                + SlurmCluster.NODES * SlurmCluster.GPU_NODE_MEMORY_MIB + "Mi, gpu: " + SlurmCluster.NODES * SlurmCluster.GPUS_PER_NODE + "}";
        String demoCluster = "min: {cpu: 128, memory: 1Ti, gpu: 32}";
        assertThat(teams.split(java.util.regex.Pattern.quote(demoCluster), -1)).as("org's and team A's guarantees in teams.yaml").hasSize(3);
        ok(cli("apply", "-f", Files.writeString(work.resolve("teams.yaml"), teams.replace(demoCluster, all)).toString()));

        // B trains on A's idle GPUs, one rank a node.
        String training = submit("fault-tolerance/training-on-idle.yaml", training());
        JsonNode running = server.awaitRun(training, PATIENCE, run -> state(run, "RUNNING"));
        assertThat(running.get("realTimeResources").asString()).isEqualTo("NotInQuota");
        Map<String, String> jobs = jobsOf(training, 1);
        assertThat(jobs).hasSize(RANKS);
        // A launched instance's job may wait a moment in Slurm's queue (the server counts it started once submitted).
        List<String> started = await().atMost(PATIENCE).until(() -> squeue("%j %N %b %T").lines().filter(line -> line.startsWith(
                "slipstream." + training + ".1.")).toList(), lines -> lines.stream().allMatch(line -> line.endsWith(" RUNNING")));
        assertThat(started).as("each rank a job, on a node of its own, with the node's GPUs").hasSize(RANKS)
                .allMatch(line -> line.endsWith(" gres:gpu:" + SlurmCluster.GPUS_PER_NODE + " RUNNING"))
                .extracting(line -> line.split(" ")[1]).doesNotHaveDuplicates();
        List<Long> ranks = await().atMost(PATIENCE).until(() -> trainingProcesses(jobs.values()), pids -> pids.size() == RANKS);
        // Held from rank 0's first checkpoint, as soon as its progress file says so (the server reads it every 2 s).
        Path progress = work.resolve("shared/instances/" + training + "/1/0/report/progress.json");
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(10)).until(() -> read(progress).contains("\"checkpointStep\""));
        hold(ranks);
        assertThat(Json.mapper().readTree(read(progress)).get("step").asLong()).as("held in the middle of the run").isLessThan(STEPS);

        // The server dies in the middle of the run and starts again: it adopts the jobs, and submits none again.
        server.kill9();
        server = SlipstreamProcess.startServer(data, env, "--config", config.toString());
        await().atMost(PATIENCE).until(() -> Files.readString(server.log()).contains("adopting " + RANKS + " instance(s)"));
        JsonNode adopted = server.awaitRun(training, PATIENCE, run -> state(run, "RUNNING"));
        assertThat(adopted.get("attempt").asInt()).isEqualTo(1);
        assertThat(jobsOf(training, 1)).as("the same Slurm jobs, one for each instance").isEqualTo(jobs);

        // A needs its guarantee: B's ranks get the notice, save a checkpoint, end, and wait for the GPUs.
        String owner = submit("quotas/owner.yaml", List.of("nodeGroups.worker.env.SECONDS_TO_RUN=1", "nodeGroups.worker.resources=" + WHOLE_NODE));
        // Released once the stop's SIGTERM waits for every rank: they get it at once, as a rank never held would.
        await().atMost(PATIENCE).until(() -> ranks.stream().allMatch(SlurmStoryIT::termPending));
        assertThat(work.resolve("shared/instances/" + training + "/1/0/preemption_notice.json")).as("the notice").exists();
        signal("CONT", held);
        held.clear();
        server.awaitRun(training, PATIENCE, run -> run.get("attempt").asInt() == 2);
        assertThat(server.api("GET", "/api/v1/runs/" + training + "/events", null).toString()).contains("Preempted: Reclaimed");
        JsonNode ownerDone = server.awaitRun(owner, PATIENCE, run -> state(run, "SUCCEEDED", "FAILED", "CANCELLED", "TIMED_OUT"));
        assertThat(ownerDone.get("state").asString()).isEqualTo("SUCCEEDED");
        assertThat(logs(training, 1)).containsPattern(
                "saved the checkpoint of step \\d+ on the stop notice|stops after step \\d+, whose checkpoint is already saved");

        // B resumes from its checkpoint, and ends with the weights of the same training never interrupted.
        JsonNode done = awaitEnd(training);
        assertThat(done.get("attempt").asInt()).isEqualTo(2);
        assertThat(done.get("restarts").get("preemptions").asInt()).isEqualTo(1);
        assertThat(done.get("restarts").get("failures").asInt()).isZero();
        String resumed = logs(training, 2);
        assertThat(resumed).containsPattern("rank 0 resumes from the checkpoint of step \\d+");
        for (int rank = 0; rank < RANKS; rank++) {
            assertThat(Files.readString(work.resolve("shared/instances/" + training + "/1/" + rank + "/report/slurm_job")).trim())
                    .as("the one job that ran attempt 1's rank %d", rank).isEqualTo(jobs.get(jobName(training, 1, rank)));
        }
        String reference = submit("fault-tolerance/training-on-idle.yaml", training());
        JsonNode referenceDone = awaitEnd(reference);
        assertThat(referenceDone.get("attempt").asInt()).isEqualTo(1);
        assertThat(SlipstreamProcess.agreedDigest(resumed, RANKS)).as("bit for bit")
                .isEqualTo(SlipstreamProcess.agreedDigest(logs(reference, 1), RANKS));

        // Slurm numbers jobs one after another, and each job's wrapper writes its id into its instance's directory: B's
        // two attempts, A's run and the reference launched 16 instances, and 16 jobs in a row ran them. None was submitted
        // twice, around the restart or after (a second job of one instance would leave a gap, its id or the first's lost).
        List<Long> ran;
        try (var files = Files.find(work.resolve("shared/instances"), 5, (file, attributes) -> file.endsWith("slurm_job"))) {
            ran = files.map(file -> Long.parseLong(read(file).trim())).sorted().toList();
        }
        assertThat(ran).hasSize(4 * RANKS).doesNotHaveDuplicates();
        assertThat(ran.get(ran.size() - 1) - ran.get(0) + 1).as("job ids %s", ran).isEqualTo(4L * RANKS);
        // Nothing left pending, running or completing (Slurm remembers ended jobs for MinJobAge; they are not left).
        await().atMost(PATIENCE).until(() -> CLUSTER.slurm("squeue", "--noheader", "--format=%i %j %T").isBlank());
        System.out.printf("figure: the story on Slurm took %d s%n", Duration.ofNanos(System.nanoTime() - began).toSeconds());
    }

    /** The overrides of the training: the story's steps, every rank on a whole node's GPUs. */
    private static List<String> training() {
        List<String> sets = new ArrayList<>();
        for (String group : List.of("coordinator", "worker")) {
            TRAINING.forEach(variable -> sets.add("nodeGroups." + group + ".env." + variable));
            sets.add("nodeGroups." + group + ".resources=" + WHOLE_NODE);
        }
        return sets;
    }

    /**
     * A directory with the {@code slipstream} command (the packaged jar) that instances find on their PATH: the Slurm
     * executor leaves that to the nodes' admin (docs/slurm.md), and the training example runs {@code slipstream example
     * train}.
     */
    private static Path instanceTools() throws Exception {
        Path bin = Files.createDirectories(work.resolve("bin"));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path command = Files.writeString(bin.resolve("slipstream"), "#!/bin/sh\nexec '" + java + "' -XX:+UseSerialGC -jar '"
                + SlipstreamProcess.JAR.toAbsolutePath() + "' \"$@\"\n");
        Files.setPosixFilePermissions(command, PosixFilePermissions.fromString("rwxr-xr-x"));
        return bin;
    }

    private static Path example(String name) {
        return Path.of(System.getProperty("slipstream.repo", "..")).resolve("examples").resolve(name);
    }

    private static Result cli(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", server.dataDir().toString()));
        return SlipstreamProcess.cli(work, all.toArray(String[]::new));
    }

    private static Result ok(Result result) {
        assertThat(result.exit()).as(result.out() + result.err()).isZero();
        return result;
    }

    /** Submits one of the demo's examples with these overrides; its run's id. */
    private static String submit(String example, List<String> sets) throws Exception {
        List<String> args = new ArrayList<>(List.of("submit", "-f", example(example).toString()));
        sets.forEach(set -> args.addAll(List.of("--set", set)));
        return ok(cli(args.toArray(String[]::new))).lastLine();
    }

    private static String logs(String run, int attempt) throws Exception {
        return ok(cli("logs", run, "--attempt", Integer.toString(attempt))).out();
    }

    private static JsonNode awaitEnd(String run) throws Exception {
        JsonNode done = server.awaitRun(run, PATIENCE, r -> state(r, "SUCCEEDED", "FAILED", "CANCELLED", "TIMED_OUT"));
        assertThat(done.get("state").asString()).as(done.toString()).isEqualTo("SUCCEEDED");
        return done;
    }

    private static boolean state(JsonNode run, String... states) {
        return List.of(states).contains(run.get("state").asString());
    }

    private static String jobName(String run, int attempt, int rank) {
        return "slipstream." + run + "." + attempt + "." + rank + ".0";
    }

    /** The Slurm jobs of a run's attempt, by name: each name once (two jobs of one name fail it). */
    private static Map<String, String> jobsOf(String run, int attempt) throws Exception {
        Map<String, String> jobs = new TreeMap<>();
        squeue("%j %i").lines().map(line -> line.split(" ")).filter(job -> job[0].startsWith("slipstream." + run + "." + attempt + "."))
                .forEach(job -> assertThat(jobs.put(job[0], job[1])).as("a second job named %s", job[0]).isNull());
        return jobs;
    }

    /** Every job Slurm knows of (ended ones too, for MinJobAge), one a line. */
    private static String squeue(String format) throws Exception {
        return CLUSTER.slurm("squeue", "--noheader", "--states=all", "--format=" + format).strip();
    }

    /** The training processes (one a rank) of these jobs. */
    private static List<Long> trainingProcesses(java.util.Collection<String> jobs) {
        return jobs.stream().flatMap(job -> CLUSTER.processesOf(job).stream())
                .filter(pid -> ProcessHandle.of(pid).flatMap(p -> p.info().commandLine()).map(line -> line.contains("example train")).orElse(false))
                .toList();
    }

    /** Stops these processes (SIGSTOP): their jobs stay in Slurm, RUNNING, and their ranks keep their place in the run. */
    private static void hold(List<Long> pids) throws Exception {
        held.addAll(pids);
        signal("STOP", pids);
    }

    /** Whether SIGTERM waits for the process (it is stopped): /proc's masks of pending signals, SIGTERM being bit 15. */
    private static boolean termPending(long pid) {
        return read(Path.of("/proc", Long.toString(pid), "status")).lines().filter(line -> line.startsWith("ShdPnd:") || line.startsWith("SigPnd:"))
                .anyMatch(line -> (Long.parseUnsignedLong(line.substring(7).trim(), 16) & (1L << 14)) != 0);
    }

    /** The file's text; empty while there is none. */
    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.nio.file.NoSuchFileException e) {
            return "";
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void signal(String signal, List<Long> pids) throws Exception {
        if (pids.isEmpty()) {
            return;
        }
        List<String> kill = new ArrayList<>(List.of("kill", "-" + signal));
        pids.forEach(pid -> kill.add(Long.toString(pid)));
        Process process = new ProcessBuilder(kill).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor()).as("kill -%s: %s", signal, output).isZero();
    }
}
