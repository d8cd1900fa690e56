package io.slipstream.scheduler;

import static io.slipstream.scheduler.Builders.GI;
import static io.slipstream.scheduler.Builders.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Random sequences of submissions, finishes, preemptions and promotions, checked after every cycle against what must
 * always hold. A failure names its seed; rerun one with {@code -Dscheduler.seed=N} (and {@code -Dscheduler.family=whole}
 * for the whole-node family).
 */
class SchedulerInvariantsTest {
    private static final int SEQUENCES = Integer.getInteger("scheduler.sequences", 40);
    private static final int STEPS = 150;
    private static final Resources NODE = new Resources(32_000, 256 * GI, 8, null);

    private final Scheduler scheduler = new Scheduler();

    @Test
    void safetyHoldsForMixedShapes() {
        forEachSeed(false);
    }

    /** With whole-node instances nothing fragments, so liveness can be checked exactly too. */
    @Test
    void safetyAndLivenessHoldForWholeNodeRuns() {
        forEachSeed(true);
    }

    private void forEachSeed(boolean wholeNodes) {
        String only = System.getProperty("scheduler.seed");
        if (only != null) {
            if (wholeNodes == "whole".equals(System.getProperty("scheduler.family"))) {
                new Simulation(Long.parseLong(only), wholeNodes).run();
            }
            return;
        }
        for (long seed = 1; seed <= SEQUENCES; seed++) {
            try {
                new Simulation(seed, wholeNodes).run();
            } catch (AssertionError e) {
                throw new AssertionError("invariant broken with seed " + seed + " (rerun with -Dscheduler.seed=" + seed
                        + (wholeNodes ? " -Dscheduler.family=whole" : "") + ")", e);
            }
        }
    }

    private final class Simulation {
        private final Random random;
        private final boolean wholeNodes;
        private final List<NodeState> nodes = new ArrayList<>();
        private final Map<String, String> nodeModel = new HashMap<>();
        private final List<QuotaState> quotas = new ArrayList<>();
        private final Map<QuotaId, Resources> own = new HashMap<>();
        private final Map<RunId, PendingRun> pending = new LinkedHashMap<>();
        private final Map<RunId, ActiveRun> active = new LinkedHashMap<>();
        private KeptState kept;
        /** For liveness: the cycle from which a queued run was the head of its quota with room in its guarantee. */
        private final Map<RunId, Integer> eligibleSince = new HashMap<>();
        private int next;
        private int cycle;

        Simulation(long seed, boolean wholeNodes) {
            this.random = new Random(seed);
            this.wholeNodes = wholeNodes;
            int count = 2 + random.nextInt(5);
            for (int i = 0; i < count; i++) {
                String model = i % 3 == 2 ? "h100" : "sim-gpu";
                nodes.add(new NodeState("node-" + i, new Resources(NODE.milliCpu(), NODE.memoryBytes(), NODE.gpu(), model), true));
                nodeModel.put("node-" + i, model);
            }
            makeQuotas();
            kept = new KeptState(nodes, quotas);
        }

        /** Guarantees in whole nodes, never more than the nodes of their kind: what quota validation allows. */
        private void makeQuotas() {
            int simNodes = (int) nodes.stream().filter(n -> n.capacity().gpuModel().equals("sim-gpu")).count();
            int h100Nodes = nodes.size() - simNodes;
            int generalLeft = simNodes;
            int quotaCount = 1 + random.nextInt(3);
            for (int i = 0; i < quotaCount && generalLeft > 0; i++) {
                int take = 1 + random.nextInt(generalLeft);
                generalLeft -= take;
                WithinQuota within = random.nextInt(3) == 0 ? WithinQuota.LowerPriority : WithinQuota.Never;
                Resources max = random.nextInt(4) == 0 ? new Resources(Long.MAX_VALUE, Long.MAX_VALUE, 8 * (take + 1), null) : null;
                add(new QuotaState(new QuotaId("team-" + i, "gpu"), QuotaType.General, null, null, NODE.times(take), max, within));
            }
            if (h100Nodes > 0) {
                add(new QuotaState(new QuotaId("team-h", "h100"), QuotaType.Dedicated, "h100", null, NODE.times(h100Nodes), null, WithinQuota.Never));
            }
        }

        private void add(QuotaState quota) {
            quotas.add(quota);
            own.put(quota.id(), quota.min());
        }

        void run() {
            for (int step = 0; step < STEPS; step++) {
                int action = random.nextInt(10);
                if (action < 5) {
                    submit();
                } else if (action < 7 && !active.isEmpty()) {
                    finishOne();
                }
                cycle();
            }
        }

        private void submit() {
            RunId id = new RunId("run-" + next++);
            QuotaId quota = random.nextInt(4) == 0 ? null : quotas.get(random.nextInt(quotas.size())).id();
            IdleMode mode = quota == null ? IdleMode.OnlyIdle : IdleMode.values()[random.nextInt(3)];
            int instances = 1 + random.nextInt(2);
            int gpus = wholeNodes ? 8 : new int[] {1, 2, 4, 8}[random.nextInt(4)];
            Resources perInstance = wholeNodes ? NODE : new Resources(gpus * 4000L, gpus * 32 * GI, gpus, null);
            List<InstanceRequest> requests = new ArrayList<>();
            for (int rank = 0; rank < instances; rank++) {
                requests.add(new InstanceRequest(rank, "main", perInstance));
            }
            pending.put(id, new PendingRun(id, quota, mode, random.nextInt(3), T0.plusSeconds(next), requests));
        }

        private void finishOne() {
            List<RunId> running = active.values().stream().filter(r -> !r.stopping()).map(ActiveRun::id).sorted().toList();
            if (!running.isEmpty()) {
                active.remove(running.get(random.nextInt(running.size())));
            }
        }

        private ClusterSnapshot snapshot() {
            return new ClusterSnapshot(nodes, quotas, new ArrayList<>(active.values()), new ArrayList<>(pending.values()));
        }

        private void cycle() {
            cycle++;
            Instant now = T0.plusSeconds(10_000L + cycle);
            // Runs told to stop last cycle are gone now (a grace period is one cycle here), and queued again.
            for (ActiveRun run : new ArrayList<>(active.values())) {
                if (run.stopping()) {
                    active.remove(run.id());
                    requeue(run);
                }
            }
            ClusterSnapshot snapshot = snapshot();
            CycleResult result = scheduler.schedule(snapshot, now);
            if (Boolean.getBoolean("scheduler.trace")) {
                System.out.println("cycle " + cycle + " quotas " + quotas + "\n  active " + active.values() + "\n  pending "
                        + pending.values() + "\n  -> " + result.decisions());
            }

            List<NodeState> shuffledNodes = new ArrayList<>(nodes);
            List<ActiveRun> shuffledActive = new ArrayList<>(snapshot.active());
            List<PendingRun> shuffledPending = new ArrayList<>(snapshot.pending());
            List<QuotaState> shuffledQuotas = new ArrayList<>(quotas);
            Collections.shuffle(shuffledNodes, random);
            Collections.shuffle(shuffledActive, random);
            Collections.shuffle(shuffledPending, random);
            Collections.shuffle(shuffledQuotas, random);
            assertThat(scheduler.schedule(new ClusterSnapshot(shuffledNodes, shuffledQuotas, shuffledActive, shuffledPending), now))
                    .as("the same input in another order decides the same").isEqualTo(result);
            ClusterState state = kept.with(shuffledActive);
            assertThat(scheduler.schedule(state, shuffledPending, now)).as("a state kept between cycles decides as a snapshot").isEqualTo(result);
            assertThat(scheduler.schedule(state, shuffledPending, now)).as("a cycle leaves the kept state as it was").isEqualTo(result);

            Set<RunId> decided = new HashSet<>();
            for (Decision decision : result.decisions()) {
                assertThat(decided.add(decision.runId())).as("one decision per run: %s", decision).isTrue();
            }
            for (Decision.Promote promote : result.promoted()) {
                ActiveRun run = active.get(promote.runId());
                assertThat(run.realTimeResources()).isEqualTo(RealTimeResources.NotInQuota);
                assertThat(run.idleMode()).isEqualTo(IdleMode.Acceptable);
                active.put(run.id(), with(run, RealTimeResources.InQuota, false, null));
            }
            for (Decision.Preempt preempt : result.preempted()) {
                ActiveRun victim = active.get(preempt.runId());
                PendingRun beneficiary = pending.get(preempt.forRun());
                assertThat(victim).isNotNull();
                assertThat(beneficiary).as("a victim is preempted for a queued run").isNotNull();
                if (!java.util.Objects.equals(victim.quota(), beneficiary.quota())) {
                    // The victim reads the reason (its notice file, its history): another team's run and quota stay unnamed.
                    assertThat(preempt.reason()).as("reason given to another team's victim").doesNotContain(beneficiary.id().value())
                            .doesNotContain(String.valueOf(beneficiary.quota()));
                }
                if (victim.realTimeResources() == RealTimeResources.InQuota) {
                    QuotaState quota = quotas.stream().filter(q -> q.id().equals(victim.quota())).findFirst().orElseThrow();
                    assertThat(victim.quota()).as("a guaranteed run is never reclaimed by another quota").isEqualTo(beneficiary.quota());
                    assertThat(quota.withinQuota()).isEqualTo(WithinQuota.LowerPriority);
                    assertThat(victim.priority()).isLessThan(beneficiary.priority());
                }
                active.put(victim.id(), with(victim, victim.realTimeResources(), true, preempt.forRun()));
            }
            for (Decision.Admit admit : result.admitted()) {
                PendingRun run = pending.remove(admit.runId());
                assertThat(admit.placements()).extracting(Placement::rank)
                        .as("a gang is placed whole").containsExactlyInAnyOrderElementsOf(run.instances().stream().map(InstanceRequest::rank).toList());
                if (admit.realTimeResources() == RealTimeResources.InQuota) {
                    assertThat(run.idleMode()).isNotEqualTo(IdleMode.OnlyIdle);
                } else {
                    assertThat(run.idleMode()).isNotEqualTo(IdleMode.Disabled);
                }
                List<Allocation> allocations = new ArrayList<>();
                for (Placement placement : admit.placements()) {
                    Resources resources = run.instances().get(placement.rank()).resources();
                    allocations.add(new Allocation(placement.rank(), placement.node(), resources, placement.gpus()));
                    QuotaState quota = run.quota() == null ? null : quotas.stream().filter(q -> q.id().equals(run.quota())).findFirst().orElseThrow();
                    if (quota != null && quota.type() == QuotaType.Dedicated) {
                        assertThat(nodeModel.get(placement.node())).as("a Dedicated quota's run stays on its model").isEqualTo(quota.gpuModel());
                    }
                }
                active.put(run.id(), new ActiveRun(run.id(), run.quota(), run.idleMode(), run.priority(), now, null, admit.realTimeResources(),
                        allocations, false, null));
                eligibleSince.remove(run.id());
            }
            assertNoNodeOverCapacity();
            assertQuotasWithinTheirLimits();
            if (wholeNodes) {
                assertLiveness();
            }
        }

        private void requeue(ActiveRun run) {
            List<InstanceRequest> requests = new ArrayList<>();
            run.allocations().forEach(a -> requests.add(new InstanceRequest(a.rank(), "main", a.resources())));
            pending.put(run.id(), new PendingRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.startedAt(), requests));
        }

        private ActiveRun with(ActiveRun run, RealTimeResources where, boolean stopping, RunId reclaimFor) {
            return new ActiveRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.startedAt(), run.lastCheckpointAt(), where,
                    run.allocations(), stopping, reclaimFor);
        }

        private void assertNoNodeOverCapacity() {
            Map<String, long[]> used = new HashMap<>();
            Map<String, Set<Integer>> gpus = new HashMap<>();
            for (ActiveRun run : active.values()) {
                for (Allocation allocation : run.allocations()) {
                    long[] sum = used.computeIfAbsent(allocation.node(), n -> new long[3]);
                    sum[0] += allocation.resources().milliCpu();
                    sum[1] += allocation.resources().memoryBytes();
                    for (int gpu : allocation.gpus()) {
                        assertThat(gpus.computeIfAbsent(allocation.node(), n -> new HashSet<>()).add(gpu))
                                .as("GPU %d of %s given twice", gpu, allocation.node()).isTrue();
                        assertThat(gpu).isBetween(0, NODE.gpu() - 1);
                    }
                    assertThat(allocation.gpus()).hasSize(allocation.resources().gpu());
                }
            }
            used.forEach((node, sum) -> {
                assertThat(sum[0]).as("cpu of %s", node).isLessThanOrEqualTo(NODE.milliCpu());
                assertThat(sum[1]).as("memory of %s", node).isLessThanOrEqualTo(NODE.memoryBytes());
            });
        }

        private void assertQuotasWithinTheirLimits() {
            for (QuotaState quota : quotas) {
                long guaranteedGpus = 0;
                long totalGpus = 0;
                for (ActiveRun run : active.values()) {
                    if (!quota.id().equals(run.quota()) || run.stopping()) {
                        continue;
                    }
                    long gpus = run.allocations().stream().mapToLong(a -> a.resources().gpu()).sum();
                    totalGpus += gpus;
                    if (run.realTimeResources() == RealTimeResources.InQuota) {
                        guaranteedGpus += gpus;
                    }
                }
                assertThat(guaranteedGpus).as("guaranteed use of %s", quota.id()).isLessThanOrEqualTo(own.get(quota.id()).gpu());
                if (quota.max() != null) {
                    assertThat(totalGpus).as("total use of %s", quota.id()).isLessThanOrEqualTo(quota.max().gpu());
                }
            }
        }

        /**
         * A queued run that heads its quota's queue and fits the free part of its guarantee starts within three cycles:
         * one to reclaim, one for the victims to stop, one to start.
         */
        private void assertLiveness() {
            Map<QuotaId, PendingRun> heads = new HashMap<>();
            pending.values().stream().filter(r -> r.quota() != null && r.idleMode() != IdleMode.OnlyIdle)
                    .sorted(Scheduler.QUEUE_ORDER)
                    .forEach(r -> heads.putIfAbsent(r.quota(), r));
            for (PendingRun head : heads.values()) {
                long used = active.values().stream()
                        .filter(r -> head.quota().equals(r.quota()) && !r.stopping() && r.realTimeResources() == RealTimeResources.InQuota)
                        .mapToLong(r -> r.allocations().stream().mapToLong(a -> a.resources().gpu()).sum()).sum();
                long needed = head.instances().stream().mapToLong(i -> i.resources().gpu()).sum();
                if (used + needed <= own.get(head.quota()).gpu()) {
                    int since = eligibleSince.computeIfAbsent(head.id(), id -> cycle);
                    assertThat(cycle - since).as("run %s of %s waits with room in its guarantee", head.id(), head.quota()).isLessThanOrEqualTo(3);
                } else {
                    eligibleSince.remove(head.id());
                }
            }
            eligibleSince.keySet().retainAll(pending.keySet());
        }
    }

}
