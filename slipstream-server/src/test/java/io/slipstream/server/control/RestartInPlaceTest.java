package io.slipstream.server.control;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.executor.InstanceReport;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a rank restarted in place (runType Async) is told, and which executor reports are its. */
class RestartInPlaceTest {
    private static final Instant T0 = Instant.parse("2026-03-01T08:00:00Z");
    private static final JobSpec SPEC = aJob("job").replicas(2).spec();

    @Test
    void theRestartCountIsEveryEarlierAttemptPlusThisRanksRestartsInPlace() {
        for (int[] row : new int[][] {{1, 0, 0}, {1, 1, 1}, {1, 2, 2}, {3, 0, 2}, {3, 1, 3}}) {
            int attempt = row[0];
            InstanceRecord instance = instance(attempt, row[1]);
            RunRecord run = RunRecord.queued(new RunId("job-r1"), "team-a", "job", 1, SPEC, T0).admitted(RealTimeResources.InQuota, "Admitted", T0);
            Map<String, String> env = InstanceEnv.of(run, SPEC.nodeGroups().get(0), instance);
            String expected = Integer.toString(row[2]);
            assertThat(env).as("attempt %d, %d restart(s) in place", attempt, row[1])
                    .containsEntry("SLIPSTREAM_RESTART_COUNT", expected).containsEntry("TORCHELASTIC_RESTART_COUNT", expected)
                    .containsEntry("SLIPSTREAM_ATTEMPT", Integer.toString(attempt));
        }
    }

    @Test
    void aRunningReportOfTheLaunchBeforeTheRestartIsNotTheRestartedRanks() {
        InstanceRecord restarted = instance(1, 1);
        assertThat(InstanceReports.apply(restarted, new InstanceReport.Running(restarted.id(), Map.of("pid", "41"), T0), null, null, T0))
                .as("its first launch's handle").isEmpty();
        assertThat(InstanceReports.apply(restarted, new InstanceReport.Running(restarted.id(), Map.of("pid", "42", "restart", "1"), T0), null,
                null, T0)).hasValueSatisfying(change -> assertThat(change.next().handle()).containsEntry("pid", "42"));
    }

    /** An instance of {@code attempt} restarted in place {@code restarts} times, pending its next launch. */
    private static InstanceRecord instance(int attempt, int restarts) {
        InstanceRecord instance = InstanceRecord.pending(new InstanceId(new RunId("job-r1"), attempt, 1), "main", 1, "node-1", List.of());
        for (int i = 0; i < restarts; i++) {
            instance = instance.running(Map.of("pid", "4" + i), T0).finished(InstanceState.FAILED, 137, "Exited with code 137", T0).restartedInPlace();
        }
        return instance;
    }
}
