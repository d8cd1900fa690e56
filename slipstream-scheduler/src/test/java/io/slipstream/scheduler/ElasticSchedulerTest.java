package io.slipstream.scheduler;

import static io.slipstream.api.run.RealTimeResources.InQuota;
import static io.slipstream.api.run.RealTimeResources.NotInQuota;
import static io.slipstream.scheduler.Builders.T0;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static io.slipstream.scheduler.Builders.nodes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.Resources;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Elastic runs (docs/elastic.md): admitted by their minimum, extras as capacity allows, shrunk before anything is stopped whole. */
class ElasticSchedulerTest {
    private final Scheduler scheduler = new Scheduler();

    /** One row: a cluster, quotas, runs holding resources, queued runs, and what must happen to each run. */
    record Case(String name, List<NodeState> nodes, List<QuotaState> quotas, List<ActiveRun> active, List<PendingRun> pending,
                Map<String, String> expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        var a16 = aQuota("a/gpu").minGpus(16).build();
        var b0 = aQuota("b/gpu").parent("a/gpu").minGpus(0).build();
        var root = aQuota("org/gpu").minGpus(32).build();
        var a = aQuota("a/gpu").parent("org/gpu").minGpus(16).build();
        var b = aQuota("b/gpu").parent("org/gpu").minGpus(0).build();
        var a8max16 = aQuota("a/gpu").minGpus(8).maxGpus(16).build();
        // Teams a, b and c under one root; a is idle and lends its guarantee.
        var teams = List.of(aQuota("org/root").minGpus(24).build(), aQuota("a/gpu").minGpus(8).parent("org/root").build(),
                aQuota("b/gpu").minGpus(8).parent("org/root").build(), aQuota("c/gpu").minGpus(8).parent("org/root").build());
        var bigTeams = List.of(aQuota("org/root").minGpus(32).build(), aQuota("a/gpu").minGpus(16).parent("org/root").build(),
                aQuota("b/gpu").minGpus(8).parent("org/root").build(), aQuota("c/gpu").minGpus(8).parent("org/root").build());
        return Stream.of(
                // Admission: the minimum is the gang, extras as they fit
                new Case("an elastic run starts with what fits of it, at least its minimum", nodes("n", 4, "sim-gpu"), List.of(),
                        List.of(aRun("small").gpus(1).running(NotInQuota, 0, "n-4")),
                        List.of(aRun("e").instances(4).min(2).gpus(8).build()), Map.of("e", "admit NotInQuota [0, 1, 2]")),
                new Case("a rigid run of the same size waits", nodes("n", 4, "sim-gpu"), List.of(), List.of(aRun("small").gpus(1).running(NotInQuota, 0, "n-4")),
                        List.of(aRun("r").instances(4).gpus(8).build()), Map.of("r", "WaitingForIdleCapacity")),
                new Case("an elastic run waits while its minimum does not fit", nodes("n", 3, "sim-gpu"), List.of(),
                        List.of(aRun("small").gpus(1).running(NotInQuota, 0, "n-1")),
                        List.of(aRun("e").instances(4).min(3).gpus(8).build()), Map.of("e", "WaitingForIdleCapacity")),
                new Case("extras go on its guarantee first, then on idle capacity", nodes("n", 4, "sim-gpu"), List.of(root, a, b), List.of(),
                        List.of(aRun("e").quota("a/gpu").idle(IdleMode.Acceptable).instances(4).min(1).gpus(8).build()),
                        Map.of("e", "admit InQuota [0, 1, 2, 3] borrowed [2, 3]")),
                new Case("a Disabled run's extras stay on its guarantee", nodes("n", 4, "sim-gpu"), List.of(root, a, b), List.of(),
                        List.of(aRun("e").quota("a/gpu").instances(4).min(1).gpus(8).build()), Map.of("e", "admit InQuota [0, 1]")),
                new Case("a run on idle capacity has its extras there too", nodes("n", 4, "sim-gpu"), List.of(root, a, b), List.of(),
                        List.of(aRun("e").quota("b/gpu").idle(IdleMode.Acceptable).instances(4).min(1).gpus(8).build()),
                        Map.of("e", "admit NotInQuota [0, 1, 2, 3]")),
                new Case("a queued run's minimum comes before another run's extras", nodes("n", 3, "sim-gpu"), List.of(), List.of(),
                        List.of(aRun("e").instances(4).min(1).gpus(8).build(), aRun("r").instances(2).gpus(8).submittedSecondsAfterStart(10).build()),
                        Map.of("e", "admit NotInQuota [0]", "r", "admit NotInQuota [0, 1]")),
                new Case("extras are shared one at a time, the run with the least of its maximum first", nodes("n", 4, "sim-gpu"), List.of(), List.of(),
                        List.of(aRun("e").instances(4).min(1).gpus(8).build(), aRun("f").instances(4).min(1).gpus(8).submittedSecondsAfterStart(10).build()),
                        Map.of("e", "admit NotInQuota [0, 1]", "f", "admit NotInQuota [0, 1]")),
                new Case("extras keep to the quota's max", nodes("n", 4, "sim-gpu"), List.of(aQuota("a/gpu").minGpus(8).maxGpus(16).build()), List.of(),
                        List.of(aRun("e").quota("a/gpu").idle(IdleMode.Acceptable).instances(4).min(1).gpus(8).build()),
                        Map.of("e", "admit InQuota [0, 1] borrowed [1]")),

                // Growth
                new Case("a running elastic run grows onto idle nodes", nodes("n", 4, "sim-gpu"), List.of(),
                        List.of(aRun("e").instances(4).min(2).gpus(8).runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2")), List.of(),
                        Map.of("e", "grow [2, 3]")),
                new Case("a guaranteed elastic run grows on its guarantee, then borrows", nodes("n", 4, "sim-gpu"), List.of(root, a, b),
                        List.of(aRun("e").quota("a/gpu").idle(IdleMode.Acceptable).instances(4).min(1).gpus(8).runningElastic(InQuota, 0, Set.of(), "n-1")),
                        List.of(), Map.of("e", "grow [1, 2, 3] borrowed [2, 3]")),
                new Case("a queued run goes before a running run's growth", nodes("n", 4, "sim-gpu"), List.of(),
                        List.of(aRun("e").instances(4).min(2).gpus(8).runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2")),
                        List.of(aRun("r").gpus(8).build()), Map.of("e", "grow [2]", "r", "admit NotInQuota [0]")),
                new Case("a run is not grown while a shrink of it is in flight", nodes("n", 4, "sim-gpu"), List.of(),
                        List.of(releasing(aRun("e").instances(4).min(2).gpus(8), NotInQuota, List.of(0, 1), 3, "n-4", "other")), List.of(),
                        Map.of()),
                new Case("a rigid run never grows", nodes("n", 4, "sim-gpu"), List.of(), List.of(aRun("r").instances(2).gpus(8).running(NotInQuota, 0, "n-1", "n-2")),
                        List.of(), Map.of()),

                // Room promised to a run that waits for nodes
                new Case("extras leave the guarantee promised to a run that waits for nodes: they borrow", nodes("n", 4, "sim-gpu"),
                        List.of(aQuota("org/gpu").minGpus(28).build(), aQuota("a/gpu").parent("org/gpu").minGpus(12).build(),
                                aQuota("b/gpu").parent("org/gpu").minGpus(16).build()),
                        List.of(aRun("b1").quota("b/gpu").gpus(4).running(InQuota, 0, "n-1"), aRun("b2").quota("b/gpu").gpus(4).running(InQuota, 0, "n-2"),
                                aRun("b3").quota("b/gpu").gpus(4).running(InQuota, 0, "n-3"), aRun("b4").quota("b/gpu").gpus(4).running(InQuota, 0, "n-4"),
                                onNodes(aRun("e").quota("a/gpu").idle(IdleMode.Acceptable).instances(3).min(1).gpus(4), Set.of(1), "n-3", "n-4")),
                        List.of(aRun("g").quota("a/gpu").gpus(8).build()), Map.of("e", "grow [2] borrowed [2]", "g", "WaitingForResources")),

                // A queued run's minimum before other runs' extras, in later cycles too
                new Case("a queued borrower takes another run's extras on idle capacity", nodes("n", 2, "sim-gpu"), List.of(),
                        List.of(aRun("e").instances(2).min(1).gpus(8).runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2")),
                        List.of(aRun("r").gpus(4).build()), Map.of("e", "shrink [1]", "r", "WaitingForReclaim")),
                new Case("but not those of a run of higher priority", nodes("n", 2, "sim-gpu"), List.of(),
                        List.of(aRun("e").instances(2).min(1).gpus(8).priority(5).runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2")),
                        List.of(aRun("r").gpus(4).build()), Map.of("r", "WaitingForIdleCapacity")),
                new Case("and a borrower never stops a run whole", nodes("n", 2, "sim-gpu"), List.of(),
                        List.of(aRun("e").instances(4).min(2).gpus(8).runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2")),
                        List.of(aRun("r").gpus(4).build()), Map.of("r", "WaitingForIdleCapacity")),
                new Case("nor takes a guaranteed run's instances on its guarantee", nodes("n", 2, "sim-gpu"), List.of(a16),
                        List.of(aRun("e").quota("a/gpu").instances(2).min(1).gpus(8).runningElastic(InQuota, 0, Set.of(), "n-1", "n-2")),
                        List.of(aRun("r").gpus(4).build()), Map.of("r", "NothingToBorrow")),

                new Case("a queued guaranteed run takes the guarantee its quota's elastic run's extras use", nodes("n", 4, "sim-gpu"), List.of(a16),
                        List.of(aRun("e").quota("a/gpu").instances(2).min(1).gpus(8).runningElastic(InQuota, 0, Set.of(), "n-1", "n-2")),
                        List.of(aRun("g").quota("a/gpu").gpus(8).build()), Map.of("e", "shrink [1]", "g", "admit InQuota [0]")),
                new Case("but not from a run of higher priority", nodes("n", 4, "sim-gpu"), List.of(a16),
                        List.of(aRun("e").quota("a/gpu").instances(2).min(1).gpus(8).priority(5).runningElastic(InQuota, 0, Set.of(), "n-1", "n-2")),
                        List.of(aRun("g").quota("a/gpu").gpus(8).build()), Map.of("g", "WaitingForQuota")),

                // Room under its quota's max: the quota's borrowed extras first, a borrower whole only below its minimum
                new Case("a guaranteed run under its max takes its quota's borrower's extras instead of stopping it", nodes("n", 4, "sim-gpu"),
                        List.of(a8max16),
                        List.of(aRun("e").quota("a/gpu").idle(IdleMode.Acceptable).instances(2).min(1).gpus(8).runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2")),
                        List.of(aRun("g").quota("a/gpu").gpus(8).build()), Map.of("e", "shrink [1]", "g", "admit InQuota [0]")),
                new Case("and a guaranteed elastic run's borrowed extras, which it never stopped before", nodes("n", 4, "sim-gpu"), List.of(a8max16),
                        List.of(aRun("e").quota("a/gpu").idle(IdleMode.Acceptable).instances(2).min(1).gpus(4).runningElastic(InQuota, 0, Set.of(1), "n-1", "n-2"),
                                aRun("f").quota("a/gpu").idle(IdleMode.Acceptable).gpus(8).running(NotInQuota, 0, "n-3")),
                        List.of(aRun("g").quota("a/gpu").gpus(4).build()), Map.of("e", "shrink [1]", "g", "admit InQuota [0]")),
                new Case("the extras of the first run in victim order go, no more than needed", nodes("n", 4, "sim-gpu"), List.of(a8max16),
                        List.of(aRun("e").quota("a/gpu").idle(IdleMode.OnlyIdle).instances(2).min(1).gpus(4).priority(5)
                                        .runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2"),
                                aRun("f").quota("a/gpu").idle(IdleMode.OnlyIdle).instances(2).min(1).gpus(4).priority(1)
                                        .runningElastic(NotInQuota, 0, Set.of(), "n-3", "n-4")),
                        List.of(aRun("g").quota("a/gpu").gpus(4).build()), Map.of("f", "shrink [1]", "g", "admit InQuota [0]")),
                new Case("a borrower of the quota at its minimum is stopped whole, after the extras", nodes("n", 4, "sim-gpu"), List.of(a8max16),
                        List.of(aRun("e").quota("a/gpu").idle(IdleMode.OnlyIdle).instances(2).min(1).gpus(4).priority(5)
                                        .runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2"),
                                aRun("r").quota("a/gpu").idle(IdleMode.OnlyIdle).gpus(8).running(NotInQuota, 0, "n-3")),
                        List.of(aRun("g").quota("a/gpu").gpus(8).build()), Map.of("r", "preempt", "g", "admit InQuota [0]")),

                // Preemption for fairness: extras on idle capacity first, whole runs only when they are not enough
                new Case("preemption for fairness takes an elastic run's extras instead of stopping it", nodes("n", 3, "sim-gpu"), teams,
                        List.of(aRun("b-own").quota("b/gpu").gpus(8).running(InQuota, 0, "n-1"), aRun("c-own").quota("c/gpu").gpus(8).running(InQuota, 0, "n-2"),
                                onGpus(aRun("e").quota("b/gpu").idle(IdleMode.Acceptable).instances(2).min(1).gpus(4).priority(5), NotInQuota, "n-3", 0, 4)),
                        List.of(aRun("c").quota("c/gpu").idle(IdleMode.Acceptable).gpus(4).build()), Map.of("e", "shrink [1]", "c", "WaitingForReclaim")),
                new Case("and stops runs whole, as before, when extras the rule lets go are not enough", nodes("n", 4, "sim-gpu"), bigTeams,
                        List.of(aRun("b-own").quota("b/gpu").gpus(8).running(InQuota, 0, "n-1"), aRun("c-own").quota("c/gpu").gpus(8).running(InQuota, 0, "n-2"),
                                onGpus(aRun("e").quota("b/gpu").idle(IdleMode.Acceptable).instances(2).min(1).gpus(4).priority(5), NotInQuota, "n-3", 0, 4),
                                aRun("r").quota("b/gpu").idle(IdleMode.Acceptable).gpus(8).running(NotInQuota, 0, "n-4")),
                        List.of(aRun("c").quota("c/gpu").idle(IdleMode.Acceptable).gpus(8).build()), Map.of("r", "preempt", "c", "WaitingForReclaim")),

                // Reclaim: extras first, whole only below the minimum
                new Case("a reclaim takes an elastic borrower's extras instead of stopping it", nodes("n", 4, "sim-gpu"), List.of(a16, b0),
                        List.of(aRun("e").quota("b/gpu").idle(IdleMode.OnlyIdle).instances(4).min(2).gpus(8).runningElastic(NotInQuota, 0, Set.of(),
                                "n-1", "n-2", "n-3", "n-4")),
                        List.of(aRun("g").quota("a/gpu").instances(2).gpus(8).build()), Map.of("e", "shrink [2, 3]", "g", "WaitingForReclaim")),
                new Case("extras go before a rigid borrower that comes first in victim order", nodes("n", 4, "sim-gpu"), List.of(a16, b0),
                        List.of(aRun("e").quota("b/gpu").idle(IdleMode.OnlyIdle).instances(3).min(2).gpus(8).priority(5)
                                        .runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2", "n-3"),
                                aRun("r").quota("b/gpu").idle(IdleMode.OnlyIdle).gpus(8).running(NotInQuota, 0, "n-4")),
                        List.of(aRun("g").quota("a/gpu").gpus(8).build()), Map.of("e", "shrink [2]", "g", "WaitingForReclaim")),
                new Case("a run at its minimum is stopped whole", nodes("n", 2, "sim-gpu"), List.of(a16, b0),
                        List.of(aRun("e").quota("b/gpu").idle(IdleMode.OnlyIdle).instances(4).min(2).gpus(8).runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2")),
                        List.of(aRun("g").quota("a/gpu").gpus(8).build()), Map.of("e", "preempt", "g", "WaitingForReclaim")),
                new Case("when extras are not enough, runs are stopped whole too, and only the extras needed go", nodes("n", 4, "sim-gpu"), List.of(a16, b0),
                        List.of(aRun("e").quota("b/gpu").idle(IdleMode.OnlyIdle).instances(3).min(2).gpus(8).priority(5)
                                        .runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2", "n-3"),
                                aRun("r").quota("b/gpu").idle(IdleMode.OnlyIdle).gpus(8).running(NotInQuota, 0, "n-4")),
                        List.of(aRun("g").quota("a/gpu").instances(2).gpus(8).build()), Map.of("e", "shrink [2]", "r", "preempt", "g", "WaitingForReclaim")),
                new Case("the extras taken are those of the first run in victim order", nodes("n", 4, "sim-gpu"), List.of(a16, b0),
                        List.of(aRun("e").quota("b/gpu").idle(IdleMode.OnlyIdle).instances(2).min(1).gpus(8).priority(5)
                                        .runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2"),
                                aRun("f").quota("b/gpu").idle(IdleMode.OnlyIdle).instances(2).min(1).gpus(8).priority(1)
                                        .runningElastic(NotInQuota, 0, Set.of(), "n-3", "n-4")),
                        List.of(aRun("g").quota("a/gpu").gpus(8).build()), Map.of("f", "shrink [1]", "g", "WaitingForReclaim")),
                new Case("a guaranteed elastic run's borrowed extras are reclaimed, never its guaranteed instances", nodes("n", 4, "sim-gpu"),
                        List.of(aQuota("c/gpu").parent("org/gpu").minGpus(16).build(), root, a, b),
                        List.of(aRun("e").quota("a/gpu").idle(IdleMode.Acceptable).instances(4).min(1).gpus(8)
                                .runningElastic(InQuota, 0, Set.of(2, 3), "n-1", "n-2", "n-3", "n-4")),
                        List.of(aRun("g").quota("c/gpu").instances(2).gpus(8).build()), Map.of("e", "shrink [2, 3]", "g", "WaitingForReclaim"))
        );
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decides(Case c) {
        CycleResult result = scheduler.schedule(new ClusterSnapshot(c.nodes(), c.quotas(), c.active(), c.pending()), T0.plusSeconds(3600));
        assertThat(describe(result)).isEqualTo(new TreeMap<>(c.expected()));
        ClusterState state = ClusterState.of(new ClusterSnapshot(c.nodes(), c.quotas(), c.active(), List.of()));
        assertThat(scheduler.schedule(state, c.pending(), T0.plusSeconds(3600))).as("a kept state decides as a snapshot").isEqualTo(result);
    }

    /** A cycle's decisions, each run to what happened, elastic ones with their ranks. */
    static Map<String, String> describe(CycleResult result) {
        Map<String, String> out = new TreeMap<>();
        for (Decision decision : result.decisions()) {
            String text = decision.accept(new Decision.Handler<String>() {
                @Override
                public String admit(Decision.Admit admit) {
                    return "admit " + admit.realTimeResources() + " " + admit.placements().stream().map(Placement::rank).toList()
                            + (admit.borrowed().isEmpty() ? "" : " borrowed " + admit.borrowed());
                }

                @Override
                public String grow(Decision.Grow grow) {
                    return "grow " + grow.placements().stream().map(Placement::rank).toList() + (grow.borrowed().isEmpty() ? "" : " borrowed " + grow.borrowed());
                }

                @Override
                public String shrink(Decision.Shrink shrink) {
                    return "shrink " + shrink.ranks();
                }

                @Override
                public String preempt(Decision.Preempt preempt) {
                    return "preempt";
                }

                @Override
                public String promote(Decision.Promote promote) {
                    return "promote";
                }

                @Override
                public String waiting(Decision.Wait wait) {
                    return wait.reason().name();
                }
            });
            out.put(decision.runId().value(), text);
        }
        return out;
    }

    /** An elastic run of the builder with its instances 0.. all on {@code node}, from the GPUs given on. */
    static ActiveRun onGpus(Builders.RunBuilder builder, io.slipstream.api.run.RealTimeResources where, String node, int... firstGpus) {
        List<Allocation> allocations = new java.util.ArrayList<>();
        for (int rank = 0; rank < firstGpus.length; rank++) {
            allocations.add(builder.allocation(rank, node, firstGpus[rank]));
        }
        ActiveRun shape = builder.runningElastic(where, 0, Set.of());
        return new ActiveRun(shape.id(), shape.quota(), shape.idleMode(), shape.priority(), shape.startedAt(), null, where, allocations, false, null, null,
                builder.elastic(Set.of(), List.of()));
    }

    /** A guaranteed elastic run of the builder with its instances 0.. on {@code nodes}, from their GPU 4 on, {@code borrowed} on idle capacity. */
    static ActiveRun onNodes(Builders.RunBuilder builder, Set<Integer> borrowed, String... nodes) {
        List<Allocation> allocations = new java.util.ArrayList<>();
        for (int rank = 0; rank < nodes.length; rank++) {
            allocations.add(builder.allocation(rank, nodes[rank], 4));
        }
        ActiveRun shape = builder.runningElastic(InQuota, 0, Set.of());
        return new ActiveRun(shape.id(), shape.quota(), shape.idleMode(), shape.priority(), shape.startedAt(), null, InQuota, allocations, false, null, null,
                builder.elastic(borrowed, List.of()));
    }

    /** An elastic run of the builder whose slots {@code live} are on nodes n-1.., and slot {@code rank} is being released on {@code node} for {@code forRun}. */
    static ActiveRun releasing(Builders.RunBuilder builder, io.slipstream.api.run.RealTimeResources where, List<Integer> live, int rank, String node,
            String forRun) {
        List<Allocation> allocations = live.stream().map(r -> builder.allocation(r, "n-" + (r + 1), 0)).toList();
        ActiveRun shape = builder.runningElastic(where, 0, Set.of());
        return new ActiveRun(shape.id(), shape.quota(), shape.idleMode(), shape.priority(), shape.startedAt(), null, where, allocations, false, null, null,
                builder.elastic(Set.of(), List.of(new ElasticRun.Release(builder.allocation(rank, node, 0), new RunId(forRun)))));
    }

    @Test
    void aShrinkTellsAnotherTeamsRunNeitherTheRunNorTheQuotaItMakesRoomFor() {
        var a16 = aQuota("a/gpu").minGpus(16).build();
        var b0 = aQuota("b/gpu").parent("a/gpu").minGpus(0).build();
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 4, "sim-gpu"), List.of(a16, b0),
                List.of(aRun("e").quota("b/gpu").idle(IdleMode.OnlyIdle).instances(4).min(2).gpus(8)
                        .runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2", "n-3", "n-4")),
                List.of(aRun("g").quota("a/gpu").instances(2).gpus(8).build())), T0.plusSeconds(3600));
        Decision.Shrink shrink = result.shrunk().get(0);
        assertThat(shrink.forRun()).isEqualTo(new RunId("g"));
        assertThat(shrink.kind()).isEqualTo(Decision.PreemptKind.Reclaim);
        assertThat(shrink.reason()).startsWith("Reclaimed").doesNotContain("g/").doesNotContain("a/gpu").doesNotContain(" g ");
        assertThat(result.preempted()).isEmpty();
    }

    @Test
    void extrasGivingWayToAQueuedRunReclaimNoGuarantee() {
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes("n", 2, "sim-gpu"), List.of(),
                List.of(aRun("e").instances(2).min(1).gpus(8).runningElastic(NotInQuota, 0, Set.of(), "n-1", "n-2")),
                List.of(aRun("r").gpus(4).build())), T0.plusSeconds(3600));
        assertThat(result.shrunk()).singleElement().satisfies(shrink -> {
            assertThat(shrink.kind()).isEqualTo(Decision.PreemptKind.Extras);
            assertThat(shrink.reason()).startsWith("Shrunk");
        });
        assertThatThrownBy(() -> new Decision.Preempt(new RunId("e"), new RunId("r"), "x", Decision.PreemptKind.Extras))
                .hasMessageContaining("never stopped whole for extras");
    }

    @Test
    void theCapacityAShrinkFreesIsHeldForTheRunItWasFor() {
        // e's slots 2 and 3 are being released for g: a run queued before g may not take n-3 or n-4, and g starts there once they are gone.
        var a16 = aQuota("a/gpu").minGpus(16).build();
        var b0 = aQuota("b/gpu").parent("a/gpu").minGpus(0).build();
        var e = aRun("e").quota("b/gpu").idle(IdleMode.OnlyIdle).instances(4).min(2).gpus(8);
        List<Allocation> live = List.of(e.allocation(0, "n-1", 0), e.allocation(1, "n-2", 0));
        ActiveRun shrinking = new ActiveRun(new RunId("e"), QuotaId.parse("b/gpu"), IdleMode.OnlyIdle, 0, T0, null, NotInQuota, live, false, null, null,
                e.elastic(Set.of(), List.of(new ElasticRun.Release(e.allocation(2, "n-3", 0), new RunId("g")),
                        new ElasticRun.Release(e.allocation(3, "n-4", 0), new RunId("g")))));
        PendingRun g = aRun("g").quota("a/gpu").instances(2).gpus(8).submittedSecondsAfterStart(100).build();
        PendingRun before = aRun("early").quota("b/gpu").idle(IdleMode.OnlyIdle).gpus(8).build();
        CycleResult stopping = scheduler.schedule(new ClusterSnapshot(nodes("n", 4, "sim-gpu"), List.of(a16, b0), List.of(shrinking), List.of(before, g)),
                T0.plusSeconds(3600));
        assertThat(describe(stopping)).containsEntry("g", "WaitingForReclaim").containsEntry("early", "WaitingForIdleCapacity").doesNotContainKey("e");

        ActiveRun shrunk = new ActiveRun(new RunId("e"), QuotaId.parse("b/gpu"), IdleMode.OnlyIdle, 0, T0, null, NotInQuota, live, false, null, null,
                e.elastic(Set.of(), List.of()));
        CycleResult gone = scheduler.schedule(new ClusterSnapshot(nodes("n", 4, "sim-gpu"), List.of(a16, b0), List.of(shrunk),
                List.of(before, g.withReclaimed(true))), T0.plusSeconds(3610));
        assertThat(describe(gone)).containsEntry("g", "admit InQuota [0, 1]").containsEntry("early", "WaitingForIdleCapacity");
        assertThat(gone.admitted().get(0).placements()).extracting(Placement::node).containsExactlyInAnyOrder("n-3", "n-4");
    }

    @Test
    void theLedgerCountsEachInstanceAsItStands() {
        var a = aQuota("a/gpu").parent("org/gpu").minGpus(16).build();
        ActiveRun e = aRun("e").quota("a/gpu").idle(IdleMode.Acceptable).instances(4).min(1).gpus(8)
                .runningElastic(InQuota, 0, Set.of(2, 3), "n-1", "n-2", "n-3", "n-4");
        QuotaLedger ledger = QuotaLedger.of(new ClusterSnapshot(nodes("n", 4, "sim-gpu"), List.of(aQuota("org/gpu").minGpus(32).build(), a), List.of(e),
                List.of()));
        QuotaLedger.QuotaLine line = ledger.quota(QuotaId.parse("a/gpu")).orElseThrow();
        assertThat(line.inQuota().gpu()).isEqualTo(16);
        assertThat(line.borrowed().gpu()).isEqualTo(16);
        assertThat(line.used().gpu()).isEqualTo(32);
    }

    @Test
    void aMinimumMustBeAGroupsCountOrLessAndAtLeastOne() {
        List<InstanceRequest> two = List.of(new InstanceRequest(0, "w", Resources.NONE), new InstanceRequest(1, "w", Resources.NONE));
        assertThatThrownBy(() -> new PendingRun(new RunId("r"), null, IdleMode.OnlyIdle, 0, T0, two, false, Map.of("w", 0)))
                .hasMessageContaining("minReplicas of group w must be 1 to its 2 instances");
        assertThatThrownBy(() -> new PendingRun(new RunId("r"), null, IdleMode.OnlyIdle, 0, T0, two, false, Map.of("x", 1)))
                .hasMessageContaining("group x");
        assertThat(new PendingRun(new RunId("r"), null, IdleMode.OnlyIdle, 0, T0, two, false, Map.of("w", 2)).elastic()).as("all: rigid").isFalse();
        PendingRun elastic = new PendingRun(new RunId("r"), null, IdleMode.OnlyIdle, 0, T0, two, false, Map.of("w", 1));
        assertThat(elastic.minimum()).extracting(InstanceRequest::rank).containsExactly(0);
        assertThat(elastic.extras()).extracting(InstanceRequest::rank).containsExactly(1);
    }
}
