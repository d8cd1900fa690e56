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
import io.slipstream.simulator.input.NodePool;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.input.Trace;
import io.slipstream.simulator.input.TraceJob;
import io.slipstream.simulator.report.PolicyResult;
import io.slipstream.simulator.report.ReclaimSample;
import io.slipstream.simulator.report.TenantResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Small traces whose outcome can be worked out by hand: every figure asserted here is derived in a comment. */
class SimulationTest {
    private static final ClusterSpec ONE_NODE = new ClusterSpec(List.of(new NodePool("n", 1, 8, "gpu", 96_000, 1L << 40)));
    private static final List<QuotaState> HALF_EACH = List.of(
            quota("shared/gpus", null, 8), quota("a/gpus", "shared/gpus", 4), quota("b/gpus", "shared/gpus", 4));

    @Test
    void fixedQuotasLeaveIdleGpusThatBorrowingUses() {
        // Tenant a submits eight 1-GPU jobs of 100 s at t=0; its quota is 4 of the node's 8 GPUs.
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            jobs.add(new TraceJob(i, 0, 100_000, "a", 1, 1, 0, null));
        }
        Trace trace = new Trace("test", jobs);

        PolicyResult fixed = run(trace, policy(IdleMode.Disabled, false));
        // Four start at 0, four at 100 s: mean delay 50 s; 800 GPU-s served in 200 s on 8 GPUs.
        assertThat(fixed.queueDelay().mean()).isEqualTo(50.0);
        assertThat(fixed.makespanSeconds()).isEqualTo(200.0);
        assertThat(fixed.utilization()).isCloseTo(0.5, within(1e-9));
        assertThat(fixed.borrowedGpuHours()).isZero();

        PolicyResult borrowing = run(trace, policy(IdleMode.Acceptable, false));
        // All eight start at once, four on b's idle guarantee.
        assertThat(borrowing.queueDelay().mean()).isZero();
        assertThat(borrowing.utilization()).isCloseTo(1.0, within(1e-9));
        assertThat(borrowing.borrowedGpuHours()).isCloseTo(4 * 100 / 3600.0, within(1e-9));
        TenantResult a = borrowing.tenants().stream().filter(t -> t.tenant().equals("a")).findFirst().orElseThrow();
        assertThat(a.borrowedGpuHours()).isCloseTo(4 * 100 / 3600.0, within(1e-9));
    }

    @Test
    void aLenderGetsItsGuaranteeBackWithinTheGracePeriodAndOneInterval() {
        PolicyResult result = run(reclaimTrace(), policy(IdleMode.Acceptable, false));
        // b's 4-GPU job arrives at 205 s; the cycle at the 210 s tick preempts a's four borrowers; they are killed at
        // 240 s (grace 30 s), and b starts at the 240 s tick: 35 s after it arrived.
        assertThat(result.preemptions()).isEqualTo(4);
        assertThat(result.reclaim().count()).isEqualTo(1);
        assertThat(result.reclaim().max()).isEqualTo(35.0);
        // Taken apart: the clock from b's arrival (205 s), four victims chosen in one cycle (210 s), b started at 240 s.
        assertThat(result.longestReclaims()).containsExactly(new ReclaimSample(8, "b", 4, 205.0, 210.0, 210.0, 1, 4, 240.0));
        assertThat(result.longestReclaims().get(0).afterLastVictims()).isEqualTo(30.0);
        // Each borrower had saved checkpoints at progress 60, 120, 180 s (each saved 10 s later); killed at 240 s, it
        // loses 60 s of one GPU's work: 4 x 60 GPU-s in all.
        assertThat(result.lostGpuHours()).isCloseTo(4 * 60 / 3600.0, within(1e-9));
        assertThat(result.completed()).isEqualTo(9);
        // The victims resume from step 180 when b is done (340 s): 820 s to go, done at 1160 s.
        assertThat(result.makespanSeconds()).isEqualTo(1160.0);
    }

    @Test
    void aReclaimOnThreeNodesTakesTheGracePeriod() {
        // b fills 3 nodes x 4 GPUs with twelve 1-GPU jobs at 0 s (8 on its guarantee, 4 borrowed from a); a asks for
        // 4 GPUs at 100 s: the cycle at 100 s preempts the 4 borrowers in one round, they stop at 130 s, a starts then.
        PolicyResult result = new Simulation(new Trace("test", lenderTrace(false)), THREE_NODES, threeNodePolicy(), 1, null).run();
        assertThat(result.longestReclaims()).containsExactly(new ReclaimSample(12, "a", 4, 100.0, 100.0, 100.0, 1, 4, 130.0));
    }

    /**
     * The ElasticFlow replay's 925 s maximum reclaim in miniature (docs/simulation.md): a's own 1-GPU job, submitted
     * at 101 s, borrows at 110 s while the hold for a's reclaim charges a's guarantee; at 130 s the victims have
     * stopped, the hold is gone, and the scheduler's Promote step (before the guaranteed pass) moves the 1-GPU job
     * onto a's guarantee: the 4-GPU run no longer fits it and waits until b's jobs end, at 10,000 s. The gap is in the
     * scheduling core (slipstream-scheduler); this is its regression test, enabled once the hold lasts through the
     * cycle in which the victims have stopped.
     */
    @Test
    void aPromotionDoesNotTakeTheGuaranteeAReclaimFreed() {
        PolicyResult result = new Simulation(new Trace("test", lenderTrace(true)), THREE_NODES, threeNodePolicy(), 1, null).run();
        assertThat(result.reclaim().max()).isLessThanOrEqualTo(40.0); // the grace period and one interval
    }

    private static final ClusterSpec THREE_NODES = new ClusterSpec(List.of(new NodePool("n", 3, 4, "gpu", 96_000, 1L << 40)));

    private static List<TraceJob> lenderTrace(boolean smallJobOfTheLender) {
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            jobs.add(new TraceJob(i, 0, i == 0 ? 105_000 : 10_000_000, "b", 1, 1, 0, null)); // job 0 ends at 105 s: one GPU to lend
        }
        jobs.add(new TraceJob(12, 100_000, 1_000_000, "a", 4, 1, 0, null));
        if (smallJobOfTheLender) {
            jobs.add(new TraceJob(13, 101_000, 1_000_000, "a", 1, 1, 0, null));
        }
        return jobs;
    }

    private static Policy threeNodePolicy() {
        List<QuotaState> quotas = List.of(quota("shared/gpus", null, 12), quota("a/gpus", "shared/gpus", 4), quota("b/gpus", "shared/gpus", 8));
        return new Policy("borrowing", quotas, "test", IdleMode.Acceptable, Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO, false, Duration.ZERO,
                Duration.ofSeconds(10), null);
    }

    @Test
    void checkpointOnNoticeLosesNothingAndStopsAsSoonAsSaved() {
        PolicyResult result = run(reclaimTrace(), policy(IdleMode.Acceptable, true));
        // The notice at 210 s: each borrower saves its 210 s of progress in 10 s and stops at 220 s; b starts then.
        assertThat(result.lostGpuHours()).isZero();
        assertThat(result.reclaim().max()).isEqualTo(15.0);
        // b runs 220..320 s; the victims resume at 320 s with 790 s to go.
        assertThat(result.makespanSeconds()).isEqualTo(1110.0);
    }

    @Test
    void aJobThatCanNeverStartIsCountedApartAndLeftOutOfTheDelays() {
        Trace trace = new Trace("test", List.of(new TraceJob(0, 0, 100_000, "a", 8, 2, 0, null), new TraceJob(1, 50_000, 100_000, "a", 1, 1, 0, null)));
        PolicyResult result = run(trace, policy(IdleMode.Acceptable, false));
        // The 16-GPU job fits no 8-GPU node pair here (one node): it never starts. The 1-GPU job starts at the 50 s
        // tick: the only delay is its 0 s (counting the other until the replay's end would make the mean 75 s).
        assertThat(result.neverStarted()).isEqualTo(1);
        assertThat(result.neverStartedGpuHours()).isCloseTo(16 * 100 / 3600.0, within(1e-9));
        assertThat(result.completed()).isEqualTo(1);
        assertThat(result.queueDelay().count()).isEqualTo(1);
        assertThat(result.queueDelay().max()).isZero();
        assertThat(result.completionTime().count()).isEqualTo(1);
        TenantResult a = result.tenants().get(0);
        assertThat(a.neverStarted()).isEqualTo(1);
        assertThat(a.neverStartedGpuHours()).isCloseTo(16 * 100 / 3600.0, within(1e-9));
        assertThat(a.queueDelay().count()).isEqualTo(1);
        // Where policies are compared, it counts as waiting at least until the replay ended (the other job's end, 150 s).
        assertThat(a.queueDelayAtLeast().count()).isEqualTo(2);
        assertThat(a.queueDelayAtLeast().max()).isEqualTo(150.0);
    }

    @Test
    void theSameSeedGivesTheSameReplayAndFailuresRestartFromTheLastCheckpoint() {
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            jobs.add(new TraceJob(i, i * 60_000L, 3_600_000, i % 2 == 0 ? "a" : "b", 1 + i % 4, 1 + i % 2, 0, null));
        }
        Trace trace = new Trace("test", jobs);
        Policy failing = new Policy("failing", HALF_EACH, "test", IdleMode.Acceptable, Duration.ofSeconds(30), Duration.ofMinutes(10),
                Duration.ofSeconds(10), false, Duration.ofSeconds(20), Duration.ofSeconds(10), Duration.ofHours(2));
        PolicyResult first = new Simulation(trace, ONE_NODE, failing, 42, null).run();
        PolicyResult again = new Simulation(trace, ONE_NODE, failing, 42, null).run();
        PolicyResult other = new Simulation(trace, ONE_NODE, failing, 43, null).run();

        assertThat(first.failures()).isPositive();
        assertThat(first.lostGpuHours()).isPositive();
        assertThat(again.failures()).isEqualTo(first.failures());
        assertThat(again.allocatedGpuHours()).isEqualTo(first.allocatedGpuHours());
        assertThat(again.queueDelay().values()).containsExactly(first.queueDelay().values());
        assertThat(other.allocatedGpuHours()).isNotEqualTo(first.allocatedGpuHours());
        assertThat(first.completed()).isEqualTo(40);
    }

    /**
     * The story in miniature: 3 nodes of 8 GPUs, a (idle), b and c guaranteed 8 each. b queues eight 4-GPU jobs
     * of 10,000 s at 0 s: two on its guarantee, four borrowed (a's 8 and c's 8). c queues three of 1,000 s at 100 s.
     */
    @Test
    void preemptionForFairnessGivesCHalfOfAsIdleGpusAndTheReportWeighsWhatEachBorrowed() {
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            jobs.add(new TraceJob(i, 0, 10_000_000, "b", 4, 1, 0, null));
        }
        for (int i = 8; i < 11; i++) {
            jobs.add(new TraceJob(i, 100_000, 1_000_000, "c", 4, 1, 0, null));
        }
        Trace trace = new Trace("test", jobs);
        ClusterSpec cluster = new ClusterSpec(List.of(new NodePool("n", 3, 8, "gpu", 96_000, 1L << 40)));
        List<QuotaState> quotas = List.of(quota("shared/gpus", null, 24), quota("a/gpus", "shared/gpus", 8), quota("b/gpus", "shared/gpus", 8),
                quota("c/gpus", "shared/gpus", 8));
        Policy fair = new Policy("fair", quotas, "test", IdleMode.Acceptable, Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO, false, Duration.ZERO,
                Duration.ofSeconds(10), null, null, FairSharingPreemption.LessThanOrEqualToFinalShare);
        Policy orderOnly = new Policy("order", quotas, "test", IdleMode.Acceptable, Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO, false,
                Duration.ZERO, Duration.ofSeconds(10), null, null, FairSharingPreemption.Never);
        PolicyResult withPreemption = new Simulation(trace, cluster, fair, 1, null).run();
        PolicyResult without = new Simulation(trace, cluster, orderOnly, 1, null).run();

        // At 100 s c's first two reclaim its guarantee from b (b's two borrowers there stop at 130 s), and with them
        // gone from b's borrowing b holds a's 8 alone, 8/24 of the pool against c's 4/24 with its third: one of b's
        // borrowers there goes too (b keeps 4/24). They stop at 130 s, and c's third borrows its 4 GPUs from then until
        // c's first two end at 1,130 s, when it is promoted onto c's guarantee.
        TenantResult c = tenant(withPreemption, "c");
        assertThat(c.borrowedGpuHours()).isCloseTo(4 * 1000 / 3600.0, within(1e-9));
        assertThat(withPreemption.preemptions()).isEqualTo(3);
        // Without preemption it waits for c's guarantee, at 1,130 s: it borrows nothing.
        assertThat(tenant(without, "c").borrowedGpuHours()).isZero();
        // c's entitlement while it wants idle capacity (100 s to 1,130 s), half of what is borrowed (b always wants some):
        // 16 GPUs for 30 s, 8 for 1,000 s: (480 + 8,000) / 2 = 4,240 GPU-s; it borrowed 4,000.
        assertThat(c.entitledGpuHours()).isCloseTo(4240 / 3600.0, within(1e-9));
        assertThat(c.entitlementRatio()).isCloseTo(4000 / 4240.0, within(1e-9));
        // Without preemption c waits for b's borrowers, while b keeps 16 and is entitled to half: the index is lower.
        assertThat(without.fairnessIndex()).isLessThan(withPreemption.fairnessIndex());
        assertThat(PolicyResult.jain(1, 1, Double.NaN)).isEqualTo(1.0);
        assertThat(PolicyResult.jain(1, 0)).isEqualTo(0.5);
    }

    /**
     * A guarantee wait counts only while the run fits its guarantee. 3 nodes of 8 GPUs; a guaranteed 16, b 8; no
     * borrowing. At 0 s a's and b's 4-GPU jobs fill the nodes (a: 500 s on n-1, two of 50 s on n-1 and n-2, one of
     * 5,000 s on n-3; b: two of 5,000 s on n-2 and n-3). At 50 s two halves of nodes are free, 8 GPUs of a's guarantee.
     */
    @Test
    void aGuaranteeWaitCountsOnlyWhileTheRunFitsItsGuarantee() {
        List<TraceJob> jobs = List.of(new TraceJob(0, 0, 500_000, "a", 4, 1, 0, null), new TraceJob(1, 0, 50_000, "a", 4, 1, 0, null),
                new TraceJob(2, 0, 5_000_000, "b", 4, 1, 0, null), new TraceJob(3, 0, 50_000, "a", 4, 1, 0, null),
                new TraceJob(4, 0, 5_000_000, "b", 4, 1, 0, null), new TraceJob(5, 0, 5_000_000, "a", 4, 1, 0, null),
                // a's 8-GPU job at 60 s fits a's guarantee but no node: it waits for nodes from 60 s.
                new TraceJob(6, 60_000, 100_000, "a", 8, 1, 0, null),
                // a's 4-GPU job of higher priority at 70 s takes half a node and a's guarantee: the 8-GPU job waits for its
                // quota, not for its guarantee, until the 500 s job ends; then for nodes again, until this one ends at 600 s.
                new TraceJob(7, 70_000, 530_000, "a", 4, 1, 1, null));
        ClusterSpec cluster = new ClusterSpec(List.of(new NodePool("n", 3, 8, "gpu", 96_000, 1L << 40)));
        List<QuotaState> quotas = List.of(quota("shared/gpus", null, 24), quota("a/gpus", "shared/gpus", 16), quota("b/gpus", "shared/gpus", 8));
        Policy fixed = new Policy("fixed", quotas, "test", IdleMode.Disabled, Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO, false, Duration.ZERO,
                Duration.ofSeconds(10), null);
        PolicyResult result = new Simulation(new Trace("test", jobs), cluster, fixed, 1, null).run();
        // Its wait: 60-70 s and 500-600 s, not the 430 s its quota's own run held its room.
        assertThat(result.guaranteeWait().count()).isEqualTo(1);
        assertThat(result.guaranteeWait().max()).isEqualTo(110.0);
        assertThat(result.queueDelay().max()).isEqualTo(540.0);
    }

    private static TenantResult tenant(PolicyResult result, String name) {
        return result.tenants().stream().filter(t -> t.tenant().equals(name)).findFirst().orElseThrow();
    }

    /** Tenant a fills the node with eight 1-GPU jobs of 1000 s at t=0 (four borrowed); b asks for 4 GPUs at 205 s. */
    private static Trace reclaimTrace() {
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            jobs.add(new TraceJob(i, 0, 1_000_000, "a", 1, 1, 0, null));
        }
        jobs.add(new TraceJob(8, 205_000, 100_000, "b", 4, 1, 0, null));
        return new Trace("test", jobs);
    }

    private static Policy policy(IdleMode mode, boolean onNotice) {
        return new Policy(mode.name(), HALF_EACH, "test", mode, Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(10), onNotice,
                Duration.ZERO, Duration.ofSeconds(10), null);
    }

    private static PolicyResult run(Trace trace, Policy policy) {
        return new Simulation(trace, ONE_NODE, policy, 1, null).run();
    }

    private static QuotaState quota(String id, String parent, int gpus) {
        return new QuotaState(QuotaId.parse(id), QuotaType.General, null, parent == null ? null : QuotaId.parse(parent), new Resources(0, 0, gpus, null), null, WithinQuota.Never);
    }
}
