package io.slipstream.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Slurm cluster on this machine for one test class: {@code slurmctld}, four {@code slurmd -N nodeNN} and a
 * {@code munged} of its own (its own key and socket, which slurm.conf's {@code AuthInfo} names: two clusters of two
 * builds or modules never share one that the other stops), each daemon on a free port, with their configuration, state
 * and logs in a temporary directory. GPU nodes (node01-03; with {@code new SlurmCluster(4)}, all four) have 8 CPUs,
 * 8000 MiB and 4 GPUs ({@code gpu:tesla}, emulated by device files that are /dev/null's twins, feature {@code ib}); a
 * node without GPUs (node04 by default) has 4 CPUs and 4000 MiB (feature {@code cpuonly}). Everything it started is
 * stopped after the class, even when it fails, and any process of the cluster left (a job's) is killed: it is found by
 * the {@code SLURM_CONF} in its environment.
 *
 * <p>Needs root and Slurm's and munge's programs (Debian's slurm-wlm and munge, as CI installs them); without them the
 * class is skipped, saying why.
 *
 * <p>Tuned for quick tests: proctrack/pgid and task/none (no cgroups: several slurmd share this machine), MinJobAge 10 s,
 * KillWait 2 s, MessageTimeout 5 s, and no pause between scheduling passes ({@code sched_min_interval=0}, which is 2 s by
 * default, and {@code batch_sched_delay=0}, 3 s): a job starts about half a second after it is submitted.
 */
public final class SlurmCluster implements BeforeAllCallback, AfterAllCallback {
    public static final String PARTITION = "slipstream";
    public static final int NODES = 4;
    /** The GPUs, CPUs and memory (MiB) of each GPU node. */
    public static final int GPUS_PER_NODE = 4;
    public static final int GPU_NODE_CPUS = 8;
    public static final int GPU_NODE_MEMORY_MIB = 8000;
    private static final List<String> PROGRAMS = List.of("slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo", "scontrol", "munged",
            "munge");
    private static final Duration START = Duration.ofSeconds(60);

    private final int gpuNodes;
    /** Whether slurmctld takes jobs into the partition from root alone (docs/slurm.md's job_submit.lua). */
    private final boolean rootSubmitsOnly;
    private Path dir;
    private Path conf;
    private Path mungeSocket;
    private Long munged;
    private final List<Long> daemons = new ArrayList<>();

    /** Nodes node01-03 with GPUs, node04 without. */
    public SlurmCluster() {
        this(NODES - 1);
    }

    /** The first {@code gpuNodes} nodes with GPUs, the others without. */
    public SlurmCluster(int gpuNodes) {
        this(gpuNodes, false);
    }

    /**
     * The first {@code gpuNodes} nodes with GPUs; {@code rootSubmitsOnly}: slurmctld refuses a job into the partition
     * that root did not submit (the job_submit.lua docs/slurm.md gives admins), so that only the server's jobs go there.
     */
    public SlurmCluster(int gpuNodes, boolean rootSubmitsOnly) {
        if (gpuNodes < 0 || gpuNodes > NODES) {
            throw new IllegalArgumentException("gpuNodes must be between 0 and " + NODES);
        }
        this.gpuNodes = gpuNodes;
        this.rootSubmitsOnly = rootSubmitsOnly;
    }

    /** Why this machine cannot run the cluster, or {@code null}. */
    public static String missing() {
        if (!runningAsRoot()) {
            return "the Slurm cluster's daemons (slurmd, munged) need root";
        }
        List<String> absent = PROGRAMS.stream().filter(program -> !onPath(program)).toList();
        return absent.isEmpty() ? null : "Slurm or munge is not installed (apt-get install slurm-wlm munge): no " + String.join(", ", absent);
    }

    private static boolean runningAsRoot() {
        try {
            return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static boolean onPath(String program) {
        for (String entry : (System.getenv("PATH") + ":/usr/sbin:/sbin").split(":")) {
            if (!entry.isEmpty() && Files.isExecutable(Path.of(entry, program))) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        String missing = missing();
        Assumptions.assumeTrue(missing == null, () -> "skipped: " + missing);
        try {
            start();
        } catch (Exception | AssertionError e) {
            stop();
            throw e;
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        stop();
    }

    /** The slurm.conf every Slurm command of the tests reads (as {@code SLURM_CONF}, or {@code slurm.slurmConf}). */
    public Path conf() {
        return conf;
    }

    private void start() throws Exception {
        dir = Files.createTempDirectory("slurm-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        for (String sub : List.of("state", "dev")) {
            Files.createDirectories(dir.resolve(sub));
        }
        startMunge(); // before conf is set: munged need not carry the cluster's SLURM_CONF
        conf = dir.resolve("slurm.conf");
        List<String> gpus = emulatedGpus();
        List<Integer> ports = freePorts(NODES + 1);
        StringBuilder text = new StringBuilder("""
                ClusterName=slipstream-test
                SlurmctldHost=localhost
                SlurmUser=root
                AuthType=auth/munge
                CredType=cred/munge
                SlurmdParameters=config_overrides
                ProctrackType=proctrack/pgid
                TaskPlugin=task/none
                SchedulerType=sched/backfill
                SchedulerParameters=sched_min_interval=0,batch_sched_delay=0
                SelectType=select/cons_tres
                SelectTypeParameters=CR_Core_Memory
                GresTypes=gpu
                MpiDefault=none
                JobAcctGatherType=jobacct_gather/none
                AccountingStorageType=accounting_storage/none
                JobCompType=jobcomp/none
                PreemptType=preempt/none
                ReturnToService=2
                MinJobAge=10
                KillWait=2
                MessageTimeout=5
                DefMemPerCPU=100
                TopologyPlugin=topology/tree
                """);
        text.append("AuthInfo=socket=").append(mungeSocket).append('\n');
        text.append("SlurmctldPort=").append(ports.get(0)).append('\n');
        text.append("StateSaveLocation=").append(dir.resolve("state")).append('\n');
        text.append("SlurmdSpoolDir=").append(dir.resolve("spool")).append("/%n\n");
        text.append("SlurmctldPidFile=").append(dir.resolve("slurmctld.pid")).append('\n');
        text.append("SlurmdPidFile=").append(dir.resolve("slurmd-%n.pid")).append('\n');
        text.append("SlurmctldLogFile=").append(dir.resolve("slurmctld.log")).append('\n');
        text.append("SlurmdLogFile=").append(dir.resolve("slurmd-%n.log")).append('\n');
        for (int i = 1; i <= NODES; i++) {
            String node = node(i);
            Files.createDirectories(dir.resolve("spool").resolve(node));
            boolean gpuNode = i <= gpuNodes;
            text.append("NodeName=").append(node).append(" NodeHostname=localhost NodeAddr=127.0.0.1")
                    .append(gpuNode ? " CPUs=" + GPU_NODE_CPUS + " RealMemory=" + GPU_NODE_MEMORY_MIB + " Gres=gpu:tesla:" + GPUS_PER_NODE
                            + " Feature=ib" : " CPUs=4 RealMemory=4000 Feature=cpuonly")
                    .append(" Port=").append(ports.get(i)).append('\n');
        }
        text.append("PartitionName=" + PARTITION + " Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO PreemptMode=OFF\n");
        if (rootSubmitsOnly) {
            text.append("JobSubmitPlugins=lua\n");
            try (var lua = SlurmCluster.class.getResourceAsStream("job_submit.lua")) {
                Files.write(dir.resolve("job_submit.lua"), lua.readAllBytes()); // beside slurm.conf, where slurmctld looks
            }
        }
        Files.writeString(conf, text.toString());
        // A network tree (topology.conf beside slurm.conf): two leaf switches of two nodes each, under one spine.
        Files.writeString(dir.resolve("topology.conf"), "SwitchName=leaf1 Nodes=" + node(1) + "," + node(2) + "\nSwitchName=leaf2 Nodes="
                + node(3) + "," + node(4) + "\nSwitchName=spine Switches=leaf[1-2]\n");
        Files.writeString(dir.resolve("gres.conf"), gpuNodes == 0 ? "AutoDetect=off\n" : "AutoDetect=off\nNodeName=node[01-" + node(gpuNodes)
                .substring(4) + "] Name=gpu Type=tesla File=" + gpus.get(0).replace("gpu0", "gpu[0-" + (GPUS_PER_NODE - 1) + "]") + "\n");
        daemon("slurmctld", "-i");
        for (int i = 1; i <= NODES; i++) {
            daemon("slurmd", "-N", node(i));
        }
        awaitIdleNodes();
        for (String pidFile : pidFiles()) {
            daemons.add(Long.parseLong(Files.readString(dir.resolve(pidFile)).trim()));
        }
    }

    /** The name of node {@code i} (1 to {@link #NODES}). */
    public static String node(int i) {
        return String.format("node%02d", i);
    }

    private List<String> pidFiles() {
        List<String> files = new ArrayList<>(List.of("slurmctld.pid"));
        for (int i = 1; i <= NODES; i++) {
            files.add("slurmd-" + node(i) + ".pid");
        }
        return files;
    }

    /** Four character devices that are /dev/null's twins (GRES files must be devices); plain files where mknod is not allowed. */
    private List<String> emulatedGpus() throws Exception {
        List<String> files = new ArrayList<>();
        for (int i = 0; i < GPUS_PER_NODE; i++) {
            Path device = dir.resolve("dev").resolve("gpu" + i);
            if (command(List.of("mknod", "-m", "666", device.toString(), "c", "1", "3"), Duration.ofSeconds(10)) != 0) {
                Files.writeString(device, ""); // Slurm complains in its log, and still counts it
            }
            files.add(device.toString());
        }
        return files;
    }

    /**
     * A munged of this cluster's own, with a random key, on a socket in its directory: one that was running already, or
     * that another cluster started, could be stopped under this one.
     */
    private void startMunge() throws Exception {
        Path key = dir.resolve("munge.key");
        byte[] random = new byte[1024];
        new java.security.SecureRandom().nextBytes(random);
        Files.write(key, random);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("r--------"));
        mungeSocket = dir.resolve("munge.socket");
        Path pidFile = dir.resolve("munged.pid");
        int exit = command(List.of("munged", "--force", "--socket=" + mungeSocket, "--key-file=" + key, "--pid-file=" + pidFile,
                "--log-file=" + dir.resolve("munged.log"), "--seed-file=" + dir.resolve("munged.seed")), Duration.ofSeconds(20));
        assertThat(exit).as("munged starts; see " + dir.resolve("munged.log")).isZero();
        munged = Long.parseLong(Files.readString(pidFile).trim());
        long deadline = System.nanoTime() + START.toNanos();
        while (command(List.of("munge", "--socket=" + mungeSocket, "--no-input"), Duration.ofSeconds(10)) != 0) {
            assertThat(System.nanoTime()).as("munged answers").isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100); // polling for the daemon, with a deadline
        }
    }

    private void daemon(String... argv) throws Exception {
        int exit = command(List.of(argv), Duration.ofSeconds(30));
        assertThat(exit).as(String.join(" ", argv) + " starts; see the logs in " + dir).isZero();
    }

    private void awaitIdleNodes() throws Exception {
        long deadline = System.nanoTime() + START.toNanos();
        while (true) {
            String idle = slurm("sinfo", "--noheader", "--states=idle", "--format=%D");
            int count = idle.lines().map(String::trim).filter(line -> line.matches("\\d+")).mapToInt(Integer::parseInt).sum();
            if (count == NODES) {
                return;
            }
            assertThat(System.nanoTime()).as("the Slurm nodes become idle; see the logs in " + dir).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(200); // polling the daemons, with a deadline
        }
    }

    /** Runs a Slurm command against this cluster and returns what it printed (empty when it failed). */
    public String slurm(String... argv) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(argv).redirectErrorStream(true);
        builder.environment().put("SLURM_CONF", conf.toString());
        Process process = builder.start();
        byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return "";
        }
        return process.exitValue() == 0 ? new String(output, StandardCharsets.UTF_8) : "";
    }

    private int command(List<String> argv, Duration timeout) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        if (conf != null) {
            builder.environment().put("SLURM_CONF", conf.toString());
        }
        Process process = builder.start();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            return -1;
        }
        return process.exitValue();
    }

    /** Asserts that Slurm ended the job and that no process of it is left. */
    public void assertJobGone(String job) throws Exception {
        String state = slurm("squeue", "--noheader", "--states=all", "--jobs=" + job, "--format=%T").trim();
        assertThat(state).as("job " + job + " is over").isIn("", "COMPLETED", "FAILED", "CANCELLED", "OUT_OF_MEMORY", "NODE_FAIL", "TIMEOUT");
        assertThat(processesWith("SLURM_JOB_ID=" + job)).as("processes of job " + job).isEmpty();
    }

    /** The live processes of a job of this cluster (its job id in their environment). */
    public List<Long> processesOf(String job) {
        return processesWith("SLURM_JOB_ID=" + job);
    }

    /** The processes of this machine whose environment holds {@code entry} and this cluster's SLURM_CONF. */
    private List<Long> processesWith(String entry) {
        List<Long> found = new ArrayList<>();
        String ours = "SLURM_CONF=" + conf;
        try (var procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path proc : procs) {
                try {
                    List<String> environ = Arrays.asList(new String(Files.readAllBytes(proc.resolve("environ")), StandardCharsets.UTF_8).split("\0"));
                    if (environ.contains(ours) && (entry == null || environ.contains(entry))) {
                        found.add(Long.parseLong(proc.getFileName().toString()));
                    }
                } catch (IOException | RuntimeException e) {
                    // gone, or not ours to read
                }
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return found;
    }

    /**
     * Cancels every job, stops the daemons and munged, kills whatever of the cluster is left,
     * and waits until all of it is gone.
     */
    private void stop() throws Exception {
        if (dir == null) {
            return;
        }
        if (conf != null && Files.exists(conf) && !daemons.isEmpty()) {
            slurm("scancel", "--partition=" + PARTITION, "--full", "--signal=KILL");
            slurm("scancel", "--partition=" + PARTITION);
        }
        for (String pidFile : pidFiles()) {
            Path file = dir.resolve(pidFile);
            if (Files.exists(file)) {
                daemons.add(Long.parseLong(Files.readString(file).trim()));
            }
        }
        daemons.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy));
        awaitGone(daemons, Duration.ofSeconds(10));
        if (conf != null) {
            List<Long> left = processesWith(null); // slurmstepd and jobs: every process started with this cluster's slurm.conf
            left.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            awaitGone(left, Duration.ofSeconds(10));
        }
        if (munged != null) {
            ProcessHandle.of(munged).ifPresent(ProcessHandle::destroy);
            awaitGone(List.of(munged), Duration.ofSeconds(10));
            munged = null;
        }
        daemons.clear();
        command(List.of("rm", "-rf", "--one-file-system", "--", dir.toString()), Duration.ofSeconds(60));
        dir = null;
    }

    /** Waits until the processes are gone, killing what is left after {@code grace}; fails if they outlive that too. */
    private static void awaitGone(List<Long> pids, Duration grace) throws InterruptedException {
        long deadline = System.nanoTime() + grace.toNanos();
        boolean killed = false;
        while (pids.stream().anyMatch(SlurmCluster::alive)) {
            if (System.nanoTime() > deadline) {
                if (killed) {
                    throw new AssertionError("processes of the Slurm cluster outlived SIGKILL: "
                            + pids.stream().filter(SlurmCluster::alive).toList());
                }
                pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
                killed = true;
                deadline = System.nanoTime() + grace.toNanos();
            }
            TimeUnit.MILLISECONDS.sleep(50); // polling for exits, with a deadline
        }
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** Free TCP ports of the loopback address, for the daemons (none of another cluster's, nor of a benchmark's). */
    private static List<Integer> freePorts(int count) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                sockets.add(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
            }
            return sockets.stream().map(ServerSocket::getLocalPort).toList();
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
    }
}
