package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorContext;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.cgroup.CgroupMounts;
import io.slipstream.executor.local.cgroup.CgroupUsage;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.cgroup.CpuList;
import io.slipstream.executor.local.cgroup.InstanceCgroup;
import io.slipstream.executor.local.cgroup.Limit;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile tenants against the kernel's limits (issue 41): instances that take more memory, CPU and processes than
 * they were given, and a daemon that forks faster than a kill, each run as root through the executor with the host's
 * cgroups, as a server that is root has them. Skipped without root or without the memory, cpu, pids controllers and
 * a way to kill through the cgroup.
 */
@Timeout(180)
class CgroupEnforcementTest {
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final AtomicInteger RUNS = new AtomicInteger();

    @TempDir
    Path dataDir;

    private Cgroups cgroups;
    private Isolation isolation;
    private final List<Executor> executors = new ArrayList<>();
    private final List<Map<String, String>> launched = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final InstanceWaits waits = new InstanceWaits(DEADLINE);

    @BeforeEach
    void setUp() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "making cgroups needs root");
        cgroups = Cgroups.detect(Cgroups.Mode.auto, true, dataDir.resolve("instances"));
        assumeTrue(cgroups.enforcement().enforced().containsAll(List.of(Limit.memory, Limit.cpu, Limit.pids, Limit.kill)),
                cgroups.enforcement().describe());
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        isolation = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir, null);
    }

    @AfterEach
    void tearDown() throws Exception {
        // Instances outlive their executor by design: a test that failed halfway must not leave busy loops behind.
        for (Map<String, String> handle : launched) {
            InstanceCgroup cgroup = cgroups.existing(handle.get("cgroup"));
            for (int round = 0; cgroup != null && cgroup.killAll() > 0 && round < 500; round++) {
                TimeUnit.MILLISECONDS.sleep(10);
            }
        }
        executors.forEach(Executor::close);
    }

    private Map<String, String> launch(Executor executor, LaunchSpec spec) {
        Map<String, String> handle = executor.launch(spec);
        launched.add(handle);
        return handle;
    }

    /** What starts the instances: the launcher binary where the build made one (ShellLaunchedCgroupEnforcementTest: the shell). */
    protected SupervisorProgram.Mode launcher() {
        return BuiltProgram.mode();
    }

    private LocalProcessExecutor newExecutor(Isolation with, int maxProcesses) throws Exception {
        return newExecutor(with, maxProcesses, List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of())));
    }

    private LocalProcessExecutor newExecutor(Isolation with, int maxProcesses, List<NodeInfo> nodes) throws Exception {
        return newExecutor(with, maxProcesses, nodes, false);
    }

    private LocalProcessExecutor newExecutor(Isolation with, int maxProcesses, List<NodeInfo> nodes, boolean burstableMemory) throws Exception {
        Path sharedTmp = Files.createDirectories(dataDir.resolve("shared-tmp"));
        LocalProcessExecutor executor = new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV,
                with, null, 0, maxProcesses, Clock.systemUTC(), List.of(sharedTmp), ImageSettings.DEFAULTS, launcher(), cgroups, burstableMemory);
        executor.setListener(waits::report);
        executors.add(executor);
        return executor;
    }

    private static InstanceId newInstanceId() {
        return new InstanceId(new RunId("cgroup-" + RUNS.incrementAndGet()), 1, 0);
    }

    private static LaunchSpec spec(InstanceId id, String script, String cpu, String memory) {
        Resources resources = new Resources(io.slipstream.api.spec.Quantities.parseMilliCpu(cpu), io.slipstream.api.spec.Quantities.parseBytes(memory), 0, null);
        return new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("sh", "-c", script), Map.of(), null, null, null, null, resources);
    }

    @Test
    void anInstancePastItsMemoryIsEndedOomKilledAndNothingElseIsTouched() throws Exception {
        LocalProcessExecutor executor = newExecutor(isolation, 0);
        InstanceId neighbour = newInstanceId();
        Map<String, String> neighbourHandle = launch(executor, spec(neighbour, "echo up; exec sleep 600", "100m", "64Mi"));
        waits.awaitOutput(executor, neighbour, neighbourHandle, "up");

        InstanceId hog = newInstanceId();
        Map<String, String> hogHandle = launch(executor, spec(hog, "exec python3 -c \"x = b'x' * (256 << 20); print('allocated', len(x))\"", "1", "64Mi"));
        InstanceReport.Exited ended = waits.awaitReport(hog, InstanceReport.Exited.class);
        assertThat(ended.exitCode()).isEqualTo(137);
        assertThat(ended.cause()).isEqualTo(io.slipstream.api.run.EndCause.OOMKilled);
        assertThat(new String(executor.readLogTail(hog, hogHandle, LogStream.STDOUT, 4096).data(), StandardCharsets.UTF_8)).doesNotContain("allocated");
        assertThat(gone(hogHandle)).as("its cgroup is removed").isTrue();

        assertThat(ProcFs.isAlive(Long.parseLong(neighbourHandle.get("pid")), Long.parseLong(neighbourHandle.get("pidStart"))))
                .as("the instance beside it runs on").isTrue();
        executor.terminate(neighbour, neighbourHandle, Duration.ZERO, "test over");
        InstanceReport.Exited stopped = waits.awaitReport(neighbour, InstanceReport.Exited.class);
        assertThat(stopped.cause()).isNull();
    }

    /**
     * A server that stops right after a launch keeps the cgroup of the instance it launched, even before the instance's
     * first process entered it (it found it gone and failed with 2: a restart test failed on it now and then); the
     * launcher binary and the shell chain say the instance started only once it is in its cgroup. Each round launches,
     * looks into the cgroup, and closes the executor at once.
     */
    @Test
    void anInstanceSaidToBeStartedIsInItsCgroupAndOutlivesAServerThatStopsAtOnce() throws Exception {
        for (int round = 0; round < 5; round++) {
            LocalProcessExecutor executor = newExecutor(isolation, 0);
            InstanceId id = newInstanceId();
            Map<String, String> handle = launch(executor, spec(id, "sleep 0.2; exit 7", "100m", "64Mi"));
            InstanceCgroup cgroup = cgroups.existing(handle.get("cgroup"));
            for (Path procs : cgroup.procsFiles()) {
                assertThat(Files.readString(procs)).as("round %d: %s", round, procs).isNotBlank();
            }
            executor.close(); // as a server stopping right after the launch: its cgroups nothing runs in are removed
            Path exitCode = dataDir.resolve("instances").resolve(handle.get("dir")).resolve("exit_code");
            org.awaitility.Awaitility.await().atMost(DEADLINE).until(() -> Files.exists(exitCode));
            assertThat(Files.readString(exitCode).strip()).as("round %d: the instance's own exit code", round).isEqualTo("7");
        }
    }

    /**
     * {@code limits.memory} above the request, where the server allows bursts: the cgroup's limit is the limit, not the
     * request (held to its request, a server that does not allow them: {@link MemoryBurstsTest}).
     */
    @Test
    void aBurstableInstanceMayUseMemoryUpToItsLimitWhereTheServerAllowsIt() throws Exception {
        String touch = "exec python3 -c \"x = b'x' * (128 << 20); print('allocated', len(x))\"";
        List<NodeInfo> nodes = List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        LocalProcessExecutor bursting = newExecutor(isolation, 0, nodes, true);
        InstanceId burst = newInstanceId();
        Map<String, String> burstHandle = launch(bursting, spec(burst, touch, "1", "64Mi").withMemoryLimit(256L << 20));
        InstanceReport.Exited ended = waits.awaitReport(burst, InstanceReport.Exited.class);
        assertThat(ended.exitCode()).as("128 MiB under a limit of 256 MiB, with a request of 64 MiB").isZero();
        assertThat(new String(bursting.readLogTail(burst, burstHandle, LogStream.STDOUT, 4096).data(), StandardCharsets.UTF_8))
                .contains("allocated " + (128 << 20));
    }

    @Test
    void anInstancesEndReportsWhatTheKernelCountedOfIt() throws Exception {
        LocalProcessExecutor executor = newExecutor(isolation, 0);
        InstanceId id = newInstanceId();
        // 100 MiB written byte by byte (touched, not only reserved), within a limit well above it.
        launch(executor, spec(id, "exec python3 -c \"x = b'x' * (100 << 20); print('allocated', len(x))\"", "1", "512Mi"));
        InstanceReport.Exited ended = waits.awaitReport(id, InstanceReport.Exited.class);
        assertThat(ended.exitCode()).isZero();
        assertThat(ended.cause()).isNull();
        assertThat(ended.usage()).as("what its cgroup counted").isNotNull();
        System.out.printf("figure: an instance that wrote 100 MiB: memory peak %d bytes, CPU %d ns%n", ended.usage().memoryPeakBytes(),
                ended.usage().cpuNanos());
        assertThat(ended.usage().cpuNanos()).as("CPU time").isPositive();
        if (ended.usage().hasMemoryPeak()) {
            assertThat(ended.usage().memoryPeakBytes()).as("memory peak").isGreaterThanOrEqualTo(100L << 20);
        } else { // cgroup v2 before Linux 5.19 has no memory.peak
            assertThat(cgroups.enforcement().describe()).contains("v2");
        }
    }

    /**
     * A machine split into two nodes of one core each ({@code cpuset}): each node's instances run on its core alone,
     * even after asking the kernel for every core ({@code taskset}).
     */
    @Test
    void anInstanceRunsOnlyOnItsNodesCores() throws Exception {
        assumeTrue(cgroups.enforcement().enforces(Limit.cpuset), cgroups.enforcement().describe());
        CpuList machine = CpuList.parse(ProcFs.allowedCores().orElseThrow());
        assumeTrue(machine.count() >= 2, "one core: nothing to split");
        java.util.BitSet cores = machine.cores();
        String first = Integer.toString(cores.nextSetBit(0));
        String last = Integer.toString(cores.length() - 1);
        List<NodeInfo> nodes = List.of(new NodeInfo("node-a", new Resources(1000, 8L << 30, 0, null), null, Map.of(), null, first),
                new NodeInfo("node-b", new Resources(1000, 8L << 30, 0, null), null, Map.of(), null, last));
        LocalProcessExecutor executor = newExecutor(isolation, 0, nodes);
        String script = "taskset -pc " + machine + " $$ >/dev/null 2>&1; grep Cpus_allowed_list: /proc/self/status";
        for (NodeInfo node : nodes) {
            InstanceId id = newInstanceId();
            LaunchSpec base = spec(id, script, "500m", "64Mi");
            Map<String, String> handle = launch(executor, new LaunchSpec(id, base.name(), node.name(), List.of(), base.command(), Map.of(), null, null,
                    null, null, base.resources()));
            assertThat(waits.awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
            assertThat(InstanceWaits.log(executor, id, handle)).as("an instance on %s", node.name()).isEqualTo("Cpus_allowed_list:\t" + node.cpuset() + "\n");
        }
    }

    @Test
    void busyInstancesGetTheirCpusAndNoMore() throws Exception {
        LocalProcessExecutor executor = newExecutor(isolation, 0);
        String spin = "for i in 1 2 3; do (while :; do :; done) & done; echo spinning; wait";
        InstanceId first = newInstanceId();
        InstanceId second = newInstanceId();
        Map<String, String> firstHandle = launch(executor, spec(first, spin, "250m", "64Mi"));
        Map<String, String> secondHandle = launch(executor, spec(second, spin, "400m", "64Mi"));
        waits.awaitOutput(executor, first, firstHandle, "spinning");
        waits.awaitOutput(executor, second, secondHandle, "spinning");
        TimeUnit.MILLISECONDS.sleep(500); // past the start, when the loops were still being forked
        long firstBefore = cpuNanos(firstHandle);
        long secondBefore = cpuNanos(secondHandle);
        long[] firstPeriods = throttling(firstHandle);
        long[] secondPeriods = throttling(secondHandle);
        long idleBefore = idleJiffies();
        long wallBefore = System.nanoTime();
        TimeUnit.SECONDS.sleep(5); // the window the quota is measured over: nothing to wait for but time
        double wall = System.nanoTime() - wallBefore;
        double idleCores = (idleJiffies() - idleBefore) * 1e9 / 100 / wall; // USER_HZ is 100
        double firstCores = (cpuNanos(firstHandle) - firstBefore) / wall;
        double secondCores = (cpuNanos(secondHandle) - secondBefore) / wall;
        double firstThrottled = throttledShare(firstPeriods, throttling(firstHandle));
        double secondThrottled = throttledShare(secondPeriods, throttling(secondHandle));
        System.out.printf("figure: three busy loops given 250m used %.3f cores (at its quota in %.0f%% of periods), given 400m %.3f (%.0f%%),"
                + " the machine idled %.3f, over %.1f s%n", firstCores, firstThrottled * 100, secondCores, secondThrottled * 100, idleCores, wall / 1e9);
        assertThat(firstCores).isLessThanOrEqualTo(0.25 * 1.15);
        assertThat(secondCores).isLessThanOrEqualTo(0.40 * 1.15);
        // As much as given wherever the machine had it: a loop stopped by its quota in (nearly) every period got all of
        // it. One the machine kept from its quota by other work (other builds, on two cores) was throttled less often:
        // nothing to prove then, as an average of idle time over the window cannot tell when the idle moments were.
        if (firstThrottled >= 0.9 && secondThrottled >= 0.9) {
            assertThat(firstCores).isGreaterThanOrEqualTo(0.25 * 0.85);
            assertThat(secondCores).isGreaterThanOrEqualTo(0.40 * 0.85);
        } else {
            System.out.println("the machine was busy with other work: not asserting that each instance got all of its quota");
        }
        executor.terminate(first, firstHandle, Duration.ZERO, "test over");
        executor.terminate(second, secondHandle, Duration.ZERO, "test over");
        waits.awaitReport(first, InstanceReport.Exited.class);
        waits.awaitReport(second, InstanceReport.Exited.class);
    }

    @Test
    void aForkBombStopsAtItsLimitWhileOtherInstancesStart() throws Exception {
        LocalProcessExecutor executor = newExecutor(isolation, 64);
        InstanceId bomb = newInstanceId();
        // Forks sleepers for as long as it lives, whatever fork answers: a shell's own bomb ends where a fork fails.
        String forkForever = "import os, time\nprint('armed', flush=True)\nwhile True:\n    try:\n        if os.fork() == 0:\n"
                + "            os.execvp('sleep', ['sleep', '600'])\n    except OSError:\n        time.sleep(0.01)\n";
        LaunchSpec shell = spec(bomb, "", "1", "256Mi");
        Map<String, String> bombHandle = launch(executor, new LaunchSpec(bomb, shell.name(), shell.node(), List.of(), List.of("python3", "-c", forkForever),
                Map.of(), null, null, null, null, shell.resources()));
        waits.awaitOutput(executor, bomb, bombHandle, "armed");
        Path pidsCurrent = cgroupFile(bombHandle, "pids.current");
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (Long.parseLong(Files.readString(pidsCurrent).trim()) < 60 && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(20);
        }
        assertThat(Long.parseLong(Files.readString(pidsCurrent).trim())).as("processes in the bomb's cgroup, saturated").isBetween(60L, 64L);
        InstanceId other = newInstanceId();
        Map<String, String> otherHandle = launch(executor, spec(other, "echo alive", "100m", "64Mi"));
        assertThat(waits.awaitReport(other, InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(waits.awaitOutput(executor, other, otherHandle, "alive")).isEqualTo("alive\n");
        assertThat(Long.parseLong(Files.readString(pidsCurrent).trim())).as("processes in the bomb's cgroup").isLessThanOrEqualTo(64);

        executor.terminate(bomb, bombHandle, Duration.ZERO, "defused");
        waits.awaitReport(bomb, InstanceReport.Exited.class);
        assertThat(gone(bombHandle)).isTrue();
    }

    /**
     * Without a uid or a PID namespace (a server that is not root has neither) a double fork and {@code setsid} leave
     * the instance's process tree: the cgroup keeps them, and a cancel kills them however fast they fork.
     */
    @Test
    void aDaemonThatKeepsForkingIsGoneAfterACancel() throws Exception {
        LocalProcessExecutor executor = newExecutor(Isolation.off(), 256);
        InstanceId id = newInstanceId();
        String daemon = "(setsid sh -c 'echo daemon $$; while :; do sleep 0.05 & wait $!; done' &); exec sleep 600";
        Map<String, String> handle = launch(executor, spec(id, daemon, "1", "128Mi"));
        String out = waits.awaitOutput(executor, id, handle, "daemon ");
        long daemonPid = Long.parseLong(out.substring(out.indexOf("daemon ") + 7).trim().split("\\s+")[0]);
        long daemonStart = ProcFs.stat(daemonPid).orElseThrow().startTime();

        executor.terminate(id, handle, Duration.ofSeconds(1), "cancelled");
        assertThat(waits.awaitReport(id, InstanceReport.Exited.class).terminated()).isTrue();
        assertThat(ProcFs.isAlive(daemonPid, daemonStart)).as("the daemon lives").isFalse();
        assertThat(gone(handle)).isTrue();
    }

    /**
     * GPUs as device nodes made in a test directory (two char devices that open without hardware, /dev/full's and
     * /dev/random's numbers), declared as a node's gpuDevices: an instance opens its own and not the other, however it
     * finds them (code that enumerates devices itself ignores CUDA_VISIBLE_DEVICES), nor by unmounting what covers it
     * in a user namespace of its own (cgroup v2's fence), and neither does its startup probe. Where a GPU exists, the
     * same fence holds its real device numbers.
     */
    @Test
    void anInstanceOpensItsOwnGpuAndNoOther() throws Exception {
        assumeTrue(cgroups.enforcement().enforces(Limit.devices), cgroups.enforcement().describe());
        Path devices = Files.createDirectories(dataDir.resolve("dev"));
        Path gpu0 = devices.resolve("gpu0");
        Path gpu1 = devices.resolve("gpu1");
        for (List<String> mknod : List.of(List.of("mknod", "-m", "666", gpu0.toString(), "c", "1", "7"),
                List.of("mknod", "-m", "666", gpu1.toString(), "c", "1", "8"))) {
            assertThat(new ProcessBuilder(mknod).inheritIO().start().waitFor()).isZero();
        }
        NodeInfo node = new NodeInfo("node-1", new Resources(32000, 256L << 30, 2, "test-gpu"), null, Map.of(), List.of(gpu0.toString(), gpu1.toString()));
        LocalProcessExecutor executor = newExecutor(isolation, 0, List.of(node));
        String tryBoth = "for g in " + gpu0 + " " + gpu1 + "; do if (: <\"$g\") 2>/dev/null"
                + " || unshare -rm sh -c 'umount \"$0\"; : <\"$0\"' \"$g\" 2>/dev/null; then echo \"open ${g##*/}\"; else echo \"fenced ${g##*/}\"; fi; done";
        String script = "while [ ! -e probed ]; do sleep 0.05; done; cat probed; " + tryBoth;
        String probe = "{ " + tryBoth + "; } | sed 's/^/probe: /' >probed.tmp && mv probed.tmp probed";
        Map<List<Integer>, String> expected = Map.of(List.of(0), "open gpu0\nfenced gpu1\n", List.of(1), "fenced gpu0\nopen gpu1\n",
                List.of(0, 1), "open gpu0\nopen gpu1\n", List.of(), "fenced gpu0\nfenced gpu1\n");
        for (Map.Entry<List<Integer>, String> given : expected.entrySet()) {
            InstanceId id = newInstanceId();
            LaunchSpec base = spec(id, script, "100m", "64Mi");
            // A probe gets its period to run, then is killed: 10 s, as the probe starts a dozen processes in the instance's
            // namespaces (with 1 s, a loaded machine killed every try and the instance waited for it for ever).
            LaunchSpec spec = new LaunchSpec(id, base.name(), base.node(), given.getKey(), base.command(), Map.of(), null, null, null,
                    new io.slipstream.api.spec.StartupProbe(List.of("sh", "-c", probe), 10, 5, 0), base.resources());
            Map<String, String> handle = launch(executor, spec);
            assertThat(waits.awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
            assertThat(InstanceWaits.log(executor, id, handle)).as("an instance given GPUs %s, and its probe", given.getKey())
                    .isEqualTo(given.getValue().replaceAll("(?m)^(.)", "probe: $1") + given.getValue());
        }
    }

    /**
     * The same fence on cgroup v2, whose devices controller is an eBPF program: each GPU that is not the instance's is
     * covered in a mount namespace of its own. This host's v2 hierarchy, where it has one, stands in.
     */
    @Test
    void onCgroupV2AnInstanceOpensItsOwnGpuAndNoOther() throws Exception {
        cgroups = unifiedCgroups();
        assertThat(cgroups.deviceFence()).isEqualTo(Cgroups.DeviceFence.mountNamespace);
        anInstanceOpensItsOwnGpuAndNoOther();
    }

    /** cgroups on this host's v2 hierarchy, whatever controllers it offers (a hybrid host's are v1's). */
    private Cgroups unifiedCgroups() throws IOException {
        CgroupMounts mounts = CgroupMounts.parse(Files.readString(Path.of("/proc/self/mountinfo")));
        assumeTrue(mounts.unified() != null, "this host mounts no cgroup v2 hierarchy");
        String offered = Files.readString(mounts.unified().resolve("cgroup.controllers")).trim();
        Cgroups unified = Cgroups.choose(Cgroups.Mode.auto, true, new CgroupMounts(Map.of(), mounts.unified()),
                offered.isEmpty() ? java.util.Set.of() : java.util.Set.of(offered.split("\\s+")), Cgroups.parentName(dataDir.resolve("instances")));
        System.out.println("cgroup v2 at " + mounts.unified() + ": " + unified.enforcement().describe());
        assertThat(unified.enforcement().version()).isEqualTo("v2");
        return unified;
    }

    /**
     * cgroup v2, where this host has its hierarchy (a hybrid host's {@code /sys/fs/cgroup/unified}, whose controllers
     * are all v1's): making, joining, killing through {@code cgroup.kill} and removing, with what it offers enforced.
     */
    @Test
    void onCgroupV2ADaemonIsGoneAfterACancelAndTheCgroupWithIt() throws Exception {
        cgroups = unifiedCgroups();
        aDaemonThatKeepsForkingIsGoneAfterACancel();
    }

    /** The kernel takes a borrower first, then a guaranteed instance, and the server (and its supervisors) last. */
    @Test
    void theServerIsTheOomKillersLastChoice() throws Exception {
        Path serverData = Files.createDirectories(dataDir.resolve("server"));
        Executor executor = new LocalExecutorFactory().create(LocalExecutorSettings.defaults(), context(serverData));
        executors.add(executor);
        executor.setListener(waits::report);
        int server = ProcFs.oomScoreAdj(ProcessHandle.current().pid()).orElseThrow();
        String script = "cat /proc/self/oom_score_adj; echo 0 > /proc/self/oom_score_adj 2>/dev/null && echo lowered || echo refused";
        InstanceId guaranteed = newInstanceId();
        InstanceId borrowed = newInstanceId();
        Map<String, String> guaranteedHandle = launch(executor, spec(guaranteed, script, "100m", "64Mi"));
        Map<String, String> borrowedHandle = launch(executor, spec(borrowed, script, "100m", "64Mi").withBorrowed(true));
        waits.awaitReport(guaranteed, InstanceReport.Exited.class);
        waits.awaitReport(borrowed, InstanceReport.Exited.class);
        String guaranteedOut = InstanceWaits.log(executor, guaranteed, guaranteedHandle);
        String borrowedOut = InstanceWaits.log(executor, borrowed, borrowedHandle);

        assertThat(guaranteedOut).startsWith(InstanceStart.GUARANTEED_OOM_SCORE_ADJ + "\n");
        assertThat(borrowedOut).startsWith(InstanceStart.BORROWED_OOM_SCORE_ADJ + "\n");
        assertThat(server).isLessThan(InstanceStart.GUARANTEED_OOM_SCORE_ADJ);
        if (hasSysResource()) {
            // The score root set is the least the instance's uid may set.
            assertThat(server).isEqualTo(InstanceStart.SERVER_OOM_SCORE_ADJ);
            assertThat(guaranteedOut).endsWith("refused\n");
            assertThat(borrowedOut).endsWith("refused\n");
        } else {
            System.out.println("root here lacks CAP_SYS_RESOURCE: the server keeps its OOM score " + server + ", and instances may lower theirs to it");
        }
    }

    /** Whether this process (root) may lower OOM scores: CAP_SYS_RESOURCE (24), which some sandboxes take from root. */
    private static boolean hasSysResource() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("CapEff:")) {
                return (Long.parseUnsignedLong(line.substring(7).trim(), 16) & (1L << 24)) != 0;
            }
        }
        return false;
    }

    /** The machine's idle time so far, in USER_HZ ticks (idle and iowait of /proc/stat's first line). */
    private static long idleJiffies() throws Exception {
        String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        return Long.parseLong(cpu[4]) + Long.parseLong(cpu[5]);
    }

    /** {@code nr_periods} and {@code nr_throttled} of the instance's {@code cpu.stat}: CFS periods, and those its quota ended. */
    private long[] throttling(Map<String, String> handle) throws Exception {
        return new long[] {keyed(cgroupFile(handle, "cpu.stat"), "nr_periods"), keyed(cgroupFile(handle, "cpu.stat"), "nr_throttled")};
    }

    private static long keyed(Path file, String key) throws Exception {
        return Files.readAllLines(file).stream().filter(line -> line.startsWith(key + " ")).mapToLong(line -> Long.parseLong(line.split(" ")[1]))
                .findFirst().orElseThrow(() -> new AssertionError("no " + key + " in " + file));
    }

    /** The share of the CFS periods between two readings in which the quota stopped the instance. */
    private static double throttledShare(long[] before, long[] after) {
        long periods = after[0] - before[0];
        return periods <= 0 ? 0 : (double) (after[1] - before[1]) / periods;
    }

    private long cpuNanos(Map<String, String> handle) throws Exception {
        CgroupUsage usage = cgroups.existing(handle.get("cgroup")).usage();
        assertThat(usage.cpuNanos()).isNotNegative();
        return usage.cpuNanos();
    }

    /** One of the instance's cgroup files, in whichever hierarchy has it. */
    private Path cgroupFile(Map<String, String> handle, String name) {
        return cgroups.existing(handle.get("cgroup")).procsFiles().stream().map(procs -> procs.resolveSibling(name)).filter(Files::exists)
                .findFirst().orElseThrow(() -> new AssertionError("no " + name + " in " + handle.get("cgroup")));
    }

    /** Whether the instance's cgroup is gone (removed once its end was reported). */
    private boolean gone(Map<String, String> handle) throws Exception {
        CgroupMounts mounts = CgroupMounts.parse(Files.readString(Path.of("/proc/self/mountinfo")));
        List<Path> hierarchies = new ArrayList<>(mounts.v1().values());
        if (mounts.unified() != null) {
            hierarchies.add(mounts.unified());
        }
        return hierarchies.stream().noneMatch(mount -> Files.exists(mount.resolve(handle.get("cgroup"))));
    }

    private static ExecutorContext context(Path dataDir) {
        return new ExecutorContext() {
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
    }

}
