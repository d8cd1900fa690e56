package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.StartupProbe;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.cgroup.CgroupMounts;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.cgroup.InstanceCgroup;
import io.slipstream.executor.local.cgroup.Limit;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile tenant against the instance's cgroup (v1 here: memory, cpu, cpuacct, pids, freezer, devices), as root with
 * real processes, through the executor: a job's command that tries to leave its cgroup (the other cgroups' files, user
 * and cgroup namespaces, its own cgroup mounts, setsid and double forks), to reach a GPU it was not given by another
 * path or by making the node again, to lower the OOM score root set, to outlive a cancel from a nested PID namespace,
 * and a startup probe (the job's too) that runs beside the instance. Skipped without root or without the controllers.
 */
@Timeout(180)
class CgroupAttackTest {
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final AtomicInteger RUNS = new AtomicInteger();

    @TempDir
    Path dataDir;

    private Cgroups cgroups;
    private Isolation isolation;
    private final List<Executor> executors = new ArrayList<>();
    private final List<Map<String, String>> launched = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Set<Integer> uidsSeen = ConcurrentHashMap.newKeySet();
    private final List<Path> madeOutside = new java.util.concurrent.CopyOnWriteArrayList<>();
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
        // Whatever a failed test left: through the cgroups, then by uid (a hole would leave processes outside).
        for (Map<String, String> handle : launched) {
            InstanceCgroup cgroup = cgroups.existing(handle.get("cgroup"));
            for (int round = 0; cgroup != null && cgroup.killAll() > 0 && round < 500; round++) {
                TimeUnit.MILLISECONDS.sleep(10);
            }
        }
        for (int uid : uidsSeen) {
            for (int round = 0; !ProcFs.ownedBy(uid).isEmpty() && round < 500; round++) {
                ProcFs.ownedBy(uid).forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
                TimeUnit.MILLISECONDS.sleep(10);
            }
        }
        executors.forEach(Executor::close);
        for (Map<String, String> handle : launched) {
            InstanceCgroup cgroup = cgroups.existing(handle.get("cgroup"));
            if (cgroup != null) {
                cgroup.remove();
            }
        }
        cgroups.removeParentIfEmpty();
        for (Path path : madeOutside) {
            new ProcessBuilder("rm", "-rf", "--one-file-system", path.toString()).inheritIO().start().waitFor();
        }
    }

    /** What starts the instances: the launcher binary where the build made one (ShellLaunchedCgroupAttackTest: the shell). */
    protected SupervisorProgram.Mode launcher() {
        return BuiltProgram.mode();
    }

    private LocalProcessExecutor newExecutor(int maxProcesses, List<NodeInfo> nodes, List<Path> sharedPlaces) throws Exception {
        LocalProcessExecutor executor = new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV,
                isolation, null, 0, maxProcesses, Clock.systemUTC(), sharedPlaces, ImageSettings.DEFAULTS, launcher(), cgroups, false);
        executor.setListener(waits::report);
        executors.add(executor);
        return executor;
    }

    private LocalProcessExecutor newExecutor(int maxProcesses) throws Exception {
        return newExecutor(maxProcesses, List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of())),
                List.of(Files.createDirectories(dataDir.resolve("shared-tmp"))));
    }

    private Map<String, String> launch(Executor executor, LaunchSpec spec) {
        Map<String, String> handle = executor.launch(spec);
        launched.add(handle);
        return handle;
    }

    private static InstanceId newInstanceId() {
        return new InstanceId(new RunId("attack-" + RUNS.incrementAndGet()), 1, 0);
    }

    private static LaunchSpec spec(InstanceId id, String script, String memory) {
        return spec(id, script, memory, List.of(), null);
    }

    private static LaunchSpec spec(InstanceId id, String script, String memory, List<Integer> gpus, StartupProbe probe) {
        Resources resources = new Resources(io.slipstream.api.spec.Quantities.parseMilliCpu("500m"), io.slipstream.api.spec.Quantities.parseBytes(memory),
                0, null);
        return new LaunchSpec(id, "main-0", "node-1", gpus, List.of("sh", "-c", script), Map.of(), null, null, null, probe, resources);
    }

    /**
     * Every way out of a v1 cgroup that a process without capabilities has: writing itself (or 0) into any cgroup.procs
     * or tasks file of every hierarchy (the roots, the server's parent, a neighbour's cgroup), making a child cgroup or a
     * FIFO there, the release agent; then the same from a user namespace where it is root, with a cgroup namespace of its
     * own, and mounting the hierarchies itself (v1, and v2 where a user namespace may). A daemon that double-forked into
     * a session of its own before all that is still inside; a cancel ends everything and removes the cgroup.
     */
    @Test
    void noProcessOfAnInstanceLeavesItsCgroup() throws Exception {
        LocalProcessExecutor executor = newExecutor(256);
        InstanceId neighbour = newInstanceId();
        Map<String, String> neighbourHandle = launch(executor, spec(neighbour, "echo up; exec sleep 600", "64Mi"));
        waits.awaitOutput(executor, neighbour, neighbourHandle, "up");

        String tryAll = String.join("\n",
                "me=$1",
                "for f in $(find /sys/fs/cgroup -maxdepth 4 \\( -name cgroup.procs -o -name tasks -o -name release_agent"
                        + " -o -name notify_on_release -o -name cgroup.subtree_control \\) 2>/dev/null); do",
                "  for v in \"$me\" 0; do if (printf '%s\\n' \"$v\" >\"$f\") 2>/dev/null; then echo \"ESCAPED: wrote $v to $f\"; fi; done",
                "  d=${f%/*}",
                "  if mkdir \"$d/attack-$me\" 2>/dev/null; then echo \"ESCAPED: made $d/attack-$me\"; rmdir \"$d/attack-$me\"; fi",
                "  if mkfifo \"$d/fifo-$me\" 2>/dev/null; then echo \"ESCAPED: made a FIFO in $d\"; fi",
                "done",
                // Its own cgroup's limits, freezer and devices, in every hierarchy it is in.
                "while IFS=: read -r n ctl path; do for ctl in $(echo \"$ctl\" | tr , ' '); do",
                "  c=/sys/fs/cgroup/$ctl$path; [ -d \"$c\" ] || continue",
                "  for f in memory.limit_in_bytes:-1 memory.memsw.limit_in_bytes:-1 memory.oom_control:1 pids.max:max cpu.cfs_quota_us:-1"
                        + " freezer.state:FROZEN devices.allow:a notify_on_release:1; do",
                "    if [ -e \"$c/${f%%:*}\" ] && (printf '%s\\n' \"${f#*:}\" >\"$c/${f%%:*}\") 2>/dev/null; then echo \"ESCAPED: wrote ${f#*:} to $c/${f%%:*}\"; fi",
                "  done",
                "done; done </proc/self/cgroup",
                "");
        String script = String.join("\n",
                "id -u | sed 's/^/uid /'",
                // Its pid as the host sees it (the first of NSpid), read by the shell itself.
                "(setsid sh -c 'while read -r k v r; do [ \"$k\" = NSpid: ] && echo daemon $v; done </proc/self/status; exec sleep 600' &)",
                "sleep 0.2",
                "cat > ./try-all.sh <<'EOF'",
                tryAll + "EOF",
                "sh ./try-all.sh $$",
                // Root in a user namespace of its own, with a cgroup namespace and mounts of its own.
                "unshare -U -r -C -m sh -c '",
                "  sh ./try-all.sh $$",
                "  mkdir -p ./v1 ./v2",
                "  for c in memory pids freezer cpu,cpuacct devices; do",
                // A cgroup namespace's root is its own cgroup: a mount of it shows that cgroup's files, still the host root's.
                "    if mount -t cgroup -o $c none ./v1 2>/dev/null; then echo \"mounted v1 $c: its own cgroup\";",
                "      for f in ./v1/cgroup.procs ./v1/tasks ./v1/release_agent ./v1/notify_on_release ./v1/memory.limit_in_bytes ./v1/pids.max"
                        + " ./v1/cpu.cfs_quota_us ./v1/freezer.state ./v1/devices.allow; do",
                "        [ -e $f ] && (echo 0 >$f) 2>/dev/null && echo \"ESCAPED: wrote 0 to $f in a mount of its own\"; done",
                "      mkdir ./v1/child 2>/dev/null && echo \"ESCAPED: made a child cgroup in a mount of its own\"; umount ./v1; fi",
                "  done",
                "  if mount -t cgroup2 none ./v2 2>/dev/null; then echo \"mounted v2 (no controller of ours)\";",
                "    for f in $(find ./v2 -name cgroup.procs); do (echo 0 >$f) 2>/dev/null && echo \"ESCAPED: joined $f\"; done; fi",
                "  true",
                "' && echo userns-tried || echo userns-refused",
                "echo attacks-done",
                "exec sleep 600");
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, script, "128Mi"));
        String out = waits.awaitOutput(executor, id, handle, "attacks-done");
        System.out.println(out);
        int uid = Integer.parseInt(line(out, "uid "));
        uidsSeen.add(uid);
        long daemonPid = Long.parseLong(line(out, "daemon "));

        assertThat(out).doesNotContain("ESCAPED").contains("userns-tried");
        List<Long> processes = ProcFs.ownedBy(uid);
        assertThat(processes).contains(daemonPid);
        for (long pid : processes) {
            assertThat(cgroupsOf(pid)).as("the cgroups of %s", pid).allSatisfy(path -> assertThat(path).endsWith("/" + handle.get("cgroup")));
        }
        assertThat(ProcFs.isAlive(Long.parseLong(neighbourHandle.get("pid")), Long.parseLong(neighbourHandle.get("pidStart")))).isTrue();

        executor.terminate(id, handle, Duration.ofSeconds(1), "cancelled");
        assertThat(waits.awaitReport(id, InstanceReport.Exited.class).terminated()).isTrue();
        assertThat(ProcFs.ownedBy(uid)).as("processes of the run's uid after the cancel").isEmpty();
        assertThat(gone(handle)).isTrue();
        executor.terminate(neighbour, neighbourHandle, Duration.ZERO, "test over");
        waits.awaitReport(neighbour, InstanceReport.Exited.class);
        assertThat(gone(neighbourHandle)).isTrue();
    }

    /**
     * A daemon in a user and PID namespace of its own (where it is PID 1 and root), one that keeps forking in a new
     * session, and one that keeps changing its pid: a cancel ends them all however they hide.
     */
    @Test
    void nothingInANestedPidNamespaceSurvivesACancel() throws Exception {
        LocalProcessExecutor executor = newExecutor(512);
        String script = String.join("\n",
                "id -u | sed 's/^/uid /'",
                "(unshare -U -r -p -f --mount-proc sh -c 'while :; do sleep 0.05 & wait $!; done' >/dev/null 2>&1 &)",
                "(setsid sh -c 'while :; do (setsid sleep 600 &); sleep 0.01; done' >/dev/null 2>&1 &)",
                "(setsid sh -c 'while :; do sh -c \"exit 0\"; done' >/dev/null 2>&1 &)",
                "sleep 0.5; echo hidden",
                "exec sleep 600");
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, script, "256Mi"));
        String out = waits.awaitOutput(executor, id, handle, "hidden");
        int uid = Integer.parseInt(line(out, "uid "));
        uidsSeen.add(uid);
        assertThat(ProcFs.ownedBy(uid).size()).isGreaterThan(5);
        for (long pid : ProcFs.ownedBy(uid)) {
            List<String> paths = cgroupsOf(pid);
            if (!paths.isEmpty()) { // a process gone meanwhile has no cgroups to show
                assertThat(paths).allSatisfy(path -> assertThat(path).endsWith("/" + handle.get("cgroup")));
            }
        }
        executor.terminate(id, handle, Duration.ofSeconds(1), "cancelled");
        assertThat(waits.awaitReport(id, InstanceReport.Exited.class).terminated()).isTrue();
        assertThat(ProcFs.ownedBy(uid)).as("processes of the run's uid after the cancel").isEmpty();
        assertThat(gone(handle)).isTrue();
    }

    /**
     * A GPU it was not given, by every other way to its device number: another node of the same numbers ({@code
     * /dev/random} here: the test's "GPU" has its numbers), a symbolic link, {@code /dev/char}, a node it makes itself
     * (without {@code CAP_MKNOD}, and as root of a user namespace). Its own GPU opens.
     */
    @Test
    void aGpuNotGivenCannotBeOpenedByAnyPath() throws Exception {
        assumeTrue(cgroups.enforcement().enforces(Limit.devices), cgroups.enforcement().describe());
        Path devices = Files.createDirectories(dataDir.resolve("dev"));
        Path gpu0 = devices.resolve("gpu0");
        Path gpu1 = devices.resolve("gpu1");
        for (List<String> mknod : List.of(List.of("mknod", "-m", "666", gpu0.toString(), "c", "1", "7"),
                List.of("mknod", "-m", "666", gpu1.toString(), "c", "1", "8"))) {
            assertThat(new ProcessBuilder(mknod).inheritIO().start().waitFor()).isZero();
        }
        NodeInfo node = new NodeInfo("node-1", new Resources(32000, 256L << 30, 2, "test-gpu"), null, Map.of(), List.of(gpu0.toString(), gpu1.toString()));
        LocalProcessExecutor executor = newExecutor(256, List.of(node), List.of(Files.createDirectories(dataDir.resolve("shared-tmp"))));
        String script = String.join("\n",
                "try() { if (: <\"$2\") 2>/dev/null; then echo \"OPENED $1\"; else echo \"fenced $1\"; fi; }",
                "try own " + gpu0,
                "try other " + gpu1,
                "try same-numbers /dev/random",
                "try dev-char /dev/char/1:8",
                "ln -s " + gpu1 + " ./link && try link ./link",
                "mknod ./made c 1 8 2>/dev/null && try made ./made",
                "unshare -U -r sh -c 'mknod ./made-ns c 1 8' 2>/dev/null && try made-in-userns ./made-ns",
                "unshare -U -r -m sh -c 'mount -t tmpfs none ./ && mknod ./n c 1 8 && : <./n && echo \"OPENED in a mount of its own\"' 2>/dev/null",
                "echo done");
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, script, "64Mi", List.of(0), null));
        assertThat(waits.awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        String out = InstanceWaits.log(executor, id, handle);
        System.out.println(out);
        assertThat(out).contains("OPENED own\n", "fenced other\n", "fenced same-numbers\n", "done\n");
        assertThat(out.replace("OPENED own\n", "")).doesNotContain("OPENED");
    }

    /**
     * The OOM score root set (500 for a guaranteed instance) is the least its uid may set, through {@code oom_score_adj},
     * the legacy {@code oom_adj}, and its init's file. Where root lacks {@code CAP_SYS_RESOURCE} (this sandbox), root
     * cannot make its score a floor, and the instance may go down to what the server kept, never below.
     */
    @Test
    void theOomScoreCannotBeLoweredBelowWhatRootSet() throws Exception {
        LocalProcessExecutor executor = newExecutor(256);
        String script = String.join("\n",
                "cat /proc/self/oom_score_adj",
                "for v in -1000 -900 -1 0 499; do (printf '%s\\n' $v >/proc/self/oom_score_adj) 2>/dev/null && echo \"lowered to $v\"; done",
                "(printf '%s\\n' -17 >/proc/self/oom_adj) 2>/dev/null && echo 'lowered to -1000 (oom_adj)'",
                "(printf '%s\\n' -1000 >/proc/1/oom_score_adj) 2>/dev/null && echo 'lowered to -1000 (init)'",
                "echo done");
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, script, "64Mi"));
        assertThat(waits.awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        String out = InstanceWaits.log(executor, id, handle);
        System.out.println(out);
        assertThat(out).startsWith(InstanceStart.GUARANTEED_OOM_SCORE_ADJ + "\n");
        int floor = hasSysResource() ? InstanceStart.GUARANTEED_OOM_SCORE_ADJ : ProcFs.oomScoreAdj(ProcessHandle.current().pid()).orElseThrow();
        for (String line : out.lines().filter(l -> l.startsWith("lowered to ")).toList()) {
            assertThat(Integer.parseInt(line.substring(11).split(" ")[0])).as(line).isGreaterThanOrEqualTo(floor);
        }
    }

    /**
     * A startup probe is the job's command too, and runs as long as its period while the instance lives: it must be held
     * to the instance's cgroup (memory, CPU, processes, GPUs, the kill on stop) and OOM score, as the instance is. Here
     * the probe records where it runs and allocates twice the instance's memory.
     */
    @Test
    void aStartupProbeIsHeldToItsInstancesCgroupAndOomScore() throws Exception {
        LocalProcessExecutor executor = newExecutor(256);
        String probe = "cat /proc/self/cgroup >seen.tmp; echo \"oom $(cat /proc/self/oom_score_adj)\" >>seen.tmp;"
                + " python3 -c \"x = b'x' * (128 << 20)\" && echo 'probe allocated 128Mi' >>seen.tmp; mv seen.tmp seen";
        String script = "while [ ! -e seen ]; do sleep 0.1; done; cat seen; echo done; exec sleep 600";
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, script, "64Mi", List.of(), new StartupProbe(List.of("sh", "-c", probe), 5, 3, 0)));
        String out = waits.awaitOutput(executor, id, handle, "done");
        System.out.println(out);
        executor.terminate(id, handle, Duration.ZERO, "test over");
        waits.awaitReport(id, InstanceReport.Exited.class);
        List<String> memory = out.lines().filter(l -> l.matches("\\d+:([^:]*,)?memory(,[^:]*)?:.*")).toList();
        assertThat(memory).as("the probe's memory cgroup").singleElement().satisfies(l -> assertThat(l).endsWith("/" + handle.get("cgroup")));
        assertThat(out).as("the probe's OOM score").contains("oom " + InstanceStart.GUARANTEED_OOM_SCORE_ADJ + "\n");
        assertThat(out).as("a probe past the instance's memory").doesNotContain("probe allocated");
    }

    /**
     * Instances together may not take the machine's last pids: each is held to its own process limit, but nothing holds
     * all of them, so a few runs at their limit (an eighth of pid_max by default) leave the server and every other run
     * unable to fork. The server's parent cgroup must keep a share of pid_max for the host.
     */
    @Test
    void theServersParentCgroupKeepsPidsForTheHost() throws Exception {
        LocalProcessExecutor executor = newExecutor(64);
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, "echo up; exec sleep 600", "64Mi"));
        waits.awaitOutput(executor, id, handle, "up");
        Path pidsMax = cgroupFile(handle, "pids.max").getParent().getParent().resolve("pids.max");
        String value = Files.readString(pidsMax).trim();
        long pidMax = ProcFs.pidMax().orElseThrow();
        long threadsMax;
        try (java.io.InputStream in = Files.newInputStream(Path.of("/proc/sys/kernel/threads-max"))) {
            threadsMax = Long.parseLong(new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim());
        }
        executor.terminate(id, handle, Duration.ZERO, "test over");
        waits.awaitReport(id, InstanceReport.Exited.class);
        assertThat(value).as(pidsMax + " (pid_max " + pidMax + ", threads-max " + threadsMax + ")").matches("\\d+");
        assertThat(Long.parseLong(value)).isLessThanOrEqualTo(Math.min(pidMax, threadsMax) * 3 / 4);
    }

    /**
     * Memory of a tmpfs ({@code /dev/shm}) is charged to the cgroup that wrote it, and outlives it: an instance within its
     * limit that leaves a file there holds that memory after it ended, outside every limit, until its uid is given again
     * (after the run's retention). Runs that do it one after the other take the machine's memory. What the run's uid left
     * in the shared places must go when the run's last instance ended.
     */
    @Test
    void memoryAnInstanceLeftInATmpfsGoesWithItsRun() throws Exception {
        Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm), "no /dev/shm");
        Path place = Files.createDirectory(shm.resolve("slipstream-attack-" + ProcessHandle.current().pid() + "-" + RUNS.incrementAndGet()));
        madeOutside.add(place);
        Files.setPosixFilePermissions(place, PosixFilePermissions.fromString("rwxrwxrwx"));
        new ProcessBuilder("chmod", "+t", place.toString()).start().waitFor();
        LocalProcessExecutor executor = newExecutor(64,
                List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of())), List.of(place));
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, "id -u | sed 's/^/uid /'; head -c 40000000 /dev/zero > " + place + "/kept-$(id -u); echo kept",
                "64Mi"));
        assertThat(waits.awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        String out = InstanceWaits.log(executor, id, handle);
        uidsSeen.add(Integer.parseInt(line(out, "uid ")));
        assertThat(out).contains("kept");
        try (var left = Files.list(place)) {
            assertThat(left.toList()).as("what the ended run left in a tmpfs").isEmpty();
        }
    }

    /** The first line of {@code out} that starts with {@code prefix}, without it. */
    private static String line(String out, String prefix) {
        return out.lines().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow(() -> new AssertionError("no '" + prefix + "' in " + out))
                .substring(prefix.length()).trim();
    }

    /**
     * The process's cgroups while it lives: v1 moves a task to the root cgroups as it exits, so a process seen in "/"
     * everywhere is waited for, and counts only if it is still there (the attacks fork short-lived processes all along).
     */
    private static List<String> cgroupsOf(long pid) throws Exception {
        List<String> paths = cgroupPaths(pid);
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!paths.isEmpty() && paths.stream().allMatch("/"::equals) && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(20);
            paths = cgroupPaths(pid);
        }
        return paths;
    }

    /** The process's cgroup in each v1 hierarchy the executor uses (memory, cpu, pids, freezer); none once it is gone. */
    private static List<String> cgroupPaths(long pid) throws Exception {
        List<String> paths = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/cgroup"))) {
                String[] parts = line.split(":", 3);
                if (parts.length == 3 && List.of(parts[1].split(",")).stream().anyMatch(Set.of("memory", "pids", "freezer", "cpu")::contains)) {
                    paths.add(parts[2]);
                }
            }
        } catch (java.nio.file.NoSuchFileException e) {
            return List.of();
        } catch (java.io.IOException e) {
            // A process that exits between the open and the read of its cgroup file fails the read with ESRCH.
            boolean gone = "No such process".equals(e.getMessage()) || ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
            if (!gone) {
                throw e;
            }
            return List.of();
        }
        return paths;
    }

    /** Whether this process (root) may lower OOM scores: CAP_SYS_RESOURCE (24). */
    private static boolean hasSysResource() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("CapEff:")) {
                return (Long.parseUnsignedLong(line.substring(7).trim(), 16) & (1L << 24)) != 0;
            }
        }
        return false;
    }

    private Path cgroupFile(Map<String, String> handle, String name) {
        return cgroups.existing(handle.get("cgroup")).procsFiles().stream().map(procs -> procs.resolveSibling(name)).filter(Files::exists)
                .findFirst().orElseThrow(() -> new AssertionError("no " + name + " in " + handle.get("cgroup")));
    }

    private boolean gone(Map<String, String> handle) throws Exception {
        CgroupMounts mounts = CgroupMounts.parse(Files.readString(Path.of("/proc/self/mountinfo")));
        List<Path> hierarchies = new ArrayList<>(mounts.v1().values());
        if (mounts.unified() != null) {
            hierarchies.add(mounts.unified());
        }
        return hierarchies.stream().noneMatch(mount -> Files.exists(mount.resolve(handle.get("cgroup"))));
    }

}
