package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.BaseExecutorContractTest;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.uid.Isolation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalProcessExecutorTest extends BaseExecutorContractTest {
    @TempDir
    Path dataDir;

    @Override
    protected Executor createExecutor() {
        List<NodeInfo> nodes = List.of(
                new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of()),
                new NodeInfo("node-2", new Resources(32000, 256L << 30, 2, "sim-gpu"), List.of("GPU-aaa", "GPU-bbb"), Map.of()));
        return new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV, Isolation.off(), null,
                LocalProcessExecutor.DEFAULT_LOG_LIMIT_BYTES, 0, ImageSettings.DEFAULTS, launcher(), Clock.systemUTC());
    }

    /** What starts the instances: the launcher binary where the build made one (ShellLaunchedExecutorTest: the shell). */
    protected SupervisorProgram.Mode launcher() {
        return BuiltProgram.mode();
    }

    @Override
    protected String nodeName() {
        return "node-1";
    }

    @Override
    protected void assertNothingRuns(Map<String, String> handle) {
        assertThat(ProcFs.treeOf(Long.parseLong(handle.get("pid")))).isEmpty();
    }

    @Override
    protected String gate(InstanceId id) {
        Path fifo = dataDir.resolve("gate-" + id.runId());
        try {
            Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
            assertThat(mkfifo.waitFor()).isZero();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        return fifo.toString();
    }

    @Override
    protected void openGate(InstanceId id) throws Exception {
        Files.writeString(dataDir.resolve("gate-" + id.runId()), "go\n");
    }

    /**
     * runType Async: the startup probe of a launch that ended goes no further once the rank is restarted in place. Its
     * next try (due after the restart) must not probe the new process, with the old launch's failures counted and
     * without the new launch's initial delay, and report it as failed (or ready) for the new one.
     */
    @Test
    void theStartupProbeOfALaunchThatEndedDoesNotProbeItsRestartInPlace() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        io.slipstream.api.run.ClusterMetadata metadata = metadata(id, "probed", 1);
        // Period 3 s, 2 failures fail it: its first try fails at once; its second is due 3 s later.
        LaunchSpec first = new LaunchSpec(id, "main-0", nodeName(), List.of(), List.of("sh", "-c", "sleep 1; exit 1"), Map.of(), null, null,
                metadata, new io.slipstream.api.spec.StartupProbe(List.of("test", "-f", "started"), 3, 2, 0));
        launch(executor, first);
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isEqualTo(1);
        // The restart is ready 5 s in; its own probe waits 8 s before its first try.
        LaunchSpec second = new LaunchSpec(id, "main-0", nodeName(), List.of(), List.of("sh", "-c", "sleep 5; touch started; exec sleep 600"),
                Map.of(), null, null, metadata, new io.slipstream.api.spec.StartupProbe(List.of("test", "-f", "started"), 3, 2, 8)).withRestart(1);
        launch(executor, second);
        assertThat(awaitReport(id, InstanceReport.Ready.class).id()).as("its own probe's verdict, not the ended launch's").isEqualTo(id);
    }

    /** Who launched and who stopped an instance, after takeovers: the epoch of each is recorded with it. */
    @Test
    void theLeaderEpochOfALaunchAndAStopIsRecorded() throws Exception {
        Executor executor = newExecutor();
        long epoch = fenceAtTheNextEpoch(executor);
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, nodeName(), "exec sleep 600"));
        assertThat(handle).containsEntry("epoch", Long.toString(epoch));
        Path dir = dataDir.resolve("instances").resolve(handle.get("dir"));
        executor.terminate(id, handle, Duration.ZERO, "test");
        awaitReport(id, InstanceReport.Exited.class);
        assertThat(Files.readString(dir.resolve("launch_epoch")).trim()).isEqualTo(Long.toString(epoch));
        assertThat(Files.readString(dir.resolve("stop_epoch")).trim()).isEqualTo(Long.toString(epoch));
    }

    @Test
    void exposesTheNodesGpuIdsAndASandboxedWorkingDirectory() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        LaunchSpec spec = new LaunchSpec(id, "main-0", "node-2", List.of(1), List.of("sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES\"; pwd; echo \"$TMPDIR\""),
                Map.of(), "out/logs", null);
        Map<String, String> handle = launch(executor, spec);
        awaitReport(id, InstanceReport.Exited.class);
        List<String> lines = readAll(executor, id, handle, LogStream.STDOUT).lines().toList();
        assertThat(lines.get(0)).isEqualTo("GPU-bbb");
        Path instanceDir = dataDir.resolve("instances").resolve(handle.get("dir"));
        assertThat(Path.of(lines.get(1))).isEqualTo(instanceDir.resolve("work/out/logs").toRealPath());
        assertThat(lines.get(2)).isEqualTo(instanceDir.resolve("tmp").toString());
        assertThat(instanceDir).startsWith(dataDir.resolve("instances"));
    }

    @Test
    void aSymlinkCannotLeadTheWorkingDirectoryOutOfTheSandbox() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        // What a launch that crashed before starting its supervisor leaves, with a link planted in the sandbox.
        Path dir = ((LocalProcessExecutor) executor).directoryOf(id).path();
        Path sandbox = Files.createDirectories(dir.resolve("work"));
        Files.createDirectories(dir.resolve("tmp"));
        Files.createDirectories(dir.resolve("report"));
        Files.createSymbolicLink(sandbox.resolve("escape"), Path.of("/tmp"));
        LaunchSpec spec = new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("true"), Map.of(), "escape", null);
        assertThatThrownBy(() -> executor.launch(spec))
                .hasMessageContaining("outside the instance's directory");
    }

    /**
     * A server killed (kill -9) while a launch made the instance's directory left part of it: the next launch of the
     * instance (the restarted server's) makes the rest and starts it, rather than fail it (its run would end FAILED).
     * Each case is what was made when the kill came.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"", "work", "work tmp", "work tmp report", "work tmp report work/out"})
    void aLaunchKilledWhileItMadeTheInstanceDirectoryIsCompletedByTheNextLaunch(String madeBeforeTheKill) throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Path dir = ((LocalProcessExecutor) executor).directoryOf(id).path();
        Files.createDirectories(dir);
        for (String made : madeBeforeTheKill.split(" ")) {
            if (!made.isEmpty()) {
                Files.createDirectory(dir.resolve(made));
            }
        }
        LaunchSpec spec = new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("sh", "-c", "pwd; ls \"$TMPDIR\" >/dev/null && echo tmp"),
                Map.of(), "out/logs", null);
        Map<String, String> handle = launch(executor, spec);
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(readAll(executor, id, handle, LogStream.STDOUT).lines().toList())
                .containsExactly(dir.resolve("work/out/logs").toRealPath().toString(), "tmp");
        assertThat(dir.resolve("report")).isDirectory();
    }

    @Test
    void aLinkLeftInASandboxIsNeverFollowedToMakeTheWorkingDirectory() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Path dir = ((LocalProcessExecutor) executor).directoryOf(id).path();
        Path sandbox = Files.createDirectories(dir.resolve("work"));
        Files.createDirectories(dir.resolve("tmp"));
        Files.createDirectories(dir.resolve("report"));
        Files.createSymbolicLink(sandbox.resolve("escape"), dataDir);
        LaunchSpec spec = new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("true"), Map.of(), "escape/made", null);
        assertThatThrownBy(() -> executor.launch(spec)).hasMessageContaining("outside the instance's directory");
        assertThat(dataDir.resolve("made")).doesNotExist();
    }

    @Test
    void anInstanceFromBeforeARebootIsLostAndItsOldPidIsNeverSignalled() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, "node-1", "echo up; sleep 600"));
        awaitOutput(executor, id, handle, "up");
        Map<String, String> beforeReboot = new java.util.HashMap<>(handle);
        beforeReboot.put("bootId", "an-earlier-boot");

        Executor after = newExecutor();
        after.adopt(Map.of(id, beforeReboot));
        assertThat(awaitReport(id, InstanceReport.Lost.class).reason()).contains("restarted");
        after.terminate(id, beforeReboot, java.time.Duration.ZERO, "test");
        // The pid is alive (in this test it is still ours): a stale handle must not have touched it.
        assertThat(ProcFs.treeOf(Long.parseLong(handle.get("pid")))).isNotEmpty();
    }

    @Test
    void newHandlesNameTheirDirectoryRelativeToTheRoot() {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, "node-1", "true"));
        assertThat(handle.get("dir")).isEqualTo(id.runId().value() + "/1/0");
    }

    /**
     * A rank restarted in place, adopted by a restarted server: its handle (restart 1) finds the new launch, never the
     * one set aside, and the new launch's own end is reported; launching restart 1 again adopts it as well.
     */
    @Test
    void aRankRestartedInPlaceIsAdoptedAfterARestartOfTheServerAsItsNewLaunch() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        launch(executor, spec(id, "node-1", "exit 137"));
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isEqualTo(137);
        Map<String, String> second = launch(executor, spec(id, "node-1", "read line < " + gate(id) + "; exit 3").withRestart(1));
        executor.close();

        Executor after = newExecutor();
        after.adopt(Map.of(id, second));
        InstanceReport.Running running = awaitReport(id, InstanceReport.Running.class);
        assertThat(Executor.restartOf(running.handle())).isEqualTo(1);
        assertThat(after.launch(spec(id, "node-1", "exit 9").withRestart(1))).isEqualTo(second);
        assertThat(Files.isDirectory(dataDir.resolve("instances").resolve(second.get("dir") + ".restart-0"))).isTrue();
        openGate(id);
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isEqualTo(3);
    }

    /** Handles written before directories were relative: absolute, under the root or under where the root used to be. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void anOldAbsoluteHandleIsAdoptedAndRecordedRelative(boolean fromAMovedDataDirectory) throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, "node-1", "read line < " + gate(id) + "; exit 3"));
        Path oldRoot = fromAMovedDataDirectory ? Path.of("/srv/old-data/instances") : dataDir.resolve("instances");
        Map<String, String> old = new java.util.HashMap<>(handle);
        old.put("dir", oldRoot.resolve(handle.get("dir")).toString());
        executor.close();

        Executor after = newExecutor();
        after.adopt(Map.of(id, old));
        InstanceReport.Running running = awaitReport(id, InstanceReport.Running.class);
        assertThat(running.handle()).isEqualTo(handle); // the store keeps the relative directory from now on
        openGate(id);
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isEqualTo(3);
    }

    @Test
    void anInstanceWhoseDirectoryIsNowhereIsLostWithAReasonAndWhatRunsOfItIsKilled() throws Exception {
        Executor executor = newExecutor();
        InstanceId launched = newInstanceId();
        Map<String, String> handle = launch(executor, spec(launched, "node-1", "echo up; sleep 600"));
        awaitOutput(executor, launched, handle, "up");
        executor.close();
        // Its directory is neither where the handle says nor where its id puts it (that id has none).
        InstanceId id = newInstanceId();
        Map<String, String> stale = new java.util.HashMap<>(handle);
        stale.put("dir", "/srv/old-data/instances/" + id.runId().value() + "/1/0");

        newExecutor().adopt(Map.of(id, stale));
        assertThat(awaitReport(id, InstanceReport.Lost.class).reason())
                .contains("/srv/old-data/instances/" + id.runId().value() + "/1/0")
                .contains("moved or restored without its instances");
        // Known by pid, start time and boot, its processes were its own: they do not run on beside a replacement.
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> ProcFs.treeOf(Long.parseLong(handle.get("pid"))).isEmpty());
    }

    @Test
    void aStoppedInstanceFindsTheNoticeWithTheReasonAndTheDeadline() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, "node-1",
                "trap 'cat \"$SLIPSTREAM_PREEMPTION_NOTICE_FILE\"; exit 0' TERM; echo started; while true; do sleep 0.1; done"));
        awaitOutput(executor, id, handle, "started");
        executor.terminate(id, handle, java.time.Duration.ofSeconds(30), "Reclaimed by team-a");
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        assertThat(exited.exitCode()).isZero();
        assertThat(exited.terminated()).isTrue();
        String notice = readAll(executor, id, handle, LogStream.STDOUT).lines().skip(1).findFirst().orElseThrow();
        var json = io.slipstream.api.codec.Json.mapper().readTree(notice);
        assertThat(json.get("reason").asString()).isEqualTo("Reclaimed by team-a");
        assertThat(java.time.Instant.parse(json.get("deadline").asString())).isAfter(java.time.Instant.now().plusSeconds(20));
    }

    @Test
    void parsesNvidiaSmiOutput() {
        List<MachineNode.Gpu> gpus = MachineNode.parseNvidiaSmi("0, GPU-1b2c, NVIDIA H200\n1, GPU-3d4e, NVIDIA H200\n");
        assertThat(gpus).extracting(MachineNode.Gpu::uuid).containsExactly("GPU-1b2c", "GPU-3d4e");
        assertThat(MachineNode.modelName("NVIDIA H200")).isEqualTo("nvidia-h200");
        assertThat(MachineNode.parseNvidiaSmi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver")).isEmpty();
    }

    @Test
    void findsEachGpusDeviceNodeByItsBusNotItsIndex() {
        List<MachineNode.Gpu> gpus = MachineNode.parseNvidiaSmi("0, GPU-1b2c, NVIDIA H200, 00000000:17:00.0\n1, GPU-3d4e, NVIDIA H200, 00000000:2A:00.0\n");
        Map<String, String> information = Map.of("00000000:17:00.0", "Model:           NVIDIA H200\nDevice Minor:    3\n",
                "00000000:2A:00.0", "Device Minor: 0\n");
        assertThat(MachineNode.deviceNodes(gpus, information::get)).containsExactly("/dev/nvidia3", "/dev/nvidia0");
        assertThat(MachineNode.deviceNodes(gpus, bus -> null)).as("nothing fenced rather than the wrong device").isEmpty();
        assertThat(MachineNode.deviceNodes(MachineNode.parseNvidiaSmi("0, GPU-1b2c, NVIDIA H200\n"), information::get)).isEmpty();
    }

    @Test
    void storageNeverFollowsALinkAJobLeftBehind() throws Exception {
        Executor executor = newExecutor();
        // A job of team-a made its storage directory a link to somewhere else on the machine.
        Path jobDir = Files.createDirectories(dataDir.resolve("storage/team-a/jobs/train"));
        Files.createSymbolicLink(jobDir.resolve("out"), dataDir.resolve("elsewhere"));
        InstanceId id = newInstanceId();
        var spec = new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("true"), Map.of(), null, null,
                metadata(id, "train", 1), null);
        assertThatThrownBy(() -> executor.launch(spec))
                .isInstanceOf(io.slipstream.executor.ExecutorException.class)
                .hasMessageContaining("team-a/jobs/train/out is a symbolic link");
    }
}
