package io.slipstream.scheduler;

import static io.slipstream.api.run.RealTimeResources.InQuota;
import static io.slipstream.api.run.RealTimeResources.NotInQuota;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static io.slipstream.scheduler.Builders.nodes;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import io.slipstream.api.spec.IdleMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Borrowers served in share order ({@link BorrowingOrder}), told by the story: 3 nodes of 8 GPUs under one root
 * of 24; teams a, b and c guaranteed 8 each; a is idle; b queued 40 four-GPU jobs first, c 6 later, all Acceptable.
 * Before, b took all of a's idle GPUs for as long as its queue lasted. Without preemption for fairness, only the
 * capacity that is free while both are queued is divided.
 */
class FairSharingTest {
    /** Share order alone: preemption for fairness is FairPreemptionTest's. */
    private final Scheduler scheduler = new Scheduler(Defragmentation.DEFAULT, FairSharingPreemption.Never);

    private static List<QuotaState> teams(double weightB, double weightC) {
        return List.of(aQuota("org/root").minGpus(24).build(), aQuota("a/gpu").minGpus(8).parent("org/root").build(),
                aQuota("b/gpu").minGpus(8).parent("org/root").weight(weightB).build(), aQuota("c/gpu").minGpus(8).parent("org/root").weight(weightC).build());
    }

    /** b's guaranteed runs on n-1 and c's on n-2 (four GPUs each); n-3 is a's, idle. */
    private static List<ActiveRun> guaranteed(int gpus) {
        List<ActiveRun> active = new ArrayList<>();
        for (int i = 0; i < 8 / gpus; i++) {
            active.add(aRun("b-own-" + i).quota("b/gpu").idle(IdleMode.Acceptable).gpus(gpus).running(InQuota, i * gpus, "n-1"));
            active.add(aRun("c-own-" + i).quota("c/gpu").idle(IdleMode.Acceptable).gpus(gpus).submittedSecondsAfterStart(60).running(InQuota, i * gpus, "n-2"));
        }
        return active;
    }

    /** b's queue (submitted first, from t=0) and c's (from t=60 s), {@code gpus} GPUs a run. */
    private static List<PendingRun> queues(int b, int c, int gpus) {
        List<PendingRun> pending = new ArrayList<>();
        for (int i = 0; i < b; i++) {
            pending.add(aRun(String.format("b-%02d", i)).quota("b/gpu").idle(IdleMode.Acceptable).gpus(gpus).submittedSecondsAfterStart(i).build());
        }
        for (int i = 0; i < c; i++) {
            pending.add(aRun(String.format("c-%02d", i)).quota("c/gpu").idle(IdleMode.Acceptable).gpus(gpus).submittedSecondsAfterStart(60 + i).build());
        }
        return pending;
    }

    /** GPUs admitted this cycle on idle capacity, by team (the run's name up to its dash). */
    private static Map<String, Integer> borrowedGpus(CycleResult result, List<PendingRun> pending) {
        Map<String, PendingRun> byId = new HashMap<>();
        pending.forEach(run -> byId.put(run.id().value(), run));
        Map<String, Integer> gpus = new TreeMap<>();
        for (Decision decision : result.decisions()) {
            if (decision instanceof Decision.Admit admit) {
                assertThat(admit.realTimeResources()).isEqualTo(NotInQuota);
                PendingRun run = byId.get(admit.runId().value());
                gpus.merge(run.id().value().substring(0, 1), run.instances().stream().mapToInt(i -> i.resources().gpu()).sum(), Integer::sum);
            }
        }
        return gpus;
    }

    @Test
    void withEqualWeightsCGetsHalfOfTheIdleGpusInTheFirstCycleWhereBothAreQueued() {
        List<PendingRun> pending = queues(36, 4, 4);
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 3, "sim-gpu"), teams(1, 1), guaranteed(4), pending), Builders.T0);
        assertThat(borrowedGpus(result, pending)).isEqualTo(Map.of("b", 4, "c", 4));
    }

    @Test
    void withWeightsOneToThreeCGetsThreeQuarters() {
        // a's 8 idle GPUs in four-GPU runs can only be halved: two-GPU runs show the weights.
        List<PendingRun> pending = queues(36, 6, 2);
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 3, "sim-gpu"), teams(1, 3), guaranteed(2), pending), Builders.T0);
        assertThat(borrowedGpus(result, pending)).isEqualTo(Map.of("b", 2, "c", 6));
    }

    @Test
    void asBsBorrowedRunsEndCTakesTheFreedGpusUntilBothHoldHalf() {
        List<ActiveRun> active = new ArrayList<>(guaranteed(4));
        active.add(aRun("b-borrowed-1").quota("b/gpu").idle(IdleMode.Acceptable).gpus(4).running(NotInQuota, 0, "n-3"));
        active.add(aRun("b-borrowed-2").quota("b/gpu").idle(IdleMode.Acceptable).gpus(4).running(NotInQuota, 4, "n-3"));
        List<PendingRun> pending = queues(34, 4, 4);
        List<QuotaState> quotas = teams(1, 1);

        // Everything is taken: b, which holds all of a's idle GPUs, is told it holds twice its fair share.
        CycleResult full = scheduler.schedule(new ClusterSnapshot(nodes("n", 3, "sim-gpu"), quotas, active, pending), Builders.T0);
        assertThat(borrowedGpus(full, pending)).isEmpty();
        Decision.Wait bWaits = waitOf(full, "b-00");
        assertThat(bWaits.reason()).isEqualTo(WaitReason.WaitingForFairShare);
        assertThat(bWaits.message()).startsWith("quota b/gpu holds 2.0 times its fair share of pool tree:org/root");
        assertThat(waitOf(full, "c-00").reason()).isEqualTo(WaitReason.WaitingForIdleCapacity);

        // b's first borrowed run ends: c takes its GPUs, though b queued first.
        active.removeIf(run -> run.id().value().equals("b-borrowed-1"));
        CycleResult first = scheduler.schedule(new ClusterSnapshot(nodes("n", 3, "sim-gpu"), quotas, active, pending), Builders.T0);
        assertThat(borrowedGpus(first, pending)).isEqualTo(Map.of("c", 4));
        Decision.Admit cAdmitted = (Decision.Admit) first.decisions().stream().filter(d -> d instanceof Decision.Admit).findFirst().orElseThrow();
        active.add(new ActiveRun(cAdmitted.runId(), QuotaId.parse("c/gpu"), IdleMode.Acceptable, 0, Builders.T0, null, NotInQuota,
                List.of(new Allocation(0, "n-3", FairSharesTest.gpus(4), cAdmitted.placements().get(0).gpus())), false, null));
        pending.removeIf(run -> run.id().equals(cAdmitted.runId()));
        assertThat(waitOf(first, "b-00").reason()).isEqualTo(WaitReason.WaitingForIdleCapacity); // both hold their half now

        // b's second ends: both hold 4 beyond their guarantee after either admission, and b's run is older.
        active.removeIf(run -> run.id().value().equals("b-borrowed-2"));
        CycleResult second = scheduler.schedule(new ClusterSnapshot(nodes("n", 3, "sim-gpu"), quotas, active, pending), Builders.T0);
        assertThat(borrowedGpus(second, pending)).isEqualTo(Map.of("b", 4));
    }

    @Test
    void aQuotaOfWeightZeroBorrowsOnlyWhatNoOtherQuotaAsksFor() {
        List<PendingRun> pending = queues(36, 4, 4);
        CycleResult both = scheduler.schedule(new ClusterSnapshot(nodes("n", 3, "sim-gpu"), teams(0, 1), guaranteed(4), pending), Builders.T0);
        assertThat(borrowedGpus(both, pending)).isEqualTo(Map.of("c", 8));
        List<PendingRun> onlyB = queues(36, 0, 4);
        CycleResult alone = scheduler.schedule(new ClusterSnapshot(nodes("n", 3, "sim-gpu"), teams(0, 1), guaranteed(4), onlyB), Builders.T0);
        assertThat(borrowedGpus(alone, onlyB)).isEqualTo(Map.of("b", 8));
    }

    @Test
    void aLargeRunDoesNotGoFirstBecauseItsQuotaHoldsLittleBeforeIt() {
        // b asks for 8 GPUs at once, c for 4 twice: after admission b would hold 8 beyond its guarantee, c 4, so c's first
        // goes first (before, the older b took all 8); then b's no longer fits, and c's second does.
        List<PendingRun> pending = List.of(aRun("b-big").quota("b/gpu").idle(IdleMode.Acceptable).gpus(8).build(),
                aRun("c-1").quota("c/gpu").idle(IdleMode.Acceptable).gpus(4).submittedSecondsAfterStart(60).build(),
                aRun("c-2").quota("c/gpu").idle(IdleMode.Acceptable).gpus(4).submittedSecondsAfterStart(61).build());
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 3, "sim-gpu"), teams(1, 1), guaranteed(4), pending), Builders.T0);
        assertThat(borrowedGpus(result, pending)).isEqualTo(Map.of("c", 8));
    }

    @Test
    void nestedQuotasDivideLevelByLevel() {
        // The root lends 16 idle GPUs (its own guarantee). d1 (x, y) and d2 (z) share them equally; inside d1, x and y do.
        List<QuotaState> quotas = List.of(aQuota("org/root").minGpus(40).build(), aQuota("d1/gpu").minGpus(16).parent("org/root").build(),
                aQuota("x/gpu").minGpus(8).parent("d1/gpu").build(), aQuota("y/gpu").minGpus(8).parent("d1/gpu").build(),
                aQuota("d2/gpu").minGpus(8).parent("org/root").build(), aQuota("z/gpu").minGpus(8).parent("d2/gpu").build());
        List<ActiveRun> active = List.of(aRun("x-own").quota("x/gpu").gpus(8).running(InQuota, 0, "n-1"),
                aRun("y-own").quota("y/gpu").gpus(8).running(InQuota, 0, "n-2"), aRun("z-own").quota("z/gpu").gpus(8).running(InQuota, 0, "n-3"));
        List<PendingRun> pending = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            pending.add(aRun("x-" + i).quota("x/gpu").idle(IdleMode.OnlyIdle).gpus(2).submittedSecondsAfterStart(i).build());
            pending.add(aRun("y-" + i).quota("y/gpu").idle(IdleMode.OnlyIdle).gpus(2).submittedSecondsAfterStart(10 + i).build());
            pending.add(aRun("z-" + i).quota("z/gpu").idle(IdleMode.OnlyIdle).gpus(2).submittedSecondsAfterStart(20 + i).build());
        }
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 5, "sim-gpu"), quotas, active, pending), Builders.T0);
        assertThat(borrowedGpus(result, pending)).isEqualTo(Map.of("x", 4, "y", 4, "z", 8));
    }

    private static Decision.Wait waitOf(CycleResult result, String run) {
        return result.decisions().stream().filter(d -> d instanceof Decision.Wait && d.runId().equals(new RunId(run))).map(d -> (Decision.Wait) d)
                .findFirst().orElseThrow();
    }

    /**
     * Seeded random pools (a tree of up to two levels, random guarantees and weights, 0 among them), runs holding
     * capacity and queued one-GPU borrowers: after a cycle, whenever one quota got idle capacity while another's borrower
     * waits, the one that got it holds no more than the other would with one more run (compared at the level where the
     * two meet). One-GPU runs fit wherever anything is free, so a run that waits could have had what the other got.
     * Rerun one sequence with {@code -Dfairness.seed=N}.
     */
    @Test
    void noQuotaGetsCapacityWhileAQuotaThatWouldHoldLessWaits() {
        Long only = Long.getLong("fairness.seed");
        for (long seed = only == null ? 1 : only; seed <= (only == null ? 300 : only); seed++) {
            checkOneCycle(seed);
        }
    }

    private void checkOneCycle(long seed) {
        Random random = new Random(seed);
        int nodeCount = 2 + random.nextInt(5);
        List<NodeState> nodes = nodes("n", nodeCount, "sim-gpu");
        List<QuotaState> quotas = new ArrayList<>();
        quotas.add(aQuota("org/root").minGpus(random.nextInt(nodeCount * 8 + 1)).build());
        List<String> leaves = new ArrayList<>();
        double[] weights = {0, 0.5, 1, 1, 2, 3};
        int middles = random.nextInt(3);
        List<String> parents = new ArrayList<>(List.of("org/root"));
        for (int m = 0; m < middles; m++) {
            quotas.add(aQuota("m" + m + "/q").minGpus(random.nextInt(9)).parent("org/root").weight(weights[random.nextInt(weights.length)]).build());
            parents.add("m" + m + "/q");
        }
        int teams = 2 + random.nextInt(4);
        for (int t = 0; t < teams; t++) {
            String id = "t" + t + "/q";
            quotas.add(aQuota(id).minGpus(random.nextInt(9)).parent(parents.get(random.nextInt(parents.size()))).weight(weights[random.nextInt(weights.length)]).build());
            leaves.add(id);
        }
        // Runs holding capacity: each team's, some on its guarantee and some borrowed, one GPU each, node by node.
        List<ActiveRun> active = new ArrayList<>();
        int slot = 0;
        int held = random.nextInt(nodeCount * 8 + 1);
        for (int i = 0; i < held; i++, slot++) {
            String team = leaves.get(random.nextInt(leaves.size()));
            active.add(aRun("held-" + i).quota(team).idle(IdleMode.OnlyIdle).gpus(1).running(NotInQuota, slot % 8, "n-" + (1 + slot / 8)));
        }
        List<PendingRun> pending = new ArrayList<>();
        for (int i = 0; i < 10 + random.nextInt(40); i++) {
            String team = leaves.get(random.nextInt(leaves.size()));
            pending.add(aRun(team.substring(0, team.indexOf('/')) + "-" + i).quota(team).idle(IdleMode.OnlyIdle).priority(random.nextInt(3)).gpus(1)
                    .submittedSecondsAfterStart(random.nextInt(100)).build());
        }
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, quotas, active, pending), Builders.T0);

        // The state after the cycle: what was admitted now holds its GPUs.
        Map<RunId, PendingRun> byId = new HashMap<>();
        pending.forEach(run -> byId.put(run.id(), run));
        List<ActiveRun> after = new ArrayList<>(active);
        List<PendingRun> admitted = new ArrayList<>();
        List<PendingRun> waiting = new ArrayList<>();
        for (Decision decision : result.decisions()) {
            PendingRun run = byId.get(decision.runId());
            if (decision instanceof Decision.Admit admit) {
                admitted.add(run);
                List<Allocation> allocations = new ArrayList<>();
                admit.placements().forEach(p -> allocations.add(new Allocation(p.rank(), p.node(), FairSharesTest.gpus(1), p.gpus())));
                after.add(new ActiveRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.createdAt(), null, admit.realTimeResources(), allocations, false, null));
            } else if (decision instanceof Decision.Wait wait
                    && (wait.reason() == WaitReason.WaitingForIdleCapacity || wait.reason() == WaitReason.WaitingForFairShare)) {
                waiting.add(run);
            }
        }
        ClusterState state = ClusterState.of(new ClusterSnapshot(nodes, quotas, after, List.of()));
        FairShares shares = FairShares.of(state.book);
        for (PendingRun got : admitted) {
            for (PendingRun waits : waiting) {
                FairShares.Member gotAt = shares.leafOf(got.quota());
                FairShares.Member waitsAt = shares.leafOf(waits.quota());
                if (gotAt == waitsAt) {
                    continue;
                }
                // The members of the level where the two meet.
                List<FairShares.Member> gotPath = path(gotAt);
                List<FairShares.Member> waitsPath = path(waitsAt);
                int meet = 0;
                while (gotPath.get(meet + 1) == waitsPath.get(meet + 1)) {
                    meet++;
                }
                FairShares.Member gotMember = gotPath.get(meet + 1);
                FairShares.Member waitsMember = waitsPath.get(meet + 1);
                double gotShare = shares.share(gotMember, io.slipstream.api.spec.Resources.NONE);
                double waitsShareWithOneMore = shares.share(waitsMember, FairSharesTest.gpus(1));
                assertThat(gotShare).as("seed %d: %s got idle capacity while %s waits; quotas %s", seed, got.quota(), waits.quota(), quotas)
                        .isLessThanOrEqualTo(waitsShareWithOneMore + 1e-9);
            }
        }
    }

    /** A member's path from its pool's top down to it. */
    private static List<FairShares.Member> path(FairShares.Member member) {
        List<FairShares.Member> path = new ArrayList<>();
        for (FairShares.Member m = member; m != null; m = m.parent) {
            path.add(0, m);
        }
        return path;
    }
}
