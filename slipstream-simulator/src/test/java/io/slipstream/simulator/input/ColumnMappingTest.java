package io.slipstream.simulator.input;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.simulator.Simulator;
import io.slipstream.simulator.report.PolicyResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A CSV in its own format, read through {@code trace.columns}. */
class ColumnMappingTest {
    private static final Path PODS = Path.of("..", "examples", "simulation", "pods", "experiment.yaml");
    private static final ColumnMapping PODS_MAPPING = new ColumnMapping("created", null, "deleted", "gpu_request", true, "replicas", null, "namespace",
            Map.of("ml-vision", "vision"), "qos", Map.of("guaranteed", IdleMode.Disabled, "burstable", IdleMode.Acceptable), "prio", true);

    @TempDir
    Path dir;

    @Test
    void timestampsBecomeSecondsFromTheEarliestAndEndsBecomeDurations() throws Exception {
        Path file = write("""
                name,namespace,qos,gpu_request,replicas,created,deleted,prio
                a,ml-vision,guaranteed,16,2,2024-03-01 10:00:00,2024-03-01 12:00:00,5
                b,speech,burstable,4,1,2024-03-01T09:30:00Z,2024-03-01T09:31:30.5Z,
                c,speech,,1,1,2024-03-01T10:30:00+01:00,2024-03-01T10:40:00+01:00,
                """);
        Trace trace = CsvTrace.read(file, "trace.csv", PODS_MAPPING, "trace.columns");
        // Sorted by submission: b at 09:30Z (0 s), c at 09:30Z as well (10:30+01:00, index after b), a at 10:00 (1800 s).
        assertThat(trace.jobs()).extracting(TraceJob::submitMillis, TraceJob::durationMillis, TraceJob::tenant, TraceJob::gpus, TraceJob::instances,
                TraceJob::priority, TraceJob::idleMode).containsExactly(
                tuple(0L, 90_500L, "speech", 4, 1, 0, IdleMode.Acceptable),
                tuple(0L, 600_000L, "speech", 1, 1, 0, null),
                tuple(1_800_000L, 7_200_000L, "vision", 8, 2, 5, IdleMode.Disabled));
        assertThat(trace.skipped()).isEmpty();
    }

    @Test
    void rowsStillRunningOrWithoutGpusAreSkippedAndCounted() throws Exception {
        Path file = write("""
                name,namespace,qos,gpu_request,replicas,created,deleted,prio
                a,speech,burstable,0,1,2024-03-01 10:00:00,2024-03-01 12:00:00,
                b,speech,burstable,4,1,2024-03-01 10:00:00,,
                c,speech,burstable,4,1,2024-03-01 10:00:00,2024-03-01 10:01:00,
                d,speech,burstable,4,1,2024-03-01 10:05:00,,
                """);
        Trace trace = CsvTrace.read(file, "trace.csv", PODS_MAPPING, "trace.columns");
        assertThat(trace.jobs()).hasSize(1);
        assertThat(trace.skipped()).containsExactly(new Trace.Skipped(Trace.SkipReason.NO_END, 2, 3), new Trace.Skipped(Trace.SkipReason.NO_GPUS, 1, 2));
    }

    @Test
    void totalsSplitIntoInstancesOfAGivenSizeAndSecondsStayAsTheyAre() throws Exception {
        Path file = write("""
                vc,submitted,runtime,num_gpu
                vc1,100,50,12
                vc2,0,10,2
                """);
        ColumnMapping philly = new ColumnMapping("submitted", "runtime", null, "num_gpu", true, null, 8, "vc", Map.of(), null, Map.of(), null, true);
        Trace trace = CsvTrace.read(file, "trace.csv", philly, "trace.columns");
        // 12 GPUs in instances of 8: ceil(12 / 8) = 2 whole nodes, as the ElasticFlow traces do; 2 GPUs: one instance.
        assertThat(trace.jobs()).extracting(TraceJob::submitMillis, TraceJob::gpus, TraceJob::instances).containsExactly(tuple(0L, 2, 1), tuple(100_000L, 8, 2));
    }

    @Test
    void everyBadCellIsNamedWithFileLineAndColumn() throws Exception {
        Path file = write("""
                name,namespace,qos,gpu_request,replicas,created,deleted,prio
                a,speech,platinum,4,1,2024-03-01 10:00:00,2024-03-01 12:00:00,
                b,speech,burstable,4,1,yesterday,2024-03-01 12:00:00,
                c,speech,burstable,3,2,2024-03-01 10:00:00,2024-03-01 12:00:00,
                d,speech,burstable,4,1,2024-03-01 10:00:00,2024-03-01 09:00:00,
                e,Speech_Team,burstable,4,1,2024-03-01 10:00:00,2024-03-01 11:00:00,
                """);
        assertThatThrownBy(() -> CsvTrace.read(file, "trace.csv", PODS_MAPPING, "trace.columns"))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field, Problem::message).containsExactly(
                        tuple("trace.csv:2 qos", "'platinum' is not in trace.columns.idleModeValues (have: [burstable, guaranteed])"),
                        tuple("trace.csv:3 created", "must be a timestamp like the column's first (2024-03-01T09:30:00Z, 2024-03-01 09:30:00), is 'yesterday'"),
                        tuple("trace.csv:4 gpu_request", "a total of 3 GPUs does not split evenly over 2 instances"),
                        tuple("trace.csv:5 deleted", "is before the submission (2024-03-01 09:00:00 < 2024-03-01 10:00:00)"),
                        tuple("trace.csv:6 namespace",
                                "must be a workspace name (lowercase letters, digits, '-') or workspace/quota (or a key of tenantValues), is 'Speech_Team'")));
    }

    @Test
    void timestampsTooFarOutAreErrorsNamedWithTheirCellNotCrashesOrStretchedReplays() throws Exception {
        Path file = write("""
                name,namespace,qos,gpu_request,replicas,created,deleted,prio
                a,speech,burstable,4,1,+999999999-03-01T09:00:00Z,+999999999-03-01T10:00:00Z,
                b,speech,burstable,4,1,1000-03-01T09:00:00Z,9999-03-01T10:00:00Z,
                """);
        assertThatThrownBy(() -> CsvTrace.read(file, "trace.csv", PODS_MAPPING, "trace.columns"))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field).containsExactly(
                        "trace.csv:2 created", "trace.csv:2 deleted", "trace.csv:3 deleted"));

        // One stray far-future submission would make the replay span millennia.
        Path stray = write("""
                name,namespace,qos,gpu_request,replicas,created,deleted,prio
                a,speech,burstable,4,1,2024-03-01T09:00:00Z,2024-03-01T10:00:00Z,
                b,speech,burstable,4,1,9999-03-01T09:00:00Z,9999-03-01T10:00:00Z,
                """);
        assertThatThrownBy(() -> CsvTrace.read(stray, "trace.csv", PODS_MAPPING, "trace.columns"))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).singleElement()
                        .satisfies(problem -> assertThat(problem.message()).startsWith("submissions span more than 1e10 seconds")));
    }

    @Test
    void aColumnNamedTwiceAndNumbersJavaWouldStretchAreErrors() throws Exception {
        Path twice = write("""
                name,namespace,qos,gpu_request,replicas,created,deleted,prio,Created
                a,speech,burstable,4,1,2024-03-01T09:00:00Z,2024-03-01T10:00:00Z,,2024-03-01T09:00:00Z
                """);
        assertThatThrownBy(() -> CsvTrace.read(twice, "trace.csv", PODS_MAPPING, "trace.columns"))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field, Problem::message)
                        .containsExactly(tuple("trace.csv:1", "names the column 'created' twice (columns 6 and 9)")));

        Path loose = dir.resolve("seconds.csv");
        Files.writeString(loose, "submit_time,duration,tenant,gpus\n0,10d,a,1\n0,0x1p3,a,1\n1e3,60,a,1\n");
        assertThatThrownBy(() -> CsvTrace.read(loose, "trace.csv"))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field)
                        .containsExactly("seconds.csv:2 duration", "seconds.csv:3 duration"));
    }

    @Test
    void gpuHoursOfAHugeJobDoNotOverflow() {
        TraceJob job = new TraceJob(0, 0, 10_000_000_000_000L, "a", 1024, 10_000, 0, null);
        assertThat(job.gpuHours()).isPositive().isCloseTo(1024.0 * 10_000 * 1e13 / 3.6e6, org.assertj.core.api.Assertions.within(1e6));
    }

    @Test
    void aColumnTheMappingNamesButTheHeaderLacksIsNamedWithItsField() throws Exception {
        Path file = write("name,namespace,gpu_request,created,deleted\na,speech,1,0,10\n");
        assertThatThrownBy(() -> CsvTrace.read(file, "trace.csv", PODS_MAPPING, "trace.columns"))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field).containsExactly(
                        "trace.columns.instances", "trace.columns.idleMode", "trace.columns.priority"));
    }

    @Test
    void aBadMappingIsReportedWithEveryFieldPath() throws Exception {
        Files.writeString(dir.resolve("trace.csv"), "t,d,tenant,g\n0,10,vision,1\n");
        Files.writeString(dir.resolve("experiment.yaml"), """
                trace:
                  csv: trace.csv
                  columns: {submit: t, gpus: g, gpusAre: some, gpusPerInstance: 8, tenant: tenant, idleModeValues: {x: Sometimes}, colour: red}
                cluster: "1 x 8"
                quotas: {proportionalTo: equal}
                policies: [{name: a}]
                """);
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field).containsExactlyInAnyOrder(
                        "trace.columns.colour", "trace.columns.idleModeValues.x", "trace.columns", "trace.columns.gpusAre", "trace.columns.gpusPerInstance"));
    }

    @Test
    void theShippedPodListReplaysThroughItsMapping() {
        Experiment experiment = ExperimentReader.read(PODS);
        // 20 rows: vit-long is still running (no deletion time), etl-cpu asks for no GPU.
        assertThat(experiment.trace().jobs()).hasSize(18);
        assertThat(experiment.trace().skipped()).extracting(Trace.Skipped::reason, Trace.Skipped::rows, Trace.Skipped::exampleLine).containsExactly(
                tuple(Trace.SkipReason.NO_END, 1, 16), tuple(Trace.SkipReason.NO_GPUS, 1, 7));
        assertThat(experiment.trace().tenants()).containsExactly("speech", "vision");
        assertThat(experiment.trace().jobs().get(0).idleMode()).isEqualTo(IdleMode.Disabled); // train-resnet-0: guaranteed
        assertThat(ExperimentWarnings.of(experiment)).extracting(Warning::kind).contains(Warning.Kind.ROWS_SKIPPED, Warning.Kind.BIGGER_THAN_GUARANTEE);

        List<PolicyResult> results = Simulator.run(experiment, Set.of(), null);
        assertThat(results).extracting(r -> r.policy().name()).containsExactly("fixed-quotas", "qos-classes");
        // asr-big (16 GPUs, guaranteed) is over speech's 8-GPU guarantee under both: it never starts; everything else completes.
        assertThat(results).allSatisfy(r -> {
            assertThat(r.neverStarted()).isEqualTo(1);
            assertThat(r.completed()).isEqualTo(17);
        });
        // The QoS classes let burstable and best-effort pods borrow: more of the cluster is used while pods arrive.
        assertThat(results.get(1).windowUtilization()).isGreaterThan(results.get(0).windowUtilization());
        assertThat(results.get(1).borrowedGpuHours()).isPositive();
    }

    private Path write(String text) throws Exception {
        Path file = dir.resolve("trace.csv");
        Files.writeString(file, text);
        return file;
    }
}
