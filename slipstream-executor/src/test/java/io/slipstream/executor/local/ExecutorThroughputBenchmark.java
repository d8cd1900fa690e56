package io.slipstream.executor.local;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the local executor alone can do, with no control plane around it: isolated one-instance runs of {@code true}
 * (a uid of the run's own, a PID namespace, the launcher binary where the build has one) launched from 8 threads, as
 * the control loop's launch pool does, on 16 declared nodes, each with the environment and cluster metadata a server
 * gives; instances ended per second (first launch to last exit report) and the CPU each took: the whole machine's
 * ({@code /proc/stat}) and this JVM's. The end-to-end benchmark's figures divided by these say what the control plane
 * (HTTP, store, control loop) adds to each run. Not part of the test run (needs root): {@code bench/run executor}
 * ({@code -Dbench.instances}, 2,000; {@code -Dbench.repeats}, 3; after {@code -Dbench.warmUpInstances}, 3,000;
 * {@code -Dbench.cgroups}: {@code auto}, a cgroup per instance as a server that is root makes, or {@code off}).
 */
class ExecutorThroughputBenchmark {
    private static final int INSTANCES = Integer.getInteger("bench.instances", 2_000);
    private static final int REPEATS = Integer.getInteger("bench.repeats", 3);
    private static final int WARM_UP = Integer.getInteger("bench.warmUpInstances", 3_000);
    private static final int THREADS = 8;
    private static final SupervisorProgram.Mode LAUNCHER = SupervisorProgram.Mode.valueOf(System.getProperty("bench.launcher", "auto"));
    private static final Cgroups.Mode CGROUPS = Cgroups.Mode.valueOf(System.getProperty("bench.cgroups", "auto"));
    private static final AtomicInteger RUNS = new AtomicInteger();
    private static final java.util.Queue<String> LOST = new java.util.concurrent.ConcurrentLinkedQueue<>();

    @TempDir
    Path dataDir;

    private final Map<InstanceId, CountDownLatch> ends = new ConcurrentHashMap<>();

    @Test
    void instancesPerSecond() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "a uid per run needs root");
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        Isolation isolation = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir, null);
        List<NodeInfo> nodes = new ArrayList<>();
        for (int i = 1; i <= 16; i++) {
            nodes.add(new NodeInfo(String.format("node-%02d", i), new Resources(64_000, 256L << 30, 0, null), null, Map.of()));
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("instancesPerRepeat", INSTANCES);
        report.put("repeats", REPEATS);
        report.put("warmUpInstances", WARM_UP);
        report.put("threads", THREADS);
        report.put("nodes", nodes.size());
        report.put("cores", Runtime.getRuntime().availableProcessors());
        report.put("launcher", LAUNCHER.name());
        Cgroups cgroups = Cgroups.detect(CGROUPS, true, dataDir.resolve("instances"));
        report.put("cgroups", cgroups.enforcement().describe());
        try (LocalProcessExecutor executor = new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV,
                isolation, null, LocalProcessExecutor.DEFAULT_LOG_LIMIT_BYTES, 0, ImageSettings.DEFAULTS, LAUNCHER, cgroups, Clock.systemUTC())) {
            executor.setListener(report1 -> {
                if (report1 instanceof InstanceReport.Lost lost) {
                    LOST.add(lost.id() + ": " + lost.reason());
                }
                if (report1 instanceof InstanceReport.Exited || report1 instanceof InstanceReport.Lost) {
                    CountDownLatch end = ends.remove(report1.id()); // reports come at least once: count the first
                    if (end != null) {
                        end.countDown();
                    }
                }
            });
            executor.fence(1);
            measure(executor, nodes, WARM_UP);
            List<Double> rates = new ArrayList<>();
            List<Double> machineMillis = new ArrayList<>();
            List<Double> jvmMillis = new ArrayList<>();
            for (int r = 0; r < REPEATS; r++) {
                Cpu before = Cpu.now();
                double seconds = measure(executor, nodes, INSTANCES);
                Cpu after = Cpu.now();
                rates.add(INSTANCES / seconds);
                machineMillis.add((after.machineBusyMillis - before.machineBusyMillis) / (double) INSTANCES);
                jvmMillis.add((after.jvmMillis - before.jvmMillis) / (double) INSTANCES);
                System.out.printf(java.util.Locale.ROOT, "%d instances in %.1f s = %.1f/s; CPU per instance %.1f ms (%.1f in this JVM)%n", INSTANCES,
                        seconds, INSTANCES / seconds, machineMillis.get(r), jvmMillis.get(r));
            }
            report.put("medianInstancesPerSecond", round(median(rates)));
            report.put("instancesPerSecond", rates.stream().map(ExecutorThroughputBenchmark::round).toList());
            report.put("medianCpuMillisPerInstance", round(median(machineMillis)));
            report.put("medianJvmCpuMillisPerInstance", round(median(jvmMillis)));
        }
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        System.out.println(json);
        Files.writeString(Path.of("target", "executor-throughput.json"), json);
    }

    /** Launches {@code count} one-instance runs from {@link #THREADS} threads; seconds from the first launch to the last end. */
    private double measure(LocalProcessExecutor executor, List<NodeInfo> nodes, int count) throws Exception {
        CountDownLatch ended = new CountDownLatch(count);
        ExecutorService launchers = Executors.newFixedThreadPool(THREADS);
        long start = System.nanoTime();
        try {
            List<Future<?>> launched = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String node = nodes.get(i % nodes.size()).name();
                launched.add(launchers.submit(() -> {
                    LaunchSpec spec = spec(node);
                    ends.put(spec.id(), ended);
                    executor.launch(spec);
                }));
            }
            for (Future<?> future : launched) {
                future.get();
            }
        } finally {
            launchers.shutdown();
        }
        if (!ended.await(10, TimeUnit.MINUTES)) {
            throw new AssertionError(ended.getCount() + " of " + count + " instances did not end within 10 minutes");
        }
        if (!LOST.isEmpty()) {
            throw new AssertionError(LOST.size() + " instances were lost, e.g. " + LOST.peek());
        }
        return (System.nanoTime() - start) / 1e9;
    }

    /** A one-instance run of {@code true} as a server launches it: its variables, a run token, its metadata. */
    private static LaunchSpec spec(String node) {
        RunId run = new RunId("bench-" + RUNS.incrementAndGet());
        InstanceId id = new InstanceId(run, 1, 0);
        Map<String, String> env = new LinkedHashMap<>();
        env.put("SLIPSTREAM_RUN_ID", run.value());
        env.put("SLIPSTREAM_ATTEMPT", "1");
        env.put("SLIPSTREAM_WORKSPACE", "bench");
        env.put("SLIPSTREAM_JOB", "trivial");
        env.put("SLIPSTREAM_NODE_GROUP", "main");
        env.put("SLIPSTREAM_INSTANCE", "main-0");
        env.put("RANK", "0");
        env.put("WORLD_SIZE", "1");
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", "29500");
        env.put(LaunchSpec.RUN_TOKEN_ENV, "sst_" + "x".repeat(43));
        ClusterMetadata.Instance instance = new ClusterMetadata.Instance("main-0", "main", 0, 0, node, "127.0.0.1", "127.0.0.1", "127.0.0.1",
                List.of(29500), true);
        ClusterMetadata metadata = new ClusterMetadata(ClusterMetadata.FORMAT_VERSION, run.value(), "bench", "trivial", 1, 1, "InParallel",
                new ClusterMetadata.Address("127.0.0.1", 29500), List.of(instance), List.of());
        return new LaunchSpec(id, "main-0", node, List.of(), List.of("true"), env, null, null, metadata, null, new Resources(1000, 1L << 30, 0, null));
    }

    /**
     * CPU time so far: the machine's busy time (user, nice, system, irq and softirq: not idle, iowait, the time the
     * hypervisor gave other guests, nor guest time, which user counts already) and this JVM's, in milliseconds.
     */
    private record Cpu(long machineBusyMillis, long jvmMillis) {
        static Cpu now() throws java.io.IOException {
            String[] fields = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long busy = 0;
            for (int i : new int[] {1, 2, 3, 6, 7}) {
                busy += Long.parseLong(fields[i]);
            }
            long ticksPerSecond = 100; // USER_HZ on Linux
            var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            return new Cpu(busy * 1000 / ticksPerSecond, os.getProcessCpuTime() / 1_000_000);
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }

    private static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }
}
