package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A cluster driven by the scheduler cycle after cycle, its decisions applied as the control loop applies them: an
 * admitted run holds its placements, a preempted one stops (it holds its nodes for {@code graceCycles} more cycles,
 * then is queued again, and the run it was preempted for is told its capacity was reclaimed), a promoted one is guaranteed. No run ends by
 * itself: {@link #end} ends one. {@link #settle} runs cycles until one changes nothing. Each cycle is a second later.
 */
final class Settling {
    /** A preemption for fairness: which run of which quota went, for which run of which quota, at which cycle. */
    record Preemption(RunId victim, QuotaId victimQuota, RunId forRun, QuotaId forQuota, int cycle) {
    }

    private final Scheduler scheduler;
    private final List<NodeState> nodes;
    private final List<QuotaState> quotas;
    private final int graceCycles;
    private final Map<RunId, Integer> stoppingSince = new TreeMap<>();
    private final Map<RunId, PendingRun> submitted = new TreeMap<>();
    final Map<RunId, ActiveRun> active = new TreeMap<>();
    final Map<RunId, PendingRun> pending = new TreeMap<>();
    final List<Preemption> fairPreemptions = new ArrayList<>();
    int otherPreemptions;
    int cycles;
    private Instant now = Builders.T0;

    Settling(Scheduler scheduler, List<NodeState> nodes, List<QuotaState> quotas) {
        this(scheduler, nodes, quotas, 1);
    }

    Settling(Scheduler scheduler, List<NodeState> nodes, List<QuotaState> quotas, int graceCycles) {
        this.scheduler = scheduler;
        this.graceCycles = graceCycles;
        this.nodes = nodes;
        this.quotas = quotas;
    }

    void submit(PendingRun run) {
        submitted.put(run.id(), run);
        pending.put(run.id(), run);
    }

    /** An active run ends (it leaves at once). */
    void end(RunId id) {
        active.remove(id);
        stoppingSince.remove(id);
    }

    /** Runs cycles until one changes nothing and no run is stopping; fails after {@code limit} cycles. */
    void settle(int limit) {
        for (int i = 0; i < limit; i++) {
            if (!cycle() && stoppingSince.isEmpty()) {
                return;
            }
        }
        throw new AssertionError("no fixed point after " + limit + " cycles: " + active.size() + " active, " + pending.size() + " queued");
    }

    /** One cycle; returns whether anything changed. */
    boolean cycle() {
        cycles++;
        now = now.plusSeconds(1);
        boolean changed = false;
        for (ActiveRun run : List.copyOf(active.values())) {
            if (run.stopping() && cycles - stoppingSince.get(run.id()) >= graceCycles) {
                // Its instances are gone: queued again; the run it stopped for has its capacity.
                active.remove(run.id());
                stoppingSince.remove(run.id());
                pending.put(run.id(), submitted.get(run.id()));
                PendingRun owner = run.reclaimFor() == null ? null : pending.get(run.reclaimFor());
                if (owner != null) {
                    pending.put(owner.id(), owner.withReclaimed(true));
                }
                changed = true;
            }
        }
        CycleResult result = scheduler.schedule(new ClusterSnapshot(nodes, quotas, List.copyOf(active.values()), List.copyOf(pending.values())), now);
        for (Decision decision : result.decisions()) {
            if (decision instanceof Decision.Admit admit) {
                PendingRun run = pending.remove(admit.runId());
                List<Allocation> allocations = new ArrayList<>();
                for (Placement p : admit.placements()) {
                    allocations.add(new Allocation(p.rank(), p.node(), run.instances().get(p.rank()).resources(), p.gpus()));
                }
                active.put(run.id(), new ActiveRun(run.id(), run.quota(), run.idleMode(), run.priority(), now, null, admit.realTimeResources(), allocations,
                        false, null));
                changed = true;
            } else if (decision instanceof Decision.Preempt preempt) {
                ActiveRun victim = active.get(preempt.runId());
                active.put(victim.id(), new ActiveRun(victim.id(), victim.quota(), victim.idleMode(), victim.priority(), victim.startedAt(), null,
                        victim.realTimeResources(), victim.allocations(), true, preempt.forRun()));
                stoppingSince.put(victim.id(), cycles);
                if (preempt.kind() == Decision.PreemptKind.FairSharing) {
                    fairPreemptions.add(new Preemption(victim.id(), victim.quota(), preempt.forRun(), submitted.get(preempt.forRun()).quota(), cycles));
                } else {
                    otherPreemptions++;
                }
                changed = true;
            } else if (decision instanceof Decision.Promote promote) {
                ActiveRun run = active.get(promote.runId());
                active.put(run.id(), new ActiveRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.startedAt(), null, RealTimeResources.InQuota,
                        run.allocations(), false, null));
                changed = true;
            }
        }
        return changed;
    }

    /** GPUs the quota's runs hold on idle capacity (runs stopping left out: they are leaving). */
    int borrowedGpus(String quota) {
        return gpus(quota, RealTimeResources.NotInQuota);
    }

    int gpus(String quota, RealTimeResources where) {
        QuotaId id = QuotaId.parse(quota);
        int gpus = 0;
        for (ActiveRun run : active.values()) {
            if (id.equals(run.quota()) && run.realTimeResources() == where && !run.stopping()) {
                gpus += run.allocations().stream().mapToInt(a -> a.resources().gpu()).sum();
            }
        }
        return gpus;
    }
}
