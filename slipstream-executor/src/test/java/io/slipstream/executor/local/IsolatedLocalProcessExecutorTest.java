package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.BaseExecutorContractTest;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.files.SafeFiles;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract again with every run under a uid of its own (needs root, as in CI; skipped otherwise), plus what the
 * isolation is for: an instance cannot read the server's files, nor touch another run's processes.
 */
class IsolatedLocalProcessExecutorTest extends BaseExecutorContractTest {
    @TempDir
    Path dataDir;

    private Isolation isolation;

    @BeforeEach
    void needsRoot() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "switching users needs root");
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        // Claimed like a server claims its uids, so that no other test or server on this machine shares them.
        isolation = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir, null);
    }

    @Override
    protected Executor createExecutor() {
        List<NodeInfo> nodes = List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        return new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV, isolation, null,
                LocalProcessExecutor.DEFAULT_LOG_LIMIT_BYTES, 0, ImageSettings.DEFAULTS, otherLauncher ? other(launcher()) : launcher(), Clock.systemUTC());
    }

    /** Whether executors made from now on start instances through the other launcher than {@link #launcher()}. */
    private boolean otherLauncher;

    private static SupervisorProgram.Mode other(SupervisorProgram.Mode mode) {
        return mode == SupervisorProgram.Mode.shell ? SupervisorProgram.Mode.binary : SupervisorProgram.Mode.shell;
    }

    /**
     * A server restarted on the other launcher (instances.launcher changed, or a build with or without the binary)
     * adopts what the first one started: the binary's supervisor makes the namespace's init itself, the shell chain's
     * an unshare that waits for it, and the pid file says which. The adopter stops the whole tree and reports the end.
     */
    @Test
    void anInstanceStartedThroughOneLauncherIsStoppedByAServerOnTheOther() throws Exception {
        assumeTrue(SupervisorProgram.binaryInBuild(), "this build has no launcher binary");
        Executor first = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(first, spec(id, "node-1", "sleep 600 & sleep 600 & echo started; wait"));
        awaitOutput(first, id, handle, "started");
        assertThat(handle.get("pidNamespace")).isEqualTo(launcher() == SupervisorProgram.Mode.shell ? "true" : "init");
        first.close(); // the server stops; its instances run on

        otherLauncher = true;
        Executor restarted = newExecutor();
        restarted.adopt(Map.of(id, handle));
        restarted.terminate(id, handle, java.time.Duration.ofSeconds(10), "test");
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        assertThat(exited.terminated()).isTrue();
        assertThat(exited.exitCode()).isEqualTo(143);
        assertNothingRuns(handle);
    }

    /** What starts the instances: the launcher binary where the build made one (ShellLaunchedIsolatedExecutorTest: the shell). */
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
        try {
            Path gates = Files.createDirectories(dataDir.resolve("gates"));
            Files.setPosixFilePermissions(gates, PosixFilePermissions.fromString("rwxrwxrwx"));
            Path fifo = gates.resolve(id.runId().value());
            assertThat(new ProcessBuilder("mkfifo", "-m", "666", fifo.toString()).start().waitFor()).isZero();
            return fifo.toString();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Override
    protected void openGate(InstanceId id) throws Exception {
        Files.writeString(dataDir.resolve("gates").resolve(id.runId().value()), "go\n");
    }

    /**
     * A replica that lost its lease still watches the instances it launched. When one ends, it must not sweep the
     * run's uid: the new leader adopted that instance and launched another of the run, which runs under the same uid
     * (the old replica, knowing only its own, took the ended one for the run's last and killed the other).
     */
    @Test
    void aFencedExecutorKillsNothingOfTheRunsUidThatTheNewLeaderLaunched() throws Exception {
        Executor old = newExecutor();
        fenceAtNewestEpoch(old);
        InstanceId first = newInstanceId();
        InstanceId second = new InstanceId(first.runId(), first.attempt(), 1);
        Map<String, String> firstHandle = launch(old, spec(first, "node-1", "echo up; read line < \"$GATE\"; exit 0",
                Map.of("GATE", gate(first)), List.of()));
        awaitOutput(old, first, firstHandle, "up");

        Executor successor = newExecutor();
        fenceAtNewestEpoch(successor); // the old leader is fenced; it is still up and watching
        successor.adopt(Map.of(first, firstHandle));
        Map<String, String> secondHandle = launch(successor, spec(second, "node-1", "echo up; sleep 600"));
        awaitOutput(successor, second, secondHandle, "up");

        openGate(first);
        awaitReport(first, InstanceReport.Exited.class); // from both executors, each after its sweep
        awaitReport(first, InstanceReport.Exited.class);
        assertThat(ProcFs.treeOf(Long.parseLong(secondHandle.get("pid")))).as("the new leader's instance of the run still runs").isNotEmpty();
    }

    @Test
    void eachRunHasItsOwnUidAndCannotReachTheServersFilesOrOtherRuns() throws Exception {
        Path secret = Files.writeString(dataDir.resolve("admin.token"), "ss_secret\n");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        Executor executor = newExecutor();

        InstanceId victim = newInstanceId();
        Map<String, String> victimHandle = launch(executor, spec(victim, "node-1", "echo \"uid=$(id -u)\"; sleep 600"));
        awaitOutput(executor, victim, victimHandle, "uid=");

        InstanceId intruder = newInstanceId();
        Map<String, String> handle = launch(executor, spec(intruder, "node-1",
                "echo \"uid=$(id -u)\"; cat " + secret + " || echo cannot-read; kill -0 " + victimHandle.get("pid") + " || echo cannot-signal; "
                        + "ls " + dataDir.resolve("instances").resolve(victimHandle.get("dir")) + " || echo cannot-list"));
        awaitReport(intruder, InstanceReport.Exited.class);
        String out = readAll(executor, intruder, handle, LogStream.STDOUT);
        String victimUid = readAll(executor, victim, victimHandle, LogStream.STDOUT).lines().findFirst().orElseThrow();
        assertThat(out).contains("cannot-read", "cannot-signal", "cannot-list").doesNotContain("ss_secret");
        assertThat(out.lines().findFirst().orElseThrow()).isNotEqualTo(victimUid);
        for (String uid : List.of(out.lines().findFirst().orElseThrow(), victimUid)) {
            assertThat(Integer.parseInt(uid.substring("uid=".length()))).isBetween(isolation.firstUid(), isolation.firstUid() + isolation.uidCount() - 1);
        }
    }

    @Test
    void everyAttemptOfARunKeepsItsUid() throws Exception {
        Executor executor = newExecutor();
        InstanceId first = newInstanceId();
        InstanceId second = new InstanceId(first.runId(), 2, 0);
        Map<String, String> a = launch(executor, spec(first, "node-1", "id -u"));
        Map<String, String> b = launch(executor, spec(second, "node-1", "id -u"));
        awaitReport(first, InstanceReport.Exited.class);
        awaitReport(second, InstanceReport.Exited.class);
        assertThat(readAll(executor, second, b, LogStream.STDOUT)).isEqualTo(readAll(executor, first, a, LogStream.STDOUT));
    }

    @Test
    void aDaemonThatLeftItsInstanceIsKilledBeforeTheEndOfTheRunsLastInstanceIsReported() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        String marker = "escaped-" + System.nanoTime();
        // A daemon: a new session whose parent exits, so it is in no instance's tree any more. The parent waits until the
        // daemon is in its session: exiting before would leave it in the tree, and it would be killed with the leftovers.
        launch(executor, spec(id, "node-1", "setsid sh -c 'touch \"$TMPDIR/detached\"; sleep 600; echo " + marker
                + "' > /dev/null 2>&1 < /dev/null & while [ ! -e \"$TMPDIR/detached\" ]; do sleep 0.05; done; exit 0"));
        awaitReport(id, InstanceReport.Exited.class);
        assertThat(processesWith(marker)).as("killed before the end was reported").isEmpty();

        executor.forget(id.runId());
        assertThat(executor.find(id)).isEmpty();
    }

    @Test
    void aDaemonDiesWithItsInstanceEvenWhileAnotherInstanceOfTheRunRuns() throws Exception {
        Executor executor = newExecutor();
        InstanceId first = newInstanceId();
        InstanceId second = new InstanceId(first.runId(), 1, 1);
        String marker = "escaped-" + System.nanoTime();
        Map<String, String> peer = launch(executor, spec(second, "node-1", "echo started; sleep 600"));
        awaitOutput(executor, second, peer, "started");
        launch(executor, spec(first, "node-1", "setsid sh -c 'touch \"$TMPDIR/detached\"; sleep 600; echo " + marker
                + "' > /dev/null 2>&1 < /dev/null & while [ ! -e \"$TMPDIR/detached\" ]; do sleep 0.05; done; exit 0"));
        awaitReport(first, InstanceReport.Exited.class);
        assertThat(processesWith(marker)).as("its PID namespace ended with it").isEmpty();
        assertThat(executor.find(second)).isPresent();

        executor.terminate(second, peer, java.time.Duration.ofSeconds(5), "cancelled");
        awaitReport(second, InstanceReport.Exited.class);
    }

    @Test
    void forgettingARunKillsAnythingStillRunningUnderItsUid() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, "node-1", "id -u"));
        awaitReport(id, InstanceReport.Exited.class);
        int uid = Integer.parseInt(readAll(executor, id, handle, LogStream.STDOUT).trim());
        // Something started under the uid after the run ended (only root can do that).
        Process straggler = new ProcessBuilder("setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups", "sleep", "600").start();
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(10).toNanos();
        while (!ProcFs.ownedBy(uid).contains(straggler.pid())) { // until setpriv has switched
            assertThat(System.nanoTime()).isLessThan(deadline);
            java.util.concurrent.TimeUnit.MILLISECONDS.sleep(5);
        }

        assertThatThrownBy(() -> executor.forget(id.runId())).isInstanceOf(io.slipstream.executor.ExecutorException.class)
                .hasMessageContaining("outlived it and were killed");
        assertThat(straggler.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        executor.forget(id.runId());
        assertThat(executor.find(id)).isEmpty();
    }

    /**
     * A server killed (kill -9) while a launch gave the instance's directories to the run's uid (deepest first, the
     * sandbox last): the next launch gives the rest too. Taken as it was, the sandbox stayed the server's (0700) and the
     * instance could not even enter its working directory: it exited with code 2 at once, and its run ended FAILED.
     */
    @Test
    void aLaunchKilledWhileItGaveTheSandboxAwayGivesItAwayOnTheNextLaunch() throws Exception {
        Executor executor = newExecutor();
        InstanceId peer = newInstanceId();
        launch(executor, spec(peer, "node-1", "true")); // the run has its uid now
        awaitReport(peer, InstanceReport.Exited.class);
        int uid = Integer.parseInt(Files.readString(dataDir.resolve("instances").resolve(peer.runId().value()).resolve("uid")).trim());
        InstanceId id = new InstanceId(peer.runId(), 1, 1);
        Path dir = ((LocalProcessExecutor) executor).directoryOf(id).path();
        Files.createDirectories(dir);
        for (String name : List.of("work", "tmp", "report")) {
            Files.createDirectory(dir.resolve(name), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        for (String given : List.of("report", "tmp")) { // the kill came before "work"
            SafeFiles.chown(dir.resolve(given), uid, uid);
        }
        Map<String, String> handle = launch(executor, spec(id, "node-1", "pwd; touch \"$TMPDIR/mine\" && echo written"));
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(readAll(executor, id, handle, LogStream.STDOUT).lines().toList()).containsExactly(dir.resolve("work").toString(), "written");
    }

    /**
     * The process the supervisor started (the shell chain's unshare; the binary's init itself) killed on its own, while
     * another instance of the run runs (so no sweep of the run's uid follows): the namespace goes with it, whatever
     * runs in it. The kernel forgets a parent-death signal asked for before a uid switch, so it is asked for after.
     */
    @Test
    void theNamespaceEndsWhenTheProcessThatHoldsItIsKilled() throws Exception {
        Executor executor = newExecutor();
        Marked marked = markedBesideAPeer(executor);
        ProcessHandle.of(Long.parseLong(marked.handle().get("pid"))).orElseThrow().destroyForcibly();
        assertThat(awaitReport(marked.id(), InstanceReport.Exited.class).exitCode()).isEqualTo(137);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(processesWith(marked.marker())).as("ended with its namespace").isEmpty());
        executor.terminate(marked.peerId(), marked.peer(), java.time.Duration.ZERO, "test");
        awaitReport(marked.peerId(), InstanceReport.Exited.class);
    }

    /** An instance whose command line carries a marker, beside a peer of its run (so no sweep of the run's uid follows its end). */
    private record Marked(InstanceId id, Map<String, String> handle, String marker, InstanceId peerId, Map<String, String> peer) {
    }

    private Marked markedBesideAPeer(Executor executor) throws Exception {
        InstanceId first = newInstanceId();
        InstanceId second = new InstanceId(first.runId(), 1, 1);
        String marker = "orphan-" + System.nanoTime();
        Map<String, String> peer = launch(executor, spec(second, "node-1", "echo started; sleep 600"));
        awaitOutput(executor, second, peer, "started");
        Map<String, String> handle = launch(executor, spec(first, "node-1", "sh -c 'echo started; sleep 600; echo " + marker + "'"));
        awaitOutput(executor, first, handle, "started");
        assertThat(processesWith(marker)).isNotEmpty();
        return new Marked(first, handle, marker, second, peer);
    }

    /**
     * The binary's init is the supervisor's own child, with the parent-death signal it asked for after its uid switch:
     * the supervisor killed, the namespace ends with it (the shell chain's unshare in between has no such signal, and
     * its instances run on, followed by the server).
     */
    @Test
    void theBinarysNamespaceEndsWhenItsSupervisorIsKilled() throws Exception {
        assumeTrue(launcher() != SupervisorProgram.Mode.shell, "the shell chain's instances outlive their supervisor");
        Executor executor = newExecutor();
        Marked marked = markedBesideAPeer(executor);
        assertThat(marked.handle().get("pidNamespace")).isEqualTo("init");
        ProcessHandle.of(Long.parseLong(marked.handle().get("supervisorPid"))).orElseThrow().destroyForcibly();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(processesWith(marked.marker())).as("ended with its supervisor").isEmpty());
        executor.terminate(marked.peerId(), marked.peer(), java.time.Duration.ZERO, "test");
        awaitReport(marked.peerId(), InstanceReport.Exited.class);
    }

    /**
     * What the supervisor leaves the workload: the run's uid and group in every slot, no other group, no capability,
     * no way to gain privileges back (setuid binaries), the run's process limit, and a PID namespace of its own in
     * which it is not the init. Whichever launcher started it (ShellLaunchedIsolatedExecutorTest).
     */
    @Test
    void theWorkloadRunsWithTheRunsUidAndNothingMore() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, "node-1",
                "grep -E '^(Uid|Gid|Groups|NoNewPrivs|CapInh|CapPrm|CapEff|CapAmb|NSpid):' /proc/self/status; sed -n 's/^Max processes *\\([0-9]*\\) *\\([0-9]*\\).*/Limit: \\1 \\2/p' /proc/self/limits;"
                        + " echo \"Pid: $$\""));
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        int uid = Integer.parseInt(Files.readString(dataDir.resolve("instances").resolve(id.runId().value()).resolve("uid")).trim());
        Map<String, String> status = new java.util.HashMap<>();
        for (String line : readAll(executor, id, handle, LogStream.STDOUT).lines().toList()) {
            status.put(line.substring(0, line.indexOf(':')), line.substring(line.indexOf(':') + 1).strip().replaceAll("\\s+", " "));
        }
        String four = uid + " " + uid + " " + uid + " " + uid;
        assertThat(status).containsEntry("Uid", four).containsEntry("Gid", four).containsEntry("Groups", "").containsEntry("NoNewPrivs", "1")
                .containsEntry("CapInh", "0000000000000000").containsEntry("CapPrm", "0000000000000000")
                .containsEntry("CapEff", "0000000000000000").containsEntry("CapAmb", "0000000000000000")
                .containsEntry("Limit", LocalProcessExecutor.defaultMaxProcessesPerRun() + " " + LocalProcessExecutor.defaultMaxProcessesPerRun());
        assertThat(status.get("NSpid").split(" ")).as("a pid in the host's namespace and one in its own").hasSize(2);
        assertThat(status.get("Pid")).as("the workload's pid in its namespace: the init's child").isNotEqualTo("1");
    }

    private static List<Long> processesWith(String marker) {
        return ProcessHandle.allProcesses().filter(p -> p.info().commandLine().map(line -> line.contains(marker)).orElse(false))
                .map(ProcessHandle::pid).toList();
    }
}
