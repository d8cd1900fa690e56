package io.slipstream.executor.slurm;

import io.slipstream.api.codec.Json;
import io.slipstream.executor.slurm.OneRunAtATime.Timeline;
import io.slipstream.server.config.ConfigReader;
import io.slipstream.server.support.TestServer;
import io.slipstream.testing.SlurmCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Submit to running and stop latency of the real server (embedded store) through Slurm and through the local executor,
 * one after the other in this process, on the same four nodes (a {@link SlurmCluster} on this machine, and the local
 * executor's declaration of the same shape): {@code bench.latencyRuns} (200) one-instance runs one at a time each, after
 * {@code bench.warmUpRuns} (20) not counted ({@link OneRunAtATime}). Submit to running ends at the instance's
 * {@code startedAt}, which the server records with the run's RUNNING once the launch returned; a stop ends at the run's
 * {@code finishedAt}; in between, the moments of each run say where the time went ({@link #DEFINITIONS}). Slurm once for
 * each of {@code bench.pollIntervals} ({@code slurm.pollInterval}: {@code 2s}, the default, and {@code 200ms}): a job's
 * end is read from squeue, so the interval is part of a stop. Not part of the test run (surefire runs classes named
 * *Test); {@code bench/run slurm-latency} runs it with the server's JVM options and copies
 * {@code target/slurm-latency.json}.
 */
class SlurmLatencyBenchmark {
    private static final int RUNS = Integer.getInteger("bench.latencyRuns", 200);
    private static final int WARM_UP_RUNS = Integer.getInteger("bench.warmUpRuns", 20);
    private static final List<String> POLL_INTERVALS = Arrays.asList(System.getProperty("bench.pollIntervals", "2s,200ms").split(","));
    /** Between SIGTERM and SIGKILL; the workload leaves at SIGTERM, so a stop never waits for it (and exit code 0 shows it did not). */
    private static final String GRACE_PERIOD = "30s";

    /** A moment of a run, by its name in the figures. */
    private record Moment(String name, Function<Timeline, Instant> at) {
    }

    /** The moments of a submission, from its creation; those a run does not have (Slurm's, on the local executor) are left out. */
    private static final List<Moment> SUBMIT = List.of(new Moment("runStartedAt", Timeline::runStarted), new Moment("sbatchAccepted", Timeline::submitted),
            new Moment("allocated", Timeline::allocated), new Moment("running", Timeline::launched), new Moment("wrapperRunning", Timeline::wrapperStarted),
            new Moment("commandRunning", Timeline::commandStarted));
    /** The moments of a stop, from the cancel request. */
    private static final List<Moment> STOP = List.of(new Moment("scancelReceived", Timeline::signalled), new Moment("commandEnded", Timeline::commandEnded),
            new Moment("jobCompleted", Timeline::completed), new Moment("endReported", Timeline::instanceEnded), new Moment("runEnded", Timeline::runEnded));

    /** What each figure of the JSON measures. */
    private static final Map<String, String> DEFINITIONS = Map.of(
            "submitToRunning", "the run's creation to its instance's startedAt, recorded once the executor's launch returned (for Slurm, once sbatch"
                    + " did: the job may not run yet)",
            "stop", "the cancel request to the run's finishedAt",
            "fromSubmission", "cumulative from the run's creation: runStartedAt, the run's startedAt (the time of the scheduling cycle that"
                    + " launched it, taken before the launch); sbatchAccepted and allocated, as slurmctld logged them; running (submitToRunning);"
                    + " wrapperRunning, the Slurm job's wrapper wrote slurm_job; commandRunning, the command's own $EPOCHREALTIME",
            "fromCancel", "cumulative from the cancel request: scancelReceived, slurmctld logged the stop's first scancel; commandEnded, exit_code"
                    + " written; jobCompleted, slurmctld logged the job's end; endReported, the instance's finishedAt (the executor's report);"
                    + " runEnded (stop)");

    @RegisterExtension
    static final SlurmCluster CLUSTER = new SlurmCluster();

    @TempDir
    Path dir;

    @Test
    void submitToRunningAndStop() throws Exception {
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "slurm-latency");
        report.put("runs", RUNS);
        report.put("warmUpRuns", WARM_UP_RUNS);
        report.put("cores", Runtime.getRuntime().availableProcessors());
        report.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        report.put("nodes", "node01-03: 8 CPUs, 8000 MiB, 4 GPUs; node04: 4 CPUs, 4000 MiB (Slurm 22.05, slurmctld and four slurmd on this machine;"
                + " the local executor the same four declared)");
        report.put("workload", "bash -c \"" + OneRunAtATime.COMMAND + "\" (1 CPU, 1 GiB)");
        report.put("gracePeriod", GRACE_PERIOD);
        report.put("definitions", new TreeMap<>(DEFINITIONS));
        String loadBefore = loadAverage();
        List<Map<String, Object>> executors = new ArrayList<>();
        for (String poll : POLL_INTERVALS) {
            Path shared = dir.resolve("shared-" + poll);
            executors.add(measure("slurm", poll, """
                    executor: slurm
                    slurm:
                      sharedDirectory: %s
                      partition: %s
                      slurmConf: %s
                      trustedTenants: true
                      allowRootJobs: true
                      pollInterval: %s
                    instances: {gracePeriod: %s}
                    """.formatted(shared, SlurmCluster.PARTITION, CLUSTER.conf(), poll, GRACE_PERIOD), dir.resolve("data-slurm-" + poll),
                    shared.resolve("instances")));
        }
        Path local = dir.resolve("data-local");
        executors.add(measure("local", null, """
                executor: local
                nodes:
                  - {name: node01, cpu: 8, memory: 8000Mi, gpu: 4, gpuModel: tesla}
                  - {name: node02, cpu: 8, memory: 8000Mi, gpu: 4, gpuModel: tesla}
                  - {name: node03, cpu: 8, memory: 8000Mi, gpu: 4, gpuModel: tesla}
                  - {name: node04, cpu: 4, memory: 4000Mi}
                instances: {gracePeriod: %s}
                """.formatted(GRACE_PERIOD), local, local.resolve("instances")));
        report.put("executors", executors);
        report.put("medianRatiosSlurmToLocal", ratios(executors));
        report.put("sbatchAlone", sbatchAlone());
        report.put("loadAverage", "before " + loadBefore + ", after " + loadAverage()); // the machine is shared: was it busy?
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        System.out.println(json);
        Files.writeString(Path.of("target", "slurm-latency.json"), json);
    }

    /** A server of this config, its warm-up, then the measured runs; the figures of each phase. */
    private Map<String, Object> measure(String executor, String pollInterval, String config, Path dataDir, Path instancesRoot) throws Exception {
        String name = executor + (pollInterval == null ? "" : " (pollInterval " + pollInterval + ")");
        Files.createDirectories(dataDir);
        List<Timeline> runs;
        try (TestServer server = TestServer.start(dataDir, base -> ConfigReader.read(config.getBytes(StandardCharsets.UTF_8), base))) {
            OneRunAtATime oneAtATime = new OneRunAtATime(server, instancesRoot);
            oneAtATime.declare();
            oneAtATime.measure(WARM_UP_RUNS, done -> {
            });
            runs = oneAtATime.measure(RUNS, done -> {
                if (done % 50 == 0) {
                    System.out.printf(Locale.ROOT, "%s: %d of %d runs%n", name, done, RUNS);
                }
            });
        }
        if (executor.equals("slurm")) {
            runs = new SlurmctldLog(CLUSTER.conf().resolveSibling("slurmctld.log"), SlurmctldLog.machineOffset()).add(runs);
        }
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("executor", executor);
        if (pollInterval != null) {
            row.put("pollInterval", pollInterval);
        }
        row.put("submitToRunning", percentiles(runs, Timeline.between(Timeline::created, Timeline::launched)));
        row.put("stop", percentiles(runs, Timeline.between(Timeline::cancelRequested, Timeline::runEnded)));
        row.put("fromSubmission", figures(runs, Timeline::created, SUBMIT));
        row.put("fromCancel", figures(runs, Timeline::cancelRequested, STOP));
        Map<Integer, Long> exitCodes = new TreeMap<>();
        runs.forEach(run -> exitCodes.merge(run.exitCode(), 1L, Long::sum));
        row.put("exitCodes", exitCodes);
        System.out.printf(Locale.ROOT, "%s: submit to running %s; stop %s%n", name, row.get("submitToRunning"), row.get("stop"));
        return row;
    }

    /** The percentiles of each moment from {@code from}: cumulative, so that the step between two is the difference of their medians. */
    private static Map<String, Object> figures(List<Timeline> runs, Function<Timeline, Instant> from, List<Moment> moments) {
        Map<String, Object> figures = new LinkedHashMap<>();
        for (Moment moment : moments) {
            Map<String, Object> row = percentiles(runs, Timeline.between(from, moment.at()));
            if (!row.isEmpty()) {
                figures.put(moment.name(), row);
            }
        }
        return figures;
    }

    /** Medians of Slurm over the local executor's: submit to running, stop, and submission to the command running. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> ratios(List<Map<String, Object>> executors) {
        Map<String, Object> local = executors.get(executors.size() - 1);
        Map<String, Object> ratios = new LinkedHashMap<>();
        for (Map<String, Object> slurm : executors.subList(0, executors.size() - 1)) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("submitToRunning", ratio(slurm.get("submitToRunning"), local.get("submitToRunning")));
            row.put("stop", ratio(slurm.get("stop"), local.get("stop")));
            row.put("submitToCommandRunning", ratio(((Map<String, Object>) slurm.get("fromSubmission")).get("commandRunning"),
                    ((Map<String, Object>) local.get("fromSubmission")).get("commandRunning")));
            ratios.put("slurm (pollInterval " + slurm.get("pollInterval") + ")", row);
        }
        return ratios;
    }

    private static double ratio(Object figures, Object base) {
        return Math.round((Double) ((Map<?, ?>) figures).get("p50") / (Double) ((Map<?, ?>) base).get("p50") * 100) / 100.0;
    }

    /** p50, p90, p99 and max (nearest rank) in milliseconds, to one decimal, of what {@code figure} gives of each run; empty if none has it. */
    static Map<String, Object> percentiles(List<Timeline> runs, Function<Timeline, Double> figure) {
        return percentiles(runs.stream().map(figure).filter(Objects::nonNull).toList());
    }

    static Map<String, Object> percentiles(List<Double> millis) {
        List<Double> sorted = new ArrayList<>(millis);
        Collections.sort(sorted);
        Map<String, Object> row = new LinkedHashMap<>();
        if (sorted.isEmpty()) {
            return row;
        }
        for (int p : new int[] {50, 90, 99}) {
            row.put("p" + p, round(sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1))));
        }
        row.put("max", round(sorted.get(sorted.size() - 1)));
        return row;
    }

    private static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }

    /**
     * sbatch alone, as the executor runs it (a process per submission), of a job that does nothing: what a launch through
     * Slurm costs before the job runs. 20 submissions, one after the other.
     */
    private static Map<String, Object> sbatchAlone() throws Exception {
        List<Double> millis = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            long start = System.nanoTime();
            String job = CLUSTER.slurm("sbatch", "--parsable", "--partition=" + SlurmCluster.PARTITION, "--nodelist=" + SlurmCluster.node(SlurmCluster.NODES),
                    "--nodes=1", "--ntasks=1", "--cpus-per-task=1", "--mem=100M", "--no-requeue", "--output=/dev/null", "--wrap=true").trim();
            double elapsed = (System.nanoTime() - start) / 1e6;
            if (!job.matches("\\d+")) {
                throw new AssertionError("sbatch failed: " + job);
            }
            millis.add(elapsed);
        }
        return percentiles(millis);
    }

    /** The machine's load averages over 1, 5 and 15 minutes. */
    private static String loadAverage() throws java.io.IOException {
        String[] fields = Files.readString(Path.of("/proc/loadavg")).split(" ");
        return fields[0] + " " + fields[1] + " " + fields[2];
    }
}
