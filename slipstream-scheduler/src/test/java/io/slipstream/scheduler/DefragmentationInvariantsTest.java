package io.slipstream.scheduler;

import static io.slipstream.scheduler.Builders.GI;
import static io.slipstream.scheduler.Builders.T0;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.nodes;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.Resources;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Random cycles on 4 nodes x 8 GPUs: team a runs 2 x 8-GPU gangs on a 16-GPU guarantee; teams b and c run 1-GPU jobs
 * (on their 8-GPU guarantees, and borrowing); b and c allow moves, and every running job has a checkpoint. A gang whose
 * guarantee is free can always be given two whole nodes (borrowers reclaimed, b's and c's guaranteed runs moved onto
 * the other two), so it never waits more than {@link #MAX_WAIT} cycles. A failure names its seed; rerun one with
 * {@code -Dscheduler.seed=N}.
 */
class DefragmentationInvariantsTest {
    private static final int SEQUENCES = Integer.getInteger("scheduler.sequences", 40);
    private static final int STEPS = 300;
    /** The cycle that moves, the one the moved runs stop in (a grace period is one cycle here), the one it starts in. */
    private static final int MAX_WAIT = 3;
    private static final Resources ONE = new Resources(4000, 32 * GI, 1, null);
    private static final Resources WHOLE = new Resources(32_000, 256 * GI, 8, null);
    private static final List<NodeState> NODES = nodes("n", 4, "sim-gpu");
    private static final List<QuotaState> QUOTAS = List.of(aQuota("a/gpu").minGpus(16).build(), aQuota("b/gpu").minGpus(8).build().withAllowMoves(true),
            aQuota("c/gpu").minGpus(8).build().withAllowMoves(true));

    @Test
    void aGangWhoseGuaranteeIsFreeStartsWithinAFewCycles() {
        String only = System.getProperty("scheduler.seed");
        for (long seed = 1; seed <= SEQUENCES; seed++) {
            if (only != null && Long.parseLong(only) != seed) {
                continue;
            }
            try {
                new Replay(seed).run();
            } catch (AssertionError e) {
                throw new AssertionError("gang liveness broken with seed " + seed + " (rerun with -Dscheduler.seed=" + seed + ")", e);
            }
        }
    }

    private static final class Replay {
        private final Random random;
        private final Scheduler scheduler = new Scheduler(new Defragmentation(8, Duration.ZERO));
        private final Map<RunId, PendingRun> pending = new LinkedHashMap<>();
        private final Map<RunId, ActiveRun> active = new LinkedHashMap<>();
        private final KeptState kept = new KeptState(NODES, QUOTAS);
        /** The queued gang and the cycle from which its guarantee was free. */
        private final Map<RunId, Integer> entitledSince = new LinkedHashMap<>();
        private int next;
        private int cycle;

        Replay(long seed) {
            this.random = new Random(seed);
            // Start from the worst: b's and c's guarantees spread over every node (as an earlier scheduler left them).
            for (int i = 0; i < 16; i++) {
                RunId id = new RunId("spread-" + i);
                active.put(id, new ActiveRun(id, QuotaId.parse(i < 8 ? "b/gpu" : "c/gpu"), IdleMode.Disabled, 0, T0, T0, RealTimeResources.InQuota,
                        List.of(new Allocation(0, "n-" + (i % 4 + 1), ONE, List.of(i / 4))), false, null));
            }
        }

        void run() {
            for (int step = 0; step < STEPS; step++) {
                int action = random.nextInt(10);
                if (action < 5) {
                    submitSmall();
                } else if (action < 7) {
                    submitGang();
                } else if (!active.isEmpty()) {
                    finishOne();
                }
                cycle();
            }
        }

        private void submitSmall() {
            QuotaId quota = QuotaId.parse(random.nextBoolean() ? "b/gpu" : "c/gpu");
            IdleMode mode = random.nextBoolean() ? IdleMode.Acceptable : IdleMode.Disabled;
            RunId id = new RunId("small-" + next++);
            pending.put(id, new PendingRun(id, quota, mode, 0, T0.plusSeconds(next), List.of(new InstanceRequest(0, "main", ONE))));
        }

        private void submitGang() {
            RunId id = new RunId("gang-" + next++);
            pending.put(id, new PendingRun(id, QuotaId.parse("a/gpu"), IdleMode.Disabled, 0, T0.plusSeconds(next),
                    List.of(new InstanceRequest(0, "main", WHOLE), new InstanceRequest(1, "main", WHOLE))));
        }

        private void finishOne() {
            List<RunId> running = active.values().stream().filter(r -> !r.stopping()).map(ActiveRun::id).sorted().toList();
            if (!running.isEmpty()) {
                active.remove(running.get(random.nextInt(running.size())));
            }
        }

        private void cycle() {
            cycle++;
            Instant now = T0.plusSeconds(10_000L + 10L * cycle);
            for (ActiveRun run : new ArrayList<>(active.values())) {
                if (run.stopping()) {
                    active.remove(run.id());
                    boolean forGang = pending.containsKey(run.reclaimFor());
                    pending.put(run.id(), new PendingRun(run.id(), run.quota(), run.idleMode(), 0, T0, run.allocations().stream()
                            .map(a -> new InstanceRequest(a.rank(), "main", a.resources())).toList()));
                    if (forGang) {
                        PendingRun gang = pending.get(run.reclaimFor());
                        pending.put(gang.id(), gang.withReclaimed(true));
                    }
                }
            }
            boolean aHoldsNothing = active.values().stream().noneMatch(r -> r.quota().equals(QuotaId.parse("a/gpu")));
            for (PendingRun run : pending.values()) {
                if (run.id().value().startsWith("gang-") && aHoldsNothing && !entitledSince.containsKey(run.id())
                        && entitledSince.keySet().stream().noneMatch(pending::containsKey)) {
                    entitledSince.put(run.id(), cycle); // the first queued gang of a, while a's guarantee is all free
                }
            }
            CycleResult result = scheduler.schedule(new ClusterSnapshot(NODES, QUOTAS, new ArrayList<>(active.values()), new ArrayList<>(pending.values())), now);
            List<NodeState> nodes = new ArrayList<>(NODES);
            List<ActiveRun> running = new ArrayList<>(active.values());
            List<PendingRun> queued = new ArrayList<>(pending.values());
            Collections.shuffle(nodes, random);
            Collections.shuffle(running, random);
            Collections.shuffle(queued, random);
            assertThat(scheduler.schedule(new ClusterSnapshot(nodes, QUOTAS, running, queued), now)).as("the same input in another order decides the same")
                    .isEqualTo(result);
            ClusterState state = kept.with(active.values());
            assertThat(scheduler.schedule(state, queued, now)).as("a state kept between cycles decides as a snapshot").isEqualTo(result);
            assertThat(scheduler.schedule(state, queued, now)).as("a cycle leaves the kept state as it was").isEqualTo(result);
            for (Decision decision : result.decisions()) {
                if (decision instanceof Decision.Admit admit) {
                    PendingRun run = pending.remove(admit.runId());
                    List<Allocation> allocations = new ArrayList<>();
                    for (Placement placement : admit.placements()) {
                        allocations.add(new Allocation(placement.rank(), placement.node(), run.instances().get(placement.rank()).resources(), placement.gpus()));
                    }
                    active.put(run.id(), new ActiveRun(run.id(), run.quota(), run.idleMode(), 0, now, now, admit.realTimeResources(), allocations, false, null));
                    entitledSince.remove(run.id());
                } else if (decision instanceof Decision.Preempt preempt) {
                    ActiveRun victim = active.get(preempt.runId());
                    assertThat(victim.stopping()).isFalse();
                    if (preempt.kind() == Decision.PreemptKind.Move) {
                        assertThat(victim.realTimeResources()).as("only guaranteed runs are moved").isEqualTo(RealTimeResources.InQuota);
                        assertThat(victim.quota()).isNotEqualTo(QuotaId.parse("a/gpu"));
                    }
                    active.put(victim.id(), new ActiveRun(victim.id(), victim.quota(), victim.idleMode(), 0, victim.startedAt(), victim.lastCheckpointAt(),
                            victim.realTimeResources(), victim.allocations(), true, preempt.forRun(),
                            preempt.kind() == Decision.PreemptKind.Move ? now : victim.movedAt()));
                } else if (decision instanceof Decision.Promote promote) {
                    ActiveRun run = active.get(promote.runId());
                    active.put(run.id(), new ActiveRun(run.id(), run.quota(), run.idleMode(), 0, run.startedAt(), run.lastCheckpointAt(), RealTimeResources.InQuota,
                            run.allocations(), false, null, run.movedAt()));
                }
            }
            assertThat(result.preempted().stream().filter(p -> p.kind() == Decision.PreemptKind.Move)).as("at most 8 moves a cycle").hasSizeLessThanOrEqualTo(8);
            for (var entry : entitledSince.entrySet()) {
                if (pending.containsKey(entry.getKey())) {
                    assertThat(cycle - entry.getValue()).as("cycles gang %s has waited with its guarantee free (cycle %d): %s", entry.getKey(), cycle,
                            result.decisions()).isLessThan(MAX_WAIT);
                }
            }
        }
    }
}
