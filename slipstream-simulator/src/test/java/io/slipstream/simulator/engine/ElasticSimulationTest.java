package io.slipstream.simulator.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;
import io.slipstream.scheduler.FairSharingPreemption;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.simulator.input.ClusterSpec;
import io.slipstream.simulator.input.ElasticRule;
import io.slipstream.simulator.input.NodePool;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.input.Trace;
import io.slipstream.simulator.input.TraceJob;
import io.slipstream.simulator.report.PolicyResult;
import io.slipstream.simulator.report.TenantResult;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Elastic jobs replayed on the core (docs/elastic.md): a story worked out by hand, figure by figure, against rigid borrowing. */
class ElasticSimulationTest {
    private static final ClusterSpec FOUR_NODES = new ClusterSpec(List.of(new NodePool("n", 4, 8, "gpu", 96_000, 1L << 40)));
    private static final List<QuotaState> HALF_EACH = List.of(quota("shared/gpus", null, 32), quota("a/gpus", "shared/gpus", 16),
            quota("b/gpus", "shared/gpus", 16));
    /** a's 4-node job of 1,000 s at 0 s; b's 1-node job of 100 s at 200 s. */
    private static final Trace TRACE = new Trace("test", List.of(new TraceJob(0, 0, 1_000_000, "a", 8, 4, 0, null),
            new TraceJob(1, 200_000, 100_000, "b", 8, 1, 0, null)));

    @Test
    void aReclaimShrinksAnElasticBorrowerAndItGrowsBackWhenTheCapacityIsFree() {
        PolicyResult elastic = run(new ElasticRule(0.5, false, Duration.ofSeconds(30)));
        // 0 s: a's job starts whole, two nodes on a's guarantee and two borrowed from b's (its minimum is 2).
        // 200 s: b's job fits b's guarantee; the cycle shrinks a's job by its last borrowed instance (rank 3) instead of
        // stopping it; the instance goes at 230 s (grace 30 s), b's job starts then (reclaim 30 s) and ends at 330 s.
        // a's job: 230 s of progress at full size to 230 s, saved at the change; a 30 s pause; 70 s at 3/4 (52.5 s);
        // at 330 s it grows back (rank 3, borrowed), 282.5 s done, pauses 30 s, and does the 717.5 s left from 360 s:
        // done at 1,077.5 s. Nothing is lost, no run is stopped whole.
        assertThat(elastic.elastic().elasticJobs()).isEqualTo(1);
        assertThat(elastic.elastic().shrinks()).isEqualTo(1);
        assertThat(elastic.elastic().instancesShrunk()).isEqualTo(1);
        assertThat(elastic.elastic().grows()).isEqualTo(1);
        assertThat(elastic.elastic().instancesGrown()).isEqualTo(1);
        assertThat(elastic.preemptions()).isZero();
        assertThat(elastic.lostGpuHours()).isZero();
        assertThat(elastic.reclaim().max()).isEqualTo(30.0);
        assertThat(elastic.makespanSeconds()).isEqualTo(1077.5);
        assertThat(elastic.completionTime().mean()).isEqualTo((1077.5 + 130) / 2);
        // a borrowed 16 GPUs to 230 s (the instance being removed still holds its node), 8 to 330 s, 16 to 1,077.5 s.
        assertThat(tenant(elastic, "a").borrowedGpuHours()).isCloseTo((16 * 230 + 8 * 100 + 16 * 747.5) / 3600, within(1e-9));

        PolicyResult rigid = run(null);
        // Rigid, a's job is a borrower of 32 GPUs: b's job reclaims it whole at 200 s; it stops at 230 s having saved
        // nothing (no checkpoints), losing 230 s x 32 GPUs; b's job runs 230-330 s, a's starts again at 330 s and runs
        // its whole 1,000 s: done at 1,330 s.
        assertThat(rigid.preemptions()).isEqualTo(1);
        assertThat(rigid.elastic().borrowerLostGpuHours()).isCloseTo(230.0 * 32 / 3600, within(1e-9));
        assertThat(rigid.makespanSeconds()).isEqualTo(1330.0);
        assertThat(elastic.elastic().borrowerLostGpuHours()).isZero();
    }

    @Test
    void anElasticJobStartsWithItsMinimumAndGrowsWhenANodeComesFree() {
        // b's 1-node job of 100 s holds a node from 0 s; a's 4-node job arrives at 10 s: rigid it waits for 4 nodes
        // (until 100 s); elastic it starts on 3 at 10 s and grows to 4 at 100 s.
        Trace trace = new Trace("test", List.of(new TraceJob(0, 0, 100_000, "b", 8, 1, 0, null), new TraceJob(1, 10_000, 1_000_000, "a", 8, 4, 0, null)));
        PolicyResult elastic = new Simulation(trace, FOUR_NODES, policy(new ElasticRule(0.5, false, Duration.ofSeconds(30))), 1, null).run();
        // 10-100 s at 3/4: 67.5 s; saved; paused to 130 s; 932.5 s left at full size: done at 1,062.5 s.
        assertThat(elastic.makespanSeconds()).isEqualTo(1062.5);
        assertThat(elastic.elastic().grows()).isEqualTo(1);
        assertThat(elastic.queueDelay().max()).isZero();
        PolicyResult rigid = new Simulation(trace, FOUR_NODES, policy(null), 1, null).run();
        assertThat(rigid.makespanSeconds()).isEqualTo(1100.0);
        assertThat(rigid.queueDelay().max()).isEqualTo(90.0);
    }

    @Test
    void aBorrowerWaitingForExtrasToGiveWayHasNoGuaranteeWait() {
        // 3 nodes; a, b and c guaranteed 8 each. At 0 s a's elastic 2-node job starts whole (one node on idle capacity)
        // and b's 1-node job of 110 s takes b's guarantee. At 100 s b's second 1-node job fits no guarantee: a borrower,
        // it takes a's extra (minimum before extras), which is to go at 130 s. b's first job ends at 110 s and the second
        // starts on b's guarantee then: it waited 10 s as a borrower, none for its guarantee.
        Trace trace = new Trace("test", List.of(new TraceJob(0, 0, 10_000_000, "a", 8, 2, 0, null), new TraceJob(1, 0, 110_000, "b", 8, 1, 0, null),
                new TraceJob(2, 100_000, 100_000, "b", 8, 1, 0, null)));
        ClusterSpec threeNodes = new ClusterSpec(List.of(new NodePool("n", 3, 8, "gpu", 96_000, 1L << 40)));
        List<QuotaState> thirds = List.of(quota("shared/gpus", null, 24), quota("a/gpus", "shared/gpus", 8), quota("b/gpus", "shared/gpus", 8),
                quota("c/gpus", "shared/gpus", 8));
        Policy policy = new Policy("elastic", thirds, "test", IdleMode.Acceptable, Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO, false,
                Duration.ZERO, Duration.ofSeconds(10), null, null, FairSharingPreemption.Never, null, new ElasticRule(0.5, false, Duration.ofSeconds(30)));
        PolicyResult result = new Simulation(trace, threeNodes, policy, 1, null).run();
        assertThat(result.elastic().shrinks()).isEqualTo(1);
        assertThat(result.queueDelay().max()).isEqualTo(10.0);
        assertThat(result.guaranteeWait().count()).isZero();
    }

    private static PolicyResult run(ElasticRule rule) {
        return new Simulation(TRACE, FOUR_NODES, policy(rule), 1, null).run();
    }

    private static Policy policy(ElasticRule rule) {
        return new Policy(rule == null ? "rigid" : "elastic", HALF_EACH, "test", IdleMode.Acceptable, Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO,
                false, Duration.ZERO, Duration.ofSeconds(10), null, null, FairSharingPreemption.Never, null, rule);
    }

    private static TenantResult tenant(PolicyResult result, String name) {
        return result.tenants().stream().filter(t -> t.tenant().equals(name)).findFirst().orElseThrow();
    }

    private static QuotaState quota(String id, String parent, int gpus) {
        return new QuotaState(QuotaId.parse(id), QuotaType.General, null, parent == null ? null : QuotaId.parse(parent), new Resources(0, 0, gpus, null),
                null, WithinQuota.Never);
    }
}
