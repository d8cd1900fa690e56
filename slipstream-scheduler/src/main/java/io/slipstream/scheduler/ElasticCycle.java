package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import io.slipstream.api.spec.Resources;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one cycle decides of elastic runs (docs/elastic.md), for the {@link Scheduler}'s cycle: their shrinks, wherever
 * extras give way (a reclaim, step 3; a queued run of the same quota's guarantee, step 3; a waiting borrower, step 5a),
 * and their extras (step 6). It shares the cycle's decisions and the runs stopping for each queued run.
 */
final class ElasticCycle {
    /** What the cycle does that this needs: hold for a run what its victims free, and tell a run to wait. */
    interface Outcomes {
        void preemptAndHold(PendingRun run, Resources request, Set<String> model, List<ActiveRun> victims, List<ActiveRun> freedBy,
                List<ActiveRun> alreadyStopping, String what);

        void wait(int position, PendingRun run, WaitReason reason, String message);
    }

    private final ClusterState state;
    private final QuotaBook book;
    private final WorkingCluster cluster;
    private final AllowedModels allowed;
    private final CycleRuns reclaimable;
    private final List<Decision> decisions;
    private final Map<RunId, List<ActiveRun>> stoppingFor;
    private final Instant now;
    private final Outcomes outcomes;
    private final ElasticReclaim shrinks;
    /** Elastic runs of the queue as they were given (the queue holds their minimum), by id. */
    private final Map<RunId, PendingRun> pending = new HashMap<>();
    /** Where in the decisions each elastic run admitted this cycle is: step 6 adds its extras. */
    private final Map<RunId, Integer> admitted = new LinkedHashMap<>();

    ElasticCycle(ClusterState state, AllowedModels allowed, CycleRuns reclaimable, VictimSearch victims, List<Decision> decisions,
            Map<RunId, List<ActiveRun>> stoppingFor, Instant now, Outcomes outcomes) {
        this.state = state;
        this.book = state.book;
        this.cluster = state.cluster;
        this.allowed = allowed;
        this.reclaimable = reclaimable;
        this.decisions = decisions;
        this.stoppingFor = stoppingFor;
        this.now = now;
        this.outcomes = outcomes;
        this.shrinks = new ElasticReclaim(state, reclaimable, victims);
    }

    /** An elastic run of the queue: the cycle decides its minimum, as a gang (returned); its extras come in step 6. */
    PendingRun queued(PendingRun run) {
        pending.put(run.id(), run);
        return run.gang();
    }

    /** A run of the queue is admitted now: its admission is the next decision (for step 6, if it is elastic). */
    void admitting(PendingRun run) {
        if (!pending.isEmpty() && pending.containsKey(run.id())) {
            admitted.put(run.id(), decisions.size());
        }
    }

    /** Step 3a with elastic extras ({@link ElasticReclaim#choose}). */
    ElasticReclaim.Plan reclaim(PendingRun run, Set<String> model, List<ActiveRun> alreadyStopping) {
        return shrinks.choose(run, model, alreadyStopping);
    }

    /**
     * Shrinks an elastic run for {@code forRun}: its {@code instances} (standing as {@code standing}) stop and are no longer
     * charged (as for a victim: as from the next cycle on). Returns the view of what they give back, stopping for {@code forRun}.
     */
    private ActiveRun shrink(ActiveRun shrunk, List<Allocation> instances, PendingRun forRun, String reason, RealTimeResources standing,
            Decision.PreemptKind kind) {
        reclaimable.remove(shrunk);
        decisions.add(new Decision.Shrink(shrunk.id(), instances.stream().map(Allocation::rank).toList(), forRun.id(), reason, kind));
        book.charge(shrunk.quota(), ClusterState.total(instances), standing, -1);
        return ClusterState.stoppingView(shrunk, forRun.id(), instances);
    }

    private void stoppingFor(PendingRun run, ActiveRun view) {
        stoppingFor.computeIfAbsent(run.id(), id -> new ArrayList<>()).add(view);
    }

    /**
     * Step 3: its quota's elastic runs' extras on the guarantee give way to the run's minimum ({@link ElasticReclaim#forGuarantee}):
     * they are shrunk, and the run goes on as one their capacity is stopping for. Returns whether the guarantee holds it now.
     */
    boolean extrasGiveWay(PendingRun run, Resources request) {
        Map<ActiveRun, List<Allocation>> taken = shrinks.forGuarantee(run, request);
        if (taken == null) {
            return false;
        }
        taken.forEach((shrunk, instances) -> stoppingFor(run, shrink(shrunk, instances, run,
                "Shrunk: a queued run of the same quota needs the guarantee its extra instances use", RealTimeResources.InQuota, Decision.PreemptKind.Extras)));
        return true;
    }

    /**
     * Step 3: room under its quota's max for a guaranteed run ({@link ElasticReclaim#forMax}): its quota's borrowed extras
     * are shrunk, and its borrowers stopped whole only if that is not enough ({@link OwnQuotaRoom#UNDER_MAX}); the run goes
     * on as one they are stopping for. {@code null}: the quota has no borrowed extras (the cycle makes room as without
     * elastic runs); else whether there is room now.
     */
    Boolean roomUnderMax(PendingRun run, Resources request) {
        ElasticReclaim.Plan plan = shrinks.forMax(run, request);
        if (plan == ElasticReclaim.Plan.NO_EXTRAS) {
            return null;
        }
        if (plan == null) {
            return false;
        }
        for (ActiveRun victim : plan.whole()) {
            reclaimable.remove(victim);
            stoppingFor(run, victim);
            decisions.add(new Decision.Preempt(victim.id(), run.id(), OwnQuotaRoom.UNDER_MAX.reason(run)));
            ClusterState.charge(book, victim, -1); // as OwnQuotaRoom does: no longer charged, as from the next cycle on
        }
        plan.shrinks().forEach((shrunk, instances) -> stoppingFor(run, shrink(shrunk, instances, run, "Shrunk: guaranteed run " + run.id()
                + " of the same quota needs room under its max", RealTimeResources.NotInQuota, Decision.PreemptKind.Reclaim)));
        return true;
    }

    /**
     * Step 3a: shrinks elastic runs (their extras on idle capacity go), and stops whole only the runs the plan says, for
     * the run; holds for it what it needs beyond what all of them give back.
     */
    void reclaimWithShrinks(PendingRun run, Resources request, Set<String> model, ElasticReclaim.Plan plan, List<ActiveRun> alreadyStopping) {
        List<ActiveRun> freedBy = new ArrayList<>(plan.whole());
        plan.shrinks().forEach((shrunk, instances) -> freedBy.add(shrink(shrunk, instances, run, shrunk.quota() != null && shrunk.quota().equals(run.quota())
                ? "Shrunk: a guaranteed run of the same quota needs the capacity its extra instances borrowed"
                // Another team's quota and run are not the shrunk run's to know (its instances read this in their notice file).
                : "Reclaimed: the quota that guarantees the capacity its extra instances borrowed needs it back", RealTimeResources.NotInQuota,
                Decision.PreemptKind.Reclaim)));
        outcomes.preemptAndHold(run, request, model, plan.whole(), freedBy, alreadyStopping, plan.whole().isEmpty()
                ? "instance(s) of elastic runs on borrowed capacity to stop (their extras)"
                : "run(s) on borrowed capacity to stop, and extra instances of elastic runs");
    }

    /**
     * Step 5a: borrowers still waiting take elastic runs' extras on idle capacity ({@link ElasticReclaim#forQueued});
     * what they free is held for each as borrowed, as for a preemption for fairness.
     */
    void extrasForQueued(List<PendingRun> borrowers, List<Resources> requests, int[] borrowerAt, List<Integer> places) {
        shrinks.forQueued(borrowers, requests, places, allowed, run -> !stoppingFor.getOrDefault(run.id(), List.of()).isEmpty(), (i, taken, model) -> {
            PendingRun run = borrowers.get(i);
            List<Allocation> freed = new ArrayList<>();
            taken.forEach((shrunk, instances) -> {
                stoppingFor(run, shrink(shrunk, instances, run, "Shrunk: a queued run's minimum comes before other runs' extra instances on idle capacity",
                        RealTimeResources.NotInQuota, Decision.PreemptKind.Extras));
                freed.addAll(instances);
            });
            List<Placement> held = state.placeOnFreed(run.instances(), model, freed);
            if (held == null) {
                throw new IllegalStateException("run " + run.id() + " did not fit after shrinking " + taken.keySet());
            }
            cluster.holdBeyond(held, run.instances(), freed);
            book.charge(run.quota(), requests.get(i), RealTimeResources.NotInQuota, 1);
            outcomes.wait(borrowerAt[i], run, WaitReason.WaitingForReclaim, "waiting for " + freed.size()
                    + " extra instance(s) of elastic runs on idle capacity to stop: a queued run's minimum comes before other runs' extras");
        });
    }

    /** Step 5b: preemption for fairness takes an elastic run's extras on idle capacity for a borrower ({@link FairExtras}). */
    void shrinkForFairness(ActiveRun shrunk, List<Allocation> instances, PendingRun forRun) {
        stoppingFor(forRun, shrink(shrunk, instances, forRun, FairPreemption.SHRINK_REASON, RealTimeResources.NotInQuota, Decision.PreemptKind.FairSharing));
    }

    /**
     * Step 6 ({@link ElasticPass}): after every queued run's minimum was decided. Extras leave the part of a guarantee
     * {@code promised} to runs that wait for nodes.
     */
    void grow(Map<QuotaId, Resources> promised) {
        if (!admitted.isEmpty() || !state.elastic.isEmpty()) {
            new ElasticPass(book, cluster, allowed, promised).decide(decisions, admitted, pending, reclaimable, now);
        }
    }
}
