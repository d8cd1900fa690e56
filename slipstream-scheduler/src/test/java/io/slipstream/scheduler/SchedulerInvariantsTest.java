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

    /**
     * Half the runs elastic (docs/elastic.md), grown and shrunk as decided: never below the minimum while running, never
     * grown while a shrink is in flight, shrunk only of extras on idle capacity, every instance's standing charged once.
     */
    @Test
    void safetyHoldsWithElasticRuns() {
        forEachSeed(false, true);
        if (System.getProperty("scheduler.seed") == null) {
            // The sequences must have done what they check: elastic runs admitted with extras, grown, shrunk, stopped whole.
            assertThat(elasticCounts).as("elastic decisions over all seeds").containsKeys("admit with extras", "grow", "grow borrowed", "shrink",
                    "preempt elastic", "admit with borrowed extras", "shrink in quota");
        }
    }

    /** How often each elastic decision happened, over every sequence. */
    private final Map<String, Integer> elasticCounts = new java.util.TreeMap<>();

    private void count(String what) {
        elasticCounts.merge(what, 1, Integer::sum);
    }

    private void forEachSeed(boolean wholeNodes) {
        forEachSeed(wholeNodes, false);
    }

    private void forEachSeed(boolean wholeNodes, boolean elastic) {
        String family = wholeNodes ? "whole" : elastic ? "elastic" : "mixed";
        String only = System.getProperty("scheduler.seed");
        if (only != null) {
            if (family.equals(System.getProperty("scheduler.family", "mixed"))) {
                new Simulation(Long.parseLong(only), wholeNodes, elastic).run();
            }
            return;
        }
        for (long seed = 1; seed <= SEQUENCES; seed++) {
            try {
                new Simulation(seed, wholeNodes, elastic).run();
            } catch (AssertionError e) {
                throw new AssertionError("invariant broken with seed " + seed + " (rerun with -Dscheduler.seed=" + seed
                        + (family.equals("mixed") ? "" : " -Dscheduler.family=" + family) + ")", e);
            }
        }
    }

    private final class Simulation {
        private final Random random;
        private final boolean wholeNodes;
        private final boolean elastic;
        /** Elastic runs as they were submitted: what they queue again as after a stop. */
        private final Map<RunId, PendingRun> submitted = new HashMap<>();
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

        Simulation(long seed, boolean wholeNodes, boolean elastic) {
            this.random = new Random(seed);
            this.wholeNodes = wholeNodes;
            this.elastic = elastic;
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
            int instances = elastic ? 1 + random.nextInt(4) : 1 + random.nextInt(2);
            int gpus = wholeNodes ? 8 : new int[] {1, 2, 4, 8}[random.nextInt(4)];
            Resources perInstance = wholeNodes ? NODE : new Resources(gpus * 4000L, gpus * 32 * GI, gpus, null);
            List<InstanceRequest> requests = new ArrayList<>();
            for (int rank = 0; rank < instances; rank++) {
                requests.add(new InstanceRequest(rank, "main", perInstance));
            }
            PendingRun run = new PendingRun(id, quota, mode, random.nextInt(3), T0.plusSeconds(next), requests);
            if (elastic && instances > 1 && random.nextBoolean()) {
                run = run.withMinReplicas(Map.of("main", 1 + random.nextInt(instances - 1)));
                submitted.put(id, run);
            }
            pending.put(id, run);
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
            // Runs told to stop last cycle are gone now (a grace period is one cycle here), and queued again; so are the
            // instances shrinks released.
            for (ActiveRun run : new ArrayList<>(active.values())) {
                if (run.stopping()) {
                    active.remove(run.id());
                    requeue(run);
                } else if (run.elastic() != null && !run.elastic().releasing().isEmpty()) {
                    ElasticRun e = run.elastic();
                    active.put(run.id(), withElastic(run, run.realTimeResources(), run.allocations(), new ElasticRun(e.instances(), e.minReplicas(),
                            e.borrowed(), List.of())));
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
            for (Decision.Shrink shrink : result.shrunk()) {
                count("shrink");
                ActiveRun run = active.get(shrink.runId());
                PendingRun beneficiary = pending.get(shrink.forRun());
                assertThat(run.elastic()).as("only an elastic run is shrunk").isNotNull();
                assertThat(run.stopping()).isFalse();
                assertThat(beneficiary).as("a shrink is for a queued run").isNotNull();
                if (!java.util.Objects.equals(run.quota(), beneficiary.quota())) {
                    assertThat(shrink.reason()).as("reason given to another team's run").doesNotContain(beneficiary.id().value())
                            .doesNotContain(String.valueOf(beneficiary.quota()));
                }
                // Preemption for fairness and room under a quota's max take extras on idle capacity only: of another
                // quota's run for fairness, of the same quota's for its max.
                boolean fairness = shrink.kind() == Decision.PreemptKind.FairSharing;
                boolean underMax = shrink.reason().contains("needs room under its max");
                if (fairness || underMax) {
                    count(fairness ? "shrink for fairness" : "shrink under max");
                    assertThat(java.util.Objects.equals(run.quota(), beneficiary.quota())).as("whose quota: %s", shrink).isEqualTo(underMax);
                    run.allocations().stream().filter(a -> shrink.ranks().contains(a.rank()))
                            .forEach(a -> assertThat(run.onIdleCapacity(a)).as("only extras on idle capacity: %s", shrink).isTrue());
                }
                List<Allocation> live = new ArrayList<>();
                List<ElasticRun.Release> releasing = new ArrayList<>(run.elastic().releasing());
                for (Allocation allocation : run.allocations()) {
                    if (shrink.ranks().contains(allocation.rank())) {
                        if (!run.onIdleCapacity(allocation)) {
                            // Extras on a guarantee give way only to a queued run of the same quota, of their run's priority or higher.
                            assertThat(run.quota()).as("instances on a guarantee shrunk only for the same quota: %s", shrink).isEqualTo(beneficiary.quota());
                            assertThat(run.priority()).isLessThanOrEqualTo(beneficiary.priority());
                            assertThat(shrink.kind()).as("no guarantee is reclaimed by it").isEqualTo(Decision.PreemptKind.Extras);
                            count("shrink in quota");
                        }
                        releasing.add(new ElasticRun.Release(allocation, shrink.forRun(), run.onIdleCapacity(allocation)
                                ? RealTimeResources.NotInQuota : RealTimeResources.InQuota));
                    } else {
                        live.add(allocation);
                    }
                }
                assertThat(releasing.size() - run.elastic().releasing().size()).as("the ranks shrunk are live ones").isEqualTo(shrink.ranks().size());
                assertThat(run.elastic().atLeastMinimum(live)).as("a shrink never takes a run below its minimum: %s", shrink).isTrue();
                Set<Integer> borrowed = new HashSet<>(run.elastic().borrowed());
                borrowed.removeAll(shrink.ranks());
                active.put(run.id(), withElastic(run, run.realTimeResources(), live, new ElasticRun(run.elastic().instances(), run.elastic().minReplicas(),
                        borrowed, releasing)));
            }
            for (Decision.Grow grow : result.grown()) {
                count(grow.borrowed().isEmpty() ? "grow" : "grow borrowed");
                ActiveRun run = active.get(grow.runId());
                assertThat(run.elastic()).as("only an elastic run grows").isNotNull();
                assertThat(run.stopping()).isFalse();
                assertThat(run.elastic().releasing()).as("never grown while a shrink of it is in flight").isEmpty();
                if (run.realTimeResources() == RealTimeResources.NotInQuota) {
                    assertThat(grow.borrowed()).as("a run on idle capacity grows there, none named").isEmpty();
                }
                List<Allocation> live = new ArrayList<>(run.allocations());
                Set<Integer> vacant = new HashSet<>();
                run.elastic().vacant(run.allocations()).forEach(i -> vacant.add(i.rank()));
                for (Placement placement : grow.placements()) {
                    assertThat(vacant.remove(placement.rank())).as("a grow fills vacant slots: %s", grow).isTrue();
                    live.add(new Allocation(placement.rank(), placement.node(), run.elastic().slot(placement.rank()).resources(), placement.gpus()));
                }
                if (run.idleMode() == IdleMode.Disabled) {
                    assertThat(grow.borrowed()).as("a Disabled run never borrows").isEmpty();
                }
                Set<Integer> borrowed = new HashSet<>(run.elastic().borrowed());
                borrowed.addAll(grow.borrowed());
                active.put(run.id(), withElastic(run, run.realTimeResources(), live, new ElasticRun(run.elastic().instances(), run.elastic().minReplicas(),
                        borrowed, List.of())));
            }
            for (Decision.Preempt preempt : result.preempted()) {
                ActiveRun victim = active.get(preempt.runId());
                if (victim.elastic() != null) {
                    count("preempt elastic");
                }
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
                List<Integer> ranks = admit.placements().stream().map(Placement::rank).toList();
                if (run.elastic()) {
                    if (ranks.size() > run.minimum().size()) {
                        count(admit.borrowed().isEmpty() ? "admit with extras" : "admit with borrowed extras");
                    }
                    assertThat(ranks).as("an elastic run's minimum is placed whole").containsAll(run.minimum().stream().map(InstanceRequest::rank).toList());
                    assertThat(run.instances().stream().map(InstanceRequest::rank).toList()).as("and nothing it does not ask for").containsAll(ranks);
                    assertThat(ranks).doesNotHaveDuplicates();
                    assertThat(ranks).containsAll(admit.borrowed());
                    if (run.idleMode() == IdleMode.Disabled) {
                        assertThat(admit.borrowed()).as("a Disabled run never borrows").isEmpty();
                    }
                } else {
                    assertThat(ranks).as("a gang is placed whole").containsExactlyInAnyOrderElementsOf(run.instances().stream().map(InstanceRequest::rank).toList());
                }
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
                        allocations, false, null, null, run.elastic() ? new ElasticRun(run.instances(), run.minReplicas(), admit.borrowed()) : null));
                eligibleSince.remove(run.id());
            }
            assertNoNodeOverCapacity();
            assertQuotasWithinTheirLimits();
            assertElasticRunsAtTheirMinimum();
            assertTheLedgerCountsEveryInstanceOnce();
            if (wholeNodes) {
                assertLiveness();
            }
        }

        private void requeue(ActiveRun run) {
            if (submitted.containsKey(run.id())) {
                PendingRun shape = submitted.get(run.id());
                pending.put(run.id(), new PendingRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.startedAt(), shape.instances(), false,
                        shape.minReplicas()));
                return;
            }
            List<InstanceRequest> requests = new ArrayList<>();
            run.allocations().forEach(a -> requests.add(new InstanceRequest(a.rank(), "main", a.resources())));
            pending.put(run.id(), new PendingRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.startedAt(), requests));
        }

        private ActiveRun with(ActiveRun run, RealTimeResources where, boolean stopping, RunId reclaimFor) {
            return new ActiveRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.startedAt(), run.lastCheckpointAt(), where,
                    run.allocations(), stopping, reclaimFor, null, run.elastic());
        }

        private ActiveRun withElastic(ActiveRun run, RealTimeResources where, List<Allocation> live, ElasticRun elastic) {
            return new ActiveRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.startedAt(), run.lastCheckpointAt(), where, live,
                    run.stopping(), run.reclaimFor(), null, elastic);
        }

        /** Every running elastic run has at least its minimum live. */
        private void assertElasticRunsAtTheirMinimum() {
            for (ActiveRun run : active.values()) {
                if (run.elastic() != null && !run.stopping()) {
                    assertThat(run.elastic().atLeastMinimum(run.allocations())).as("elastic run %s below its minimum", run).isTrue();
                }
            }
        }

        /**
         * The ledger's figures for each quota are the sum of its runs' instances, each counted once as it stands: on its
         * guarantee, or borrowed (an elastic run's extras, and instances a shrink is removing).
         */
        private void assertTheLedgerCountsEveryInstanceOnce() {
            QuotaLedger ledger = QuotaLedger.of(snapshot());
            ClusterSnapshot all = snapshot();
            QuotaLedger withoutQueue = QuotaLedger.of(new ClusterSnapshot(all.nodes(), all.quotas(), all.active(), List.of()));
            assertThat(withoutQueue.quotas()).as("what a quota lends does not depend on the queue (the server counts it without)")
                    .extracting(QuotaLedger.QuotaLine::quota, QuotaLedger.QuotaLine::lent)
                    .containsExactlyElementsOf(ledger.quotas().stream().map(line -> org.assertj.core.groups.Tuple.tuple(line.quota(), line.lent())).toList());
            for (QuotaState quota : quotas) {
                long inQuota = 0;
                long borrowed = 0;
                for (ActiveRun run : active.values()) {
                    if (!quota.id().equals(run.quota())) {
                        continue;
                    }
                    for (Allocation allocation : run.allocations()) {
                        if (run.onIdleCapacity(allocation)) {
                            borrowed += allocation.resources().gpu();
                        } else {
                            inQuota += allocation.resources().gpu();
                        }
                    }
                    if (run.elastic() != null) {
                        for (ElasticRun.Release release : run.elastic().releasing()) {
                            if (release.standing() == RealTimeResources.InQuota) {
                                inQuota += release.allocation().resources().gpu();
                            } else {
                                borrowed += release.allocation().resources().gpu();
                            }
                        }
                    }
                }
                QuotaLedger.QuotaLine line = ledger.quota(quota.id()).orElseThrow();
                assertThat(line.inQuota().gpu()).as("GPUs of %s on its guarantee", quota.id()).isEqualTo(inQuota);
                assertThat(line.borrowed().gpu()).as("GPUs of %s borrowed", quota.id()).isEqualTo(borrowed);
                assertThat(line.used().gpu()).as("GPUs %s uses", quota.id()).isEqualTo(inQuota + borrowed);
            }
        }

        private void assertNoNodeOverCapacity() {
            Map<String, long[]> used = new HashMap<>();
            Map<String, Set<Integer>> gpus = new HashMap<>();
            for (ActiveRun run : active.values()) {
                List<Allocation> holds = new ArrayList<>(run.allocations());
                if (run.elastic() != null) {
                    run.elastic().releasing().forEach(r -> holds.add(r.allocation()));
                }
                for (Allocation allocation : holds) {
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
                    for (Allocation allocation : run.allocations()) {
                        totalGpus += allocation.resources().gpu();
                        if (!run.onIdleCapacity(allocation)) {
                            guaranteedGpus += allocation.resources().gpu();
                        }
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
