package io.slipstream.server.control;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.problem.Problem;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.api.spec.JobSpec;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What of a job needs an executor that restarts instances in place, refused where it cannot, named by its field. */
class InPlaceRestartsTest {
    private static final JobSpec ELASTIC = aJob("j").group("plain").replicas(2).andGroup("elastic").replicas(4).minReplicas(1).spec();
    private static final JobSpec WHOLE = aJob("j").replicas(4).minReplicas(4).spec();

    @Test
    void anElasticGroupNeedsRestartsInPlaceAndARigidOneDoesNot() {
        assertThat(problems(ELASTIC, false)).extracting(Problem::field).containsExactly("spec.nodeGroups[1].minReplicas");
        assertThat(problems(ELASTIC, false).get(0).message()).contains("cannot restart instances in place");
        assertThat(problems(ELASTIC, true)).isEmpty();
        assertThat(problems(WHOLE, false)).as("minReplicas = replicas is rigid").isEmpty();
    }

    @Test
    void anAsyncRunNeedsThemToo() {
        FaultTolerance async = new FaultTolerance(FaultTolerance.RunType.Async, 3, null, 3, 3, Duration.ofSeconds(10), Duration.ofMinutes(1),
                List.of(), List.of(), List.of(), FaultTolerance.FailureAction.Fail, 0, null, null);
        assertThat(problems(aJob("j").faultTolerance(async).spec(), false)).extracting(Problem::field).containsExactly("spec.faultTolerance.runType");
    }

    private static List<Problem> problems(JobSpec job, boolean restartsInPlace) {
        Problems problems = new Problems();
        InPlaceRestarts.check(job, restartsInPlace, "", problems);
        return problems.list();
    }
}
