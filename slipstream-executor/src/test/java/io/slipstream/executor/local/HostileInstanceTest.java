package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.Activity;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidLeftovers;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Instances that attack the executor that runs them as root, with a uid of their own: every file the server reads or
 * writes for an instance is tried as a symbolic link, a FIFO and a hard link to a file of the server's, and the file
 * the server keeps must come out of it unchanged. Needs root (as CI has); skipped otherwise.
 */
@Timeout(120) // a read that blocks on a FIFO would hang the test instead of failing it
class HostileInstanceTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final AtomicInteger RUNS = new AtomicInteger();
    /** Every name the server reads or writes in an instance's directory. */
    private static final List<String> CONTROL_FILES = List.of("pid", "exit_code", "stdout.log", "stderr.log", "supervisor.log", "metadata.json",
            "metadata.json.tmp", "preemption_notice.json", "preemption_notice.json.tmp", "terminate_requested", "probe.json", "probe.json.tmp",
            "ready", "ready.tmp", "stdout.log.start", "stdout.log.start.tmp", "progress_ignored", "report", "work", "tmp", "joined");

    @TempDir
    Path dataDir;

    private Path target;
    private Path sharedTmp;
    private Isolation isolation;
    private String targetSum;
    private final List<Executor> executors = new ArrayList<>();
    private final LinkedBlockingQueue<InstanceReport> reports = new LinkedBlockingQueue<>();

    @BeforeEach
    void setUp() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "switching users needs root");
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        // A file of the server's that instances must neither read nor change: the admin token, the store, /etc/shadow.
        target = Files.writeString(dataDir.resolve("admin.token"), "{\"step\": 99}\n");
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-------"));
        targetSum = checksum(target);
        // The shared place the executor clears of a freed uid's files: one of this test's, as /tmp is (sticky, anyone
        // writes). Not the machine's /tmp, whose walk takes as long as what other builds keep there, and changes under it.
        sharedTmp = Files.createDirectory(dataDir.resolve("shared-tmp"));
        Files.setPosixFilePermissions(sharedTmp, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThat(new ProcessBuilder("chmod", "+t", sharedTmp.toString()).start().waitFor()).isZero();
        // Claimed like a server claims its uids, so that no other test or server on this machine shares them.
        isolation = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir, null);
    }

    @AfterEach
    void tearDown() throws Exception {
        executors.forEach(Executor::close);
        if (target != null) {
            assertThat(checksum(target)).as("the server's file is unchanged").isEqualTo(targetSum);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target))).isEqualTo("rw-------");
        }
    }

    /** What starts the instances: the launcher binary where the build made one (ShellLaunchedHostileInstanceTest: the shell). */
    protected SupervisorProgram.Mode launcher() {
        return BuiltProgram.mode();
    }

    private LocalProcessExecutor newExecutor(long logLimit) {
        List<NodeInfo> nodes = List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        LocalProcessExecutor executor = new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV,
                isolation, null, logLimit, 0, Clock.systemUTC(), List.of(sharedTmp), ImageSettings.DEFAULTS, launcher(),
                Cgroups.detect(Cgroups.Mode.auto, true, dataDir.resolve("instances")), false); // cgroups as a server that is root has them
        executor.setListener(reports::add);
        executors.add(executor);
        return executor;
    }

    private static InstanceId newInstanceId() {
        return new InstanceId(new RunId("hostile-" + RUNS.incrementAndGet()), 1, 0);
    }

    private static LaunchSpec spec(InstanceId id, String script) {
        return new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("sh", "-c", script), Map.of(), null, null);
    }

    @Test
    void theWorkloadCanPlantNothingInTheDirectoryTheServerWritesAndReads() throws Exception {
        LocalProcessExecutor executor = newExecutor(0);
        InstanceId id = newInstanceId();
        StringBuilder script = new StringBuilder("cd ..; ");
        for (String name : CONTROL_FILES) {
            script.append(attempt("ln -sfT " + target + " " + name, "symlink " + name))
                    .append(attempt("rm -rf " + name + " && mkfifo " + name, "fifo " + name))
                    .append(attempt("ln -fT " + target + " " + name, "hardlink " + name))
                    .append(attempt("mv " + name + " moved-" + name, "rename " + name));
        }
        script.append("echo attacks done; exec sleep 600");
        Map<String, String> handle = executor.launch(spec(id, script.toString()));
        String out = awaitOutput(executor, id, handle, "attacks done");

        // Now the server writes there (the notice, the stop marker) and reads there (exit code, logs).
        executor.terminate(id, handle, Duration.ofSeconds(5), "preempted by an attacker's test");
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        assertThat(exited.terminated()).isTrue();
        assertThat(out).doesNotContain("ALLOWED").contains("refused symlink stdout.log", "refused fifo exit_code", "refused hardlink ready");
        assertThat(new String(executor.readLogTail(id, handle, LogStream.STDOUT, 1 << 20).data(), StandardCharsets.UTF_8)).doesNotContain("99");
        Path dir = dataDir.resolve("instances").resolve(handle.get("dir"));
        assertThat(Files.isRegularFile(dir.resolve("preemption_notice.json"), LinkOption.NOFOLLOW_LINKS)).isTrue();
    }

    private static String attempt(String command, String what) {
        return "if " + command + " 2>/dev/null; then echo 'ALLOWED " + what + "'; else echo 'refused " + what + "'; fi; ";
    }

    @Test
    void aReportFileThatIsALinkAFifoOrAnotherFilesHardLinkIsNeverFollowedNorBlockedOn() throws Exception {
        LocalProcessExecutor executor = newExecutor(0);
        InstanceId id = newInstanceId();
        Map<String, String> handle = executor.launch(spec(id,
                "ln -s " + target + " \"$SLIPSTREAM_PROGRESS_FILE\" && echo linked; exec sleep 600"));
        awaitOutput(executor, id, handle, "linked");
        assertThat(executor.activity(id, handle).progress()).as("a link to the server's file").isNull();

        Path progress = dataDir.resolve("instances").resolve(handle.get("dir")).resolve("report/progress.json");
        Files.delete(progress);
        assertThat(new ProcessBuilder("mkfifo", progress.toString()).start().waitFor()).isZero();
        assertThat(executor.activity(id, handle).progress()).as("a FIFO, never opened").isNull();

        // What protected_hardlinks keeps a workload from doing, done here as root: the file's owner gives it away.
        Files.delete(progress);
        Files.createLink(progress, target);
        assertThat(executor.activity(id, handle).progress()).as("a hard link to a file of the server's").isNull();

        Files.delete(progress);
        Files.createDirectory(progress);
        assertThat(executor.activity(id, handle).progress()).as("a directory").isNull();

        // A FIFO as the acknowledgement counts as one: it is only looked at, never opened.
        Path ack = progress.resolveSibling("preemption_ack");
        assertThat(new ProcessBuilder("mkfifo", ack.toString()).start().waitFor()).isZero();
        executor.terminate(id, handle, Duration.ofSeconds(60), "test");
        assertThat(awaitReport(id, InstanceReport.Exited.class).terminated()).isTrue();
    }

    /**
     * A lease its owner holds on a file (fcntl F_SETLEASE) makes every other open of it wait until the owner lets go, or
     * for the kernel's lease-break-time (45 s by default). The progress file is read on the control loop: one lease
     * would stop scheduling for everyone. The server waits a moment, then reads that instance's progress no more.
     */
    @Test
    void aProgressFileTheWorkloadHoldsALeaseOnNeverKeepsTheServerWaiting() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 to take a lease");
        LocalProcessExecutor executor = newExecutor(0);
        InstanceId id = newInstanceId();
        String lease = "import fcntl, os, signal, time\n"
                + "signal.signal(signal.SIGIO, signal.SIG_IGN)\n" // told to let go, it does not
                + "path = os.environ['SLIPSTREAM_PROGRESS_FILE']\n"
                + "with open(path, 'w') as f:\n"
                + "    f.write('{\"step\": 7}')\n"
                + "held = open(path, 'r+')\n"
                + "try:\n"
                + "    fcntl.fcntl(held, fcntl.F_SETLEASE, fcntl.F_WRLCK)\n"
                + "    print('leased', flush=True)\n"
                + "except OSError as e:\n"
                + "    print('no lease:', e, flush=True)\n"
                + "time.sleep(600)\n";
        Map<String, String> handle = executor.launch(new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("/usr/bin/python3", "-c", lease),
                Map.of(), null, null));
        try {
            String out = awaitOutput(executor, id, handle, "lease");
            assumeTrue(out.contains("leased"), () -> "this kernel gives no leases: " + out);
            for (int look = 0; look < 3; look++) {
                long start = System.nanoTime();
                Activity activity = executor.activity(id, handle);
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                // The first look waits a moment for the open; the later ones do not open it at all.
                assertThat(took).as("look %d at a leased progress file", look).isLessThan(look == 0 ? Duration.ofSeconds(5) : Duration.ofMillis(400));
                assertThat(activity.progress()).as("a leased progress file is not read").isNull();
            }
            Path dir = dataDir.resolve("instances").resolve(handle.get("dir"));
            assertThat(Files.exists(dir.resolve("progress_ignored"), LinkOption.NOFOLLOW_LINKS)).as("remembered across restarts").isTrue();
            assertThat(Files.list(dataDir.resolve("instances/.pins"))).as("pins are removed").isEmpty();
        } finally {
            executor.terminate(id, handle, Duration.ZERO, "test"); // a failed look leaves no lease holder behind
            awaitReport(id, InstanceReport.Exited.class);
        }
    }

    @Test
    void aProgressFileTheWorkloadWritesIsStillRead() throws Exception {
        LocalProcessExecutor executor = newExecutor(0);
        InstanceId id = newInstanceId();
        Map<String, String> handle = executor.launch(spec(id,
                "echo '{\"step\": 12}' > \"$SLIPSTREAM_PROGRESS_FILE.tmp\" && mv \"$SLIPSTREAM_PROGRESS_FILE.tmp\" \"$SLIPSTREAM_PROGRESS_FILE\" "
                        + "&& echo reported; exec sleep 600"));
        awaitOutput(executor, id, handle, "reported");
        Activity activity = executor.activity(id, handle);
        assertThat(activity.progress()).isNotNull();
        assertThat(activity.progress().step()).isEqualTo(12);
        assertThat(Files.list(dataDir.resolve("instances/.pins"))).as("pins are removed").isEmpty();
        executor.terminate(id, handle, Duration.ZERO, "test");
        awaitReport(id, InstanceReport.Exited.class);
    }

    @Test
    void logsAreKeptToTheirLimitAndReadFromWhereTheKeptPartBegins() throws Exception {
        long limit = 1 << 20;
        LocalProcessExecutor executor = newExecutor(limit);
        InstanceId id = newInstanceId();
        // 8 MB of lines, then a last line; then it waits to be looked at.
        Map<String, String> handle = executor.launch(spec(id, "yes \"$(printf '%099d' 0)\" | head -n 80000; echo the-end; exec sleep 600"));
        awaitOutput(executor, id, handle, "the-end");
        Path log = dataDir.resolve("instances").resolve(handle.get("dir")).resolve("stdout.log");
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (allocatedBytes(log) > limit + limit / 4) {
            assertThat(System.nanoTime()).as("the log is trimmed within the deadline").isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100);
        }
        assertThat(Files.size(log)).as("offsets stay valid: the size does not shrink").isGreaterThan(8_000_000L);
        LogChunk first = executor.readLog(id, handle, LogStream.STDOUT, 0, 4096);
        assertThat(first.nextOffset()).as("a read from 0 starts where the kept part begins").isGreaterThan(6_000_000L);
        assertThat(new String(first.data(), StandardCharsets.UTF_8)).doesNotContain("\0");
        assertThat(new String(executor.readLogTail(id, handle, LogStream.STDOUT, 100).data(), StandardCharsets.UTF_8)).endsWith("the-end\n");
        executor.terminate(id, handle, Duration.ZERO, "test");
        awaitReport(id, InstanceReport.Exited.class);
    }

    @Test
    void theJobsEnvironmentNeverReachesAProcessOfTheServers() throws Exception {
        LocalProcessExecutor executor = newExecutor(0);
        // Programs named as the ones that start an instance, first on the job's PATH: run as root, they would say so.
        Path evil = Files.createDirectories(dataDir.resolve("evil"));
        Files.setPosixFilePermissions(evil, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path marker = dataDir.resolve("ran-as-root");
        for (String tool : List.of("setsid", "setpriv", "sh", "timeout", "env")) {
            Path fake = Files.writeString(evil.resolve(tool), "#!/bin/sh\n[ \"$(id -u)\" = 0 ] && echo " + tool + " >> " + marker + "\nexec /usr/bin/" + tool
                    + " \"$@\"\n");
            Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        InstanceId id = newInstanceId();
        Map<String, String> env = Map.of("PATH", evil + ":/usr/bin:/bin", "LD_PRELOAD", "/nonexistent/hook.so", "LD_LIBRARY_PATH", evil.toString(),
                "ENV", evil.resolve("sh").toString(), "IFS", "x");
        LaunchSpec spec = new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("sh", "-c", "echo \"path=$PATH preload=$LD_PRELOAD\"; exec sleep 600"),
                env, null, null, null, new io.slipstream.api.spec.StartupProbe(List.of("true"), 1, 3, 0), null);
        Map<String, String> handle = executor.launch(spec);
        String out = awaitOutput(executor, id, handle, "path=");
        awaitReport(id, InstanceReport.Ready.class); // a probe ran too
        assertThat(out).as("the workload has its environment").contains("path=" + evil + ":/usr/bin:/bin preload=/nonexistent/hook.so");
        assertThat(Files.exists(marker)).as("no program of the job's ran as root").isFalse();
        String supervisor = Files.readString(dataDir.resolve("instances").resolve(handle.get("dir")).resolve("supervisor.log"));
        assertThat(supervisor).as("the dynamic loader of the server's processes never saw LD_PRELOAD").doesNotContain("LD_PRELOAD");
        executor.terminate(id, handle, Duration.ZERO, "test");
        awaitReport(id, InstanceReport.Exited.class);
    }

    @Test
    void aDaemonThatStopsEveryProcessOfItsUidStillDiesWithTheRun() throws Exception {
        LocalProcessExecutor executor = newExecutor(0);
        InstanceId id = newInstanceId();
        String marker = "stopper-" + System.nanoTime();
        // Detached, it stops every other process of the uid over and over: a kill made as the uid would be stopped too.
        // "started" comes first: the daemon may stop the instance's shell before it prints anything.
        Map<String, String> handle = executor.launch(spec(id, "echo started; setsid sh -c 'while :; do kill -STOP -1 2>/dev/null; done; : "
                + marker + "' </dev/null >/dev/null 2>&1 & exec sleep 600"));
        awaitOutput(executor, id, handle, "started");
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
                .until(() -> ProcessHandle.allProcesses().anyMatch(p -> p.info().commandLine().orElse("").contains(marker)));
        executor.terminate(id, handle, Duration.ofSeconds(1), "test");
        awaitReport(id, InstanceReport.Exited.class);
        assertThat(ProcessHandle.allProcesses().filter(p -> p.info().commandLine().orElse("").contains(marker)).toList())
                .as("nothing of the run is left when its end is reported").isEmpty();
    }

    @Test
    void processesThatHideFromProcFsAreGoneWhenTheInstanceEnds() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 for a process whose main thread alone exits");
        LocalProcessExecutor executor = newExecutor(0);
        InstanceId id = newInstanceId();
        // One keeps changing its pid (fork, parent exits, every 10 ms); one ends its main thread alone (raw exit(2)), so
        // /proc shows it as a zombie while a thread of it runs on. Both detached; then the instance's main process ends.
        String zombie = "import ctypes, threading, time\n"
                + "threading.Thread(target=lambda: time.sleep(600)).start()\n"
                + "ctypes.CDLL(None).syscall(60, 0)\n";
        String script = "printf 'sleep 0.01\\nsh \"$0\" &\\n' > \"$TMPDIR/hop.sh\"; setsid sh \"$TMPDIR/hop.sh\" </dev/null >/dev/null 2>&1 & "
                + "setsid /usr/bin/python3 -c '" + zombie + "' </dev/null >/dev/null 2>&1 & sleep 1; id -u; exit 0";
        Map<String, String> handle = executor.launch(spec(id, script));
        awaitReport(id, InstanceReport.Exited.class);
        int uid = Integer.parseInt(new String(executor.readLogTail(id, handle, LogStream.STDOUT, 100).data(), StandardCharsets.UTF_8).trim());
        assertThat(ProcFs.ownedBy(uid)).as("nothing of the instance is left when its end is reported").isEmpty();
    }

    @Test
    void aPathOfTheWorkspaceThatALinkWasSwappedIntoIsNeverFollowed() throws Exception {
        LocalProcessExecutor executor = newExecutor(0);
        Path outside = Files.createDirectories(dataDir.resolve("outside"));
        // A run of the workspace made a storage directory and put a link in it where another job's storage path passes.
        InstanceId first = newInstanceId();
        executor.launch(new LaunchSpec(first, "main-0", "node-1", List.of(), List.of("sh", "-c",
                "ln -s " + outside + " \"$SLIPSTREAM_STORAGE_DATA/cache\" && echo planted"), Map.of(), null, null,
                metadata(first, "data", null), null, null));
        awaitReport(first, InstanceReport.Exited.class);
        InstanceId second = newInstanceId();
        LaunchSpec nested = new LaunchSpec(second, "main-0", "node-1", List.of(), List.of("true"), Map.of(), null, null,
                metadata(second, "deep", "data/cache/models"), null, null);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> executor.launch(nested)).hasMessageContaining("storage path");
        try (var made = Files.list(outside)) {
            assertThat(made).as("nothing was made where the link leads").isEmpty();
        }
    }

    /** A run of job {@code train} of {@code team-a} with one storage. */
    private static io.slipstream.api.run.ClusterMetadata metadata(InstanceId id, String storage, String subPath) {
        var self = new io.slipstream.api.run.ClusterMetadata.Instance("main-0", "main", 0, 0, "node-1", "localhost", "localhost", "127.0.0.1",
                List.of(40000), true);
        return new io.slipstream.api.run.ClusterMetadata(io.slipstream.api.run.ClusterMetadata.FORMAT_VERSION, id.runId().value(), "team-a", "train",
                id.attempt(), 1, "InParallel", new io.slipstream.api.run.ClusterMetadata.Address("127.0.0.1", 40000), List.of(self),
                List.of(new io.slipstream.api.run.ClusterMetadata.Storage(storage, "job", subPath, null)));
    }

    @Test
    void whatAUidLeftInSharedPlacesGoesBeforeTheUidIsGivenAgain() throws Exception {
        LocalProcessExecutor executor = newExecutor(0);
        InstanceId id = newInstanceId();
        assertThat(UidLeftovers.SHARED_PLACES).as("where a server looks").contains(Path.of("/tmp"), Path.of("/var/tmp"), Path.of("/dev/shm"));
        Path left = sharedTmp.resolve("slipstream-left-" + System.nanoTime());
        Map<String, String> handle = executor.launch(spec(id, "id -u; echo private > " + left + "; chmod 600 " + left));
        awaitReport(id, InstanceReport.Exited.class);
        assertThat(Files.exists(left)).isTrue();
        String uid = new String(executor.readLogTail(id, handle, LogStream.STDOUT, 100).data(), StandardCharsets.UTF_8).trim();
        executor.forget(id.runId());
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (Files.exists(left)) {
            assertThat(System.nanoTime()).as("removed once the run's files are gone").isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(50);
        }
        // And the next run gets another uid.
        InstanceId next = newInstanceId();
        Map<String, String> nextHandle = executor.launch(spec(next, "id -u"));
        awaitReport(next, InstanceReport.Exited.class);
        assertThat(new String(executor.readLogTail(next, nextHandle, LogStream.STDOUT, 100).data(), StandardCharsets.UTF_8).trim()).isNotEqualTo(uid);
    }

    @Test
    void aLogWrittenBelowWhereItIsKeptIsTrimmedAllTheSame() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 to drop O_APPEND");
        long limit = 1 << 20;
        LocalProcessExecutor executor = newExecutor(limit);
        InstanceId id = newInstanceId();
        // 4 MB appended; once trimmed, O_APPEND dropped and 6 MB written again from offset 0, below the kept part.
        String script = "import fcntl, os, sys, time\n"
                + "os.write(1, b'x' * 4_000_000 + b'\\nappended\\n')\n"
                + "while not os.path.exists(os.environ['TMPDIR'] + '/go'): time.sleep(0.05)\n"
                + "fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) & ~os.O_APPEND)\n"
                + "os.pwrite(1, b'y' * 6_000_000, 0)\n"
                + "os.lseek(1, 0, os.SEEK_END)\n"
                + "print('rewritten', flush=True)\n"
                + "time.sleep(600)\n";
        Map<String, String> handle = executor.launch(new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("/usr/bin/python3", "-c", script),
                Map.of(), null, null));
        Path log = dataDir.resolve("instances").resolve(handle.get("dir")).resolve("stdout.log");
        awaitAllocatedAtMost(log, limit + limit / 4);
        Files.writeString(dataDir.resolve("instances").resolve(handle.get("dir")).resolve("tmp/go"), "");
        awaitOutput(executor, id, handle, "rewritten");
        awaitAllocatedAtMost(log, limit + limit / 4); // without counting blocks, the rewritten 6 MB would stay
        executor.terminate(id, handle, Duration.ZERO, "test");
        awaitReport(id, InstanceReport.Exited.class);
    }

    private static void awaitAllocatedAtMost(Path log, long bytes) throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!Files.exists(log) || allocatedBytes(log) > bytes || Files.size(log) < 4_000_000) {
            assertThat(System.nanoTime()).as("the log takes at most " + bytes + " bytes on disk within the deadline").isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    private static long allocatedBytes(Path file) throws Exception {
        Process stat = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).start();
        String[] fields = new String(stat.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim().split(" ");
        stat.waitFor();
        return Long.parseLong(fields[0]) * Long.parseLong(fields[1]);
    }

    private String awaitOutput(Executor executor, InstanceId id, Map<String, String> handle, String text) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            String out = new String(executor.readLogTail(id, handle, LogStream.STDOUT, 1 << 20).data(), StandardCharsets.UTF_8);
            if (out.contains(text)) {
                return out;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        throw new AssertionError("no '" + text + "' from " + id + " within " + DEADLINE);
    }

    private <R extends InstanceReport> R awaitReport(InstanceId id, Class<R> type) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            InstanceReport report = reports.poll(100, TimeUnit.MILLISECONDS);
            if (report != null && report.id().equals(id) && type.isInstance(report)) {
                return type.cast(report);
            }
        }
        throw new AssertionError("no " + type.getSimpleName() + " for " + id + " within " + DEADLINE);
    }

    private static String checksum(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
