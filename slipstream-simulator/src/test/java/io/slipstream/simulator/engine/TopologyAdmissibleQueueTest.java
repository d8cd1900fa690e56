package io.slipstream.simulator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.spec.IdleMode;
import io.slipstream.scheduler.Defragmentation;
import io.slipstream.scheduler.FairSharingPreemption;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.simulator.Fingerprint;
import io.slipstream.simulator.input.ClusterSpec;
import io.slipstream.simulator.input.JobPlacement;
import io.slipstream.simulator.input.NodePool;
import io.slipstream.simulator.input.PlacementRule;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.input.TopologyLevel;
import io.slipstream.simulator.input.Trace;
import io.slipstream.simulator.input.TraceJob;
import io.slipstream.simulator.report.PolicyResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The simulator's shortcuts (only the jobs the core could admit, the guarantee cut, a state kept between cycles) hold
 * for gangs placed by topology too: random traces on 10 nodes in blocks of 4 and racks of 2 (the last block of 2), with
 * Required (also relaxed to Preferred after 20 minutes), Preferred and the trace's own placements, replayed the three
 * ways; every figure, the topology's included, must agree, and no Required group is ever admitted outside one domain. All but the borrowers' waits for the topology:
 * what the core tells a borrower depends on the other borrowers it is shown (one over its quota's fair share is told
 * WaitingForFairShare, not that no domain has room), so that figure is the core's word in each replay, not the same.
 */
class TopologyAdmissibleQueueTest {
    private static final Set<String> BORROWERS_TOLD = Set.of("borrowerTopologyWait");
    private static final ClusterSpec CLUSTER = new ClusterSpec(List.of(new NodePool("n", 10, 8, "gpu", 96_000, 1L << 40)),
            List.of(new TopologyLevel("block", 4), new TopologyLevel("rack", 2)));

    static Stream<Arguments> replays() {
        List<Arguments> cases = new ArrayList<>();
        PlacementRule[] rules = {new PlacementRule("rack", true, 2, false), new PlacementRule("rack", false, 2, false),
                new PlacementRule("block", true, 3, true), new PlacementRule("rack", true, 2, false, Duration.ofMinutes(20))};
        for (long seed = 1; seed <= 4; seed++) {
            for (PlacementRule rule : rules) {
                cases.add(Arguments.of(seed, rule, seed % 2 == 0 ? IdleMode.Acceptable : null, seed >= 3));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "seed {0}, {1}, idle mode {2}, moves {3}")
    @MethodSource("replays")
    void givesTheSameFiguresAsTheWholeQueue(long seed, PlacementRule rule, IdleMode mode, boolean moves) {
        Trace trace = randomTrace(seed, 400);
        List<QuotaState> plain = seed % 2 == 0 ? AdmissibleQueueTest.quotas() : AdmissibleQueueTest.plainQuotas();
        List<QuotaState> quotas = moves ? plain.stream().map(q -> q.withAllowMoves(true)).toList() : plain;
        Policy policy = new Policy("p", quotas, "test", mode, Duration.ofSeconds(30), Duration.ofMinutes(10), Duration.ofSeconds(20), seed == 2,
                Duration.ofSeconds(15), Duration.ofSeconds(10), seed == 3 ? Duration.ofHours(3) : null, moves ? new Defragmentation(2, Duration.ofMinutes(20)) : null,
                FairSharingPreemption.Never, rule);

        PolicyResult whole = new Simulation(trace, CLUSTER, policy, seed, null, false, false).run();
        PolicyResult admissible = new Simulation(trace, CLUSTER, policy, seed, null, true, false).run();
        PolicyResult kept = new Simulation(trace, CLUSTER, policy, seed, null, true, true).run();

        assertThat(whole.completed()).isPositive();
        assertThat(whole.topology().constrained()).isPositive();
        assertThat(whole.topology().requiredOutsideDomain()).isZero();
        Fingerprint.assertSame(admissible, whole, BORROWERS_TOLD);
        Fingerprint.assertSame(kept, whole, BORROWERS_TOLD);
    }

    /** Single GPUs and gangs of 2 to 4 instances of 4 or 8 GPUs; one job in ten names a placement of its own. */
    static Trace randomTrace(long seed, int count) {
        SplittableRandom random = new SplittableRandom(seed);
        String[] tenants = {"a", "b", "c", "d", "team"};
        IdleMode[] modes = {null, IdleMode.Disabled, IdleMode.Acceptable, IdleMode.OnlyIdle};
        List<TraceJob> jobs = new ArrayList<>();
        long t = 0;
        for (int i = 0; i < count; i++) {
            t += random.nextLong(90_000);
            boolean gang = random.nextInt(4) == 0;
            int gpus = gang ? (random.nextBoolean() ? 8 : 4) : 1 << random.nextInt(3);
            int instances = gang ? 2 + random.nextInt(3) : 1;
            JobPlacement placement = random.nextInt(10) == 0 ? new JobPlacement(random.nextBoolean() ? "rack" : "block", random.nextBoolean()) : null;
            jobs.add(new TraceJob(i, t, 60_000 + random.nextLong(3_600_000), tenants[random.nextInt(tenants.length)], gpus, instances,
                    random.nextInt(3), modes[random.nextInt(modes.length)], placement));
        }
        return new Trace("random-topology-" + seed, jobs);
    }
}
