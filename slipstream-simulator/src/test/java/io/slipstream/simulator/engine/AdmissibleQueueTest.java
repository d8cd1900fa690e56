package io.slipstream.simulator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;
import io.slipstream.scheduler.Defragmentation;
import io.slipstream.scheduler.FairSharingPreemption;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.simulator.Fingerprint;
import io.slipstream.simulator.input.ClusterSpec;
import io.slipstream.simulator.input.ElasticRule;
import io.slipstream.simulator.input.NodePool;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.input.Trace;
import io.slipstream.simulator.input.TraceJob;
import io.slipstream.simulator.report.PolicyResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Handing the core only the queued jobs it could admit, and a state kept between cycles, must not change a single
 * figure: random traces (gangs and single GPUs, every idle mode, priorities, failures, moves, a nested quota, one that
 * preempts within itself) are replayed with the whole queue and a state built for each cycle, with the admissible part,
 * and with both the admissible part and the kept state; every figure of the results is compared.
 */
public class AdmissibleQueueTest {
    static Stream<Arguments> replays() {
        List<Arguments> cases = new ArrayList<>();
        // Checkpoint on notice alternates over the seeds and modes (every pair of seed parity and mode gets both), rather
        // than doubling the cases: each replay is three whole simulations.
        IdleMode[] modes = {null, IdleMode.Disabled, IdleMode.Acceptable};
        for (long seed = 1; seed <= 6; seed++) {
            for (int m = 0; m < modes.length; m++) {
                cases.add(Arguments.of(seed, modes[m], (seed + m + seed / 3) % 2 == 0, seed % 2 == 1));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "seed {0}, idle mode {1}, checkpoint on notice {2}, moves {3}")
    @MethodSource("replays")
    void givesTheSameFiguresAsTheWholeQueue(long seed, IdleMode mode, boolean onNotice, boolean moves) {
        Trace trace = randomTrace(seed, 400);
        ClusterSpec cluster = new ClusterSpec(List.of(new NodePool("n", 6, 8, "gpu", 96_000, 1L << 40)));
        // Moves: every quota allows them, at most 2 a cycle, a run moved at most every 20 minutes.
        // Seeds 5 and 6: no quota with a max or preempting within (then the simulator also bounds borrowers by what their pool can lend).
        List<QuotaState> plain = seed > 4 ? plainQuotas() : quotas();
        List<QuotaState> quotas = moves ? plain.stream().map(q -> q.withAllowMoves(true)).toList() : plain;
        Policy policy = new Policy("p", quotas, "test", mode, Duration.ofSeconds(30), Duration.ofMinutes(10), Duration.ofSeconds(20), onNotice,
                Duration.ofSeconds(15), Duration.ofSeconds(10), seed % 2 == 0 ? Duration.ofHours(3) : null,
                moves ? new Defragmentation(2, Duration.ofMinutes(20)) : null);

        // The reference: the whole queue, and the core's state built anew from every run for each cycle.
        PolicyResult whole = new Simulation(trace, cluster, policy, seed, null, false, false).run();
        PolicyResult admissible = new Simulation(trace, cluster, policy, seed, null, true, false).run();
        PolicyResult kept = new Simulation(trace, cluster, policy, seed, null, true, true).run();

        assertThat(whole.completed()).isPositive();
        Fingerprint.assertSame(admissible, whole);
        Fingerprint.assertSame(kept, whole);
    }

    static Stream<Arguments> fairReplays() {
        List<Arguments> cases = new ArrayList<>();
        for (long seed = 1; seed <= 6; seed++) {
            for (IdleMode mode : new IdleMode[] {null, IdleMode.Acceptable}) {
                cases.add(Arguments.of(seed, mode));
            }
        }
        return cases.stream();
    }

    /**
     * With preemption for fairness the simulator also shows the borrowers that could preempt: the same figures again,
     * with weights (b 3, c 0.5, d 2) and, for seeds up to 4, the tree with a max and a quota that preempts within.
     */
    @ParameterizedTest(name = "seed {0}, idle mode {1}, preemption for fairness")
    @MethodSource("fairReplays")
    void givesTheSameFiguresAsTheWholeQueueWithPreemptionForFairness(long seed, IdleMode mode) {
        Trace trace = randomTrace(seed, 400);
        ClusterSpec cluster = new ClusterSpec(List.of(new NodePool("n", 6, 8, "gpu", 96_000, 1L << 40)));
        List<QuotaState> quotas = (seed > 4 ? plainQuotas() : quotas()).stream().map(q -> weighted(q, switch (q.id().workspace()) {
            case "b" -> 3;
            case "c" -> 0.5;
            case "d" -> 2;
            default -> 1;
        })).toList();
        Policy policy = new Policy("p", quotas, "test", mode, Duration.ofSeconds(30), Duration.ofMinutes(10), Duration.ofSeconds(20), seed % 2 == 0,
                Duration.ofSeconds(15), Duration.ofSeconds(10), seed % 3 == 0 ? Duration.ofHours(3) : null, null, FairSharingPreemption.LessThanOrEqualToFinalShare);

        PolicyResult whole = new Simulation(trace, cluster, policy, seed, null, false, false).run();
        PolicyResult admissible = new Simulation(trace, cluster, policy, seed, null, true, false).run();
        PolicyResult kept = new Simulation(trace, cluster, policy, seed, null, true, true).run();

        assertThat(whole.completed()).isPositive();
        Fingerprint.assertSame(admissible, whole);
        Fingerprint.assertSame(kept, whole);
    }

    static Stream<Arguments> elasticReplays() {
        List<Arguments> cases = new ArrayList<>();
        for (long seed = 1; seed <= 6; seed++) {
            for (IdleMode mode : new IdleMode[] {null, IdleMode.Acceptable}) {
                cases.add(Arguments.of(seed, mode));
            }
        }
        return cases.stream();
    }

    /**
     * With elastic borrowers (gangs of 2 to 4 nodes, minimum half) the simulator also calls the core when nothing is queued
     * but a running job could grow, and cuts the queue by each elastic job's minimum: the same figures again, with
     * checkpoints on notice, failures, moves and preemption for fairness in turn, over both quota trees.
     */
    @ParameterizedTest(name = "seed {0}, idle mode {1}, elastic")
    @MethodSource("elasticReplays")
    void givesTheSameFiguresAsTheWholeQueueWithElasticJobs(long seed, IdleMode mode) {
        Trace trace = randomTrace(seed, 400, 4);
        ClusterSpec cluster = new ClusterSpec(List.of(new NodePool("n", 6, 8, "gpu", 96_000, 1L << 40)));
        boolean moves = seed % 3 == 1;
        List<QuotaState> plain = seed > 4 ? plainQuotas() : quotas();
        List<QuotaState> quotas = moves ? plain.stream().map(q -> q.withAllowMoves(true)).toList() : plain;
        Policy policy = new Policy("p", quotas, "test", mode, Duration.ofSeconds(30), Duration.ofMinutes(10), Duration.ofSeconds(20), seed % 2 == 0,
                Duration.ofSeconds(15), Duration.ofSeconds(10), seed % 3 == 0 ? Duration.ofHours(3) : null, moves ? new Defragmentation(2, Duration.ofMinutes(20)) : null,
                seed % 3 == 2 ? FairSharingPreemption.LessThanOrEqualToFinalShare : FairSharingPreemption.Never, null,
                new ElasticRule(0.5, false, Duration.ofSeconds(30)));

        PolicyResult whole = new Simulation(trace, cluster, policy, seed, null, false, false).run();
        PolicyResult admissible = new Simulation(trace, cluster, policy, seed, null, true, false).run();
        PolicyResult kept = new Simulation(trace, cluster, policy, seed, null, true, true).run();

        assertThat(whole.completed()).isPositive();
        assertThat(whole.elastic().elasticJobs()).isPositive();
        assertThat(whole.elastic().grows() + whole.elastic().instancesShrunk()).as("elastic jobs changed size").isPositive();
        Fingerprint.assertSame(admissible, whole);
        Fingerprint.assertSame(kept, whole);
    }

    private static QuotaState weighted(QuotaState q, double weight) {
        return q.parent() == null ? q : new QuotaState(q.id(), q.type(), q.gpuModel(), q.parent(), q.min(), q.max(), q.withinQuota(), q.allowMoves(), weight);
    }

    /** Tenants a (a nested quota under team), b (preempts its own lower-priority runs), c (small, with a max), d (none of its own). */
    public static List<QuotaState> quotas() {
        return List.of(quota("shared/gpus", null, 48, WithinQuota.Never), quota("team/gpus", "shared/gpus", 20, WithinQuota.Never),
                quota("a/gpus", "team/gpus", 12, WithinQuota.Never), quota("b/gpus", "shared/gpus", 16, WithinQuota.LowerPriority),
                quota("c/gpus", "shared/gpus", 4, 10, WithinQuota.Never), quota("d/gpus", "shared/gpus", 0, WithinQuota.Never));
    }

    /** The same tree with no max and no preemption within a quota. */
    static List<QuotaState> plainQuotas() {
        return List.of(quota("shared/gpus", null, 48, WithinQuota.Never), quota("team/gpus", "shared/gpus", 20, WithinQuota.Never),
                quota("a/gpus", "team/gpus", 12, WithinQuota.Never), quota("b/gpus", "shared/gpus", 16, WithinQuota.Never),
                quota("c/gpus", "shared/gpus", 4, WithinQuota.Never), quota("d/gpus", "shared/gpus", 0, WithinQuota.Never));
    }

    public static Trace randomTrace(long seed, int count) {
        return randomTrace(seed, count, 3);
    }

    /** A random trace whose gangs have 1 to {@code mostInstances} instances of 8 GPUs. */
    static Trace randomTrace(long seed, int count, int mostInstances) {
        SplittableRandom random = new SplittableRandom(seed);
        String[] tenants = {"a", "b", "c", "d", "team"};
        IdleMode[] modes = {null, IdleMode.Disabled, IdleMode.Acceptable, IdleMode.OnlyIdle};
        List<TraceJob> jobs = new ArrayList<>();
        long t = 0;
        for (int i = 0; i < count; i++) {
            t += random.nextLong(90_000);
            boolean gang = random.nextInt(5) == 0;
            int gpus = gang ? 8 : 1 << random.nextInt(3);
            int instances = gang ? 1 + random.nextInt(mostInstances) : 1;
            jobs.add(new TraceJob(i, t, 60_000 + random.nextLong(3_600_000), tenants[random.nextInt(tenants.length)], gpus, instances,
                    random.nextInt(3), modes[random.nextInt(modes.length)]));
        }
        return new Trace("random-" + seed, jobs);
    }

    private static QuotaState quota(String id, String parent, int gpus, WithinQuota within) {
        return quota(id, parent, gpus, -1, within);
    }

    private static QuotaState quota(String id, String parent, int gpus, int max, WithinQuota within) {
        return new QuotaState(QuotaId.parse(id), QuotaType.General, null, parent == null ? null : QuotaId.parse(parent), new Resources(0, 0, gpus, null),
                max < 0 ? null : new Resources(Long.MAX_VALUE, Long.MAX_VALUE, max, null), within);
    }
}
