package io.slipstream.simulator.input;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;
import io.slipstream.scheduler.QuotaState;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One node of 8 GPUs; a is guaranteed 8, b 0 (a share that rounded to nothing). */
class ExperimentWarningsTest {
    private static final ClusterSpec ONE_NODE = new ClusterSpec(List.of(new NodePool("n", 1, 8, "gpu", 96_000, 1L << 40)));
    private static final List<QuotaState> QUOTAS = List.of(quota("shared/gpus", null, 8), quota("a/gpus", "shared/gpus", 6), quota("b/gpus", "shared/gpus", 0));

    @Test
    void eachJobThatCanNeverStartIsCountedOnceUnderItsWidestRulePerTenantAndPolicy() {
        Trace trace = new Trace("test", List.of(
                job(0, "a", 8, 1, null),      // over a's guarantee (6): never under Disabled, fine when borrowing
                job(1, "a", 7, 1, null),      // the same
                job(2, "a", 4, 3, null),      // 12 GPUs: more than the cluster under any policy
                job(3, "a", 16, 1, null),     // an instance bigger than any node (and than the cluster: counted once)
                job(4, "b", 1, 1, null),      // over b's guarantee of 0
                job(5, "b", 1, 1, IdleMode.Disabled), // the trace says Disabled: under the policy that takes the trace's mode too
                job(6, "a", 2, 1, null)));    // fits everywhere
        Experiment experiment = new Experiment("x", 1, trace, ONE_NODE, List.of(policy("fixed", IdleMode.Disabled), policy("borrowing", IdleMode.Acceptable),
                policy("trace", null)), List.of());

        List<String> found = ExperimentWarnings.of(experiment).stream().map(w -> w.kind() + " " + w.policy() + " " + w.tenant() + " " + w.count() + " e.g. " + w.example())
                .toList();

        assertThat(found).containsExactly(
                "ZERO_GUARANTEE fixed b 0 e.g. -1",
                "BIGGER_THAN_GUARANTEE fixed a 2 e.g. 0",
                "BIGGER_THAN_GUARANTEE fixed b 2 e.g. 4",
                "BIGGER_THAN_CLUSTER fixed a 1 e.g. 2",
                "INSTANCE_BIGGER_THAN_NODE fixed a 1 e.g. 3",
                "ZERO_GUARANTEE borrowing b 0 e.g. -1",
                "BIGGER_THAN_CLUSTER borrowing a 1 e.g. 2",
                "INSTANCE_BIGGER_THAN_NODE borrowing a 1 e.g. 3",
                "ZERO_GUARANTEE trace b 0 e.g. -1",
                "BIGGER_THAN_GUARANTEE trace b 1 e.g. 5",
                "BIGGER_THAN_CLUSTER trace a 1 e.g. 2",
                "INSTANCE_BIGGER_THAN_NODE trace a 1 e.g. 3");
    }

    @Test
    void gpuHoursAndMessagesSayWhatIsAtStake() {
        Trace trace = new Trace("test", List.of(job(0, "a", 8, 1, null), job(1, "a", 7, 1, null)));
        Experiment experiment = new Experiment("x", 1, trace, ONE_NODE, List.of(policy("fixed", IdleMode.Disabled)), List.of());

        Warning warning = ExperimentWarnings.of(experiment).stream().filter(w -> w.kind() == Warning.Kind.BIGGER_THAN_GUARANTEE).findFirst().orElseThrow();

        assertThat(warning.gpuHours()).isEqualTo(15.0); // 1 h each: 8 + 7 GPU-h
        assertThat(warning.message()).isEqualTo(
                "fixed: tenant a: 2 jobs (15 GPU-h) ask for more than the tenant's guarantee (6 GPUs) with borrowing disabled: they can never start (e.g. job 0)");
    }

    @Test
    void skippedTraceRowsAreWarnedOfOnceForAllPolicies() {
        Trace trace = new Trace("test", List.of(job(0, "a", 1, 1, null)),
                List.of(new Trace.Skipped(Trace.SkipReason.NO_END, 3, 7), new Trace.Skipped(Trace.SkipReason.NO_GPUS, 1, 2)));
        Experiment experiment = new Experiment("x", 1, trace, ONE_NODE, List.of(policy("borrowing", IdleMode.Acceptable)), List.of());

        assertThat(ExperimentWarnings.of(experiment).stream().filter(w -> w.policy() == null).map(Warning::message)).containsExactly(
                "3 trace rows skipped: no end time (still running when the trace was taken) (e.g. line 7)",
                "1 trace row skipped: no GPUs (e.g. line 2)");
    }

    private static TraceJob job(int index, String tenant, int gpus, int instances, IdleMode mode) {
        return new TraceJob(index, index * 1000L, 3_600_000, tenant, gpus, instances, 0, mode);
    }

    private static Policy policy(String name, IdleMode mode) {
        return new Policy(name, QUOTAS, "test", mode, Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO, false, Duration.ZERO, Duration.ofSeconds(10), null);
    }

    private static QuotaState quota(String id, String parent, int gpus) {
        return new QuotaState(QuotaId.parse(id), QuotaType.General, null, parent == null ? null : QuotaId.parse(parent), new Resources(0, 0, gpus, null), null,
                WithinQuota.Never);
    }
}
