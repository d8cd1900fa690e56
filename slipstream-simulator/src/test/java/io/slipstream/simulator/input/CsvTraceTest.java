package io.slipstream.simulator.input;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.spec.IdleMode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CsvTraceTest {
    @TempDir
    Path dir;

    @Test
    void readsColumnsInAnyOrderWithDefaultsAndIgnoresTheRest() throws Exception {
        Path file = write("""
                note,gpus,tenant,duration,submit_time,idle_mode,instances
                "a, quoted note",8,vision,3600,10.5,OnlyIdle,2
                x,1,speech/team-gpus,60,0,,
                """);
        Trace trace = CsvTrace.read(file, "trace.csv");
        assertThat(trace.jobs()).hasSize(2);
        TraceJob first = trace.jobs().get(0); // sorted by submission
        assertThat(first.tenant()).isEqualTo("speech/team-gpus");
        assertThat(first.instances()).isEqualTo(1);
        assertThat(first.idleMode()).isNull();
        TraceJob second = trace.jobs().get(1);
        assertThat(second.submitMillis()).isEqualTo(10_500);
        assertThat(second.durationMillis()).isEqualTo(3_600_000);
        assertThat(second.gpus()).isEqualTo(8);
        assertThat(second.totalGpus()).isEqualTo(16);
        assertThat(second.idleMode()).isEqualTo(IdleMode.OnlyIdle);
        assertThat(Policy.quotaOf(second.tenant())).isEqualTo(QuotaId.parse("vision/gpus"));
    }

    @Test
    void namesTheLineAndColumnOfEveryBadCell() throws Exception {
        Path file = write("""
                submit_time,duration,tenant,gpus,idle_mode
                0,60,vision,two,
                -5,60,Vision,1,Sometimes
                """);
        assertThatThrownBy(() -> CsvTrace.read(file, "trace.csv"))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field).containsExactly(
                        "trace.csv:2 gpus", "trace.csv:3 submit_time", "trace.csv:3 tenant", "trace.csv:3 idle_mode"));
    }

    @Test
    void aMinimumAboveTheJobsInstancesIsNamed() throws Exception {
        Path file = write("""
                submit_time,duration,tenant,gpus,instances,min_instances
                0,60,vision,8,4,2
                0,60,vision,8,2,3
                """);
        assertThatThrownBy(() -> CsvTrace.read(file, "trace.csv"))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field, Problem::message)
                        .containsExactly(org.assertj.core.groups.Tuple.tuple("trace.csv:3 min_instances", "is more than the job's 2 instances")));
    }

    @Test
    void aMissingColumnOrFileIsNamed() throws Exception {
        Path file = write("submit_time,duration,gpus\n0,1,1\n");
        assertThatThrownBy(() -> CsvTrace.read(file, "trace.csv")).hasMessageContaining("invalid input")
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems().get(0).message()).contains("column 'tenant' is missing"));
        assertThatThrownBy(() -> CsvTrace.read(dir.resolve("absent.csv"), "trace.csv"))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems().get(0).message()).startsWith("no such file"));
    }

    @Test
    void elasticFlowJobsOverEightGpusBecomeWholeNodes() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("ef"));
        Files.writeString(folder.resolve("cluster03.csv"), """
                job_id,submission_time,duration,num_gpu
                a,100,50,12
                b,0,10,2
                """);
        Files.writeString(folder.resolve("README.md"), "not a trace");
        Trace trace = ElasticFlowTrace.read(folder, 8, "trace.elasticflow");
        assertThat(trace.tenants()).containsExactly("cluster03");
        assertThat(trace.jobs()).extracting(TraceJob::gpus, TraceJob::instances).containsExactly(
                org.assertj.core.groups.Tuple.tuple(2, 1), org.assertj.core.groups.Tuple.tuple(8, 2));
        // Peak demand if every job started on submission: 16 GPUs; averaged over 100 s windows: 2x10/100 and 16x50/100.
        assertThat(trace.peakGpusByTenant(0)).containsEntry("cluster03", 16L);
        assertThat(trace.peakGpusByTenant(100_000)).containsEntry("cluster03", 8L);
    }

    private Path write(String text) throws Exception {
        Path file = dir.resolve("trace.csv");
        Files.writeString(file, text);
        return file;
    }
}
