package io.slipstream.simulator.engine;

import io.slipstream.scheduler.InstanceRequest;
import io.slipstream.scheduler.Locality;
import io.slipstream.scheduler.PendingRun;
import io.slipstream.simulator.input.PlacementRule;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.LongConsumer;

/**
 * The Required gangs of a rule with {@code waitAtMost}: each is shown to the core as Preferred once it has waited that
 * long for the topology alone, counted from the first cycle that starts with room for it but for its placement (free
 * nodes that hold its instances, and its quota's free guarantee or what it may borrow). That clock is the simulator's
 * own reading of the free nodes, not the core's wait reason: what the core tells a borrower depends on the other
 * borrowers it is shown, and the replay must not. Each time the gang queues again it is Required again.
 */
final class Relaxation {
    private final PlacementRule rule;
    private final Holdings holdings;
    /** Runs a cycle at a time (a relax is shown to the core at once, not at the next change). */
    private final LongConsumer cycleAt;
    private record Due(long time, SimJob job, int attempt) {
    }
    /** Relaxable gangs whose clock has not started, in queue order. */
    private final Set<SimJob> waiting = new LinkedHashSet<>();
    private final PriorityQueue<Due> due = new PriorityQueue<>(Comparator.comparingLong(Due::time).thenComparingInt(d -> d.job().queueRank));
    /** Relaxed gangs: what they asked before (restored when they queue again). */
    private final Map<SimJob, PendingRun> strict = new HashMap<>();
    private final Map<String, List<InstanceRequest>> relaxedShapes = new HashMap<>();

    /** @param rule the policy's ({@code null}, or without {@code waitAtMost}: nothing is ever relaxed) */
    Relaxation(PlacementRule rule, Holdings holdings, LongConsumer cycleAt) {
        this.rule = rule != null && rule.waitAtMost() != null ? rule : null;
        this.holdings = holdings;
        this.cycleAt = cycleAt;
    }

    /** The job is queued (it arrived, or stopped): as the rule asks, Required again if it was relaxed. */
    void queued(SimJob job) {
        if (rule == null) {
            return;
        }
        PendingRun before = strict.remove(job);
        if (before != null) {
            job.pending = before.withReclaimed(job.pending.reclaimed());
        }
        Locality locality = job.pending.instances().get(0).locality();
        if (locality != null && locality.required() && !(rule.fromTrace() && job.trace.placement() != null)) {
            waiting.add(job);
        }
    }

    /** Whether the job is shown to the core relaxed now. */
    boolean relaxed(SimJob job) {
        return strict.containsKey(job);
    }

    /** A cycle at {@code now} begins (the queue is not read yet): clocks start, and gangs whose time is up are relaxed. */
    void beginCycle(long now) {
        if (rule == null) {
            return;
        }
        Holdings.CycleStart start = waiting.isEmpty() ? null : holdings.cycleStart();
        for (Iterator<SimJob> it = waiting.iterator(); it.hasNext(); ) {
            SimJob job = it.next();
            if (job.state != SimJob.State.QUEUED) {
                it.remove(); // started on its placement
            } else if (roomButForItsPlacement(job, start)) {
                it.remove();
                long at = now + rule.waitAtMost().toMillis();
                due.add(new Due(at, job, job.attempt));
                cycleAt.accept(at);
            }
        }
        while (!due.isEmpty() && due.peek().time() <= now) {
            Due next = due.poll();
            SimJob job = next.job();
            if (job.attempt == next.attempt() && job.state == SimJob.State.QUEUED) {
                PendingRun p = job.pending;
                Locality was = p.instances().get(0).locality();
                List<InstanceRequest> relaxed = relaxedShapes.computeIfAbsent(job.trace.gpus() + "x" + job.trace.instances() + ":" + was.level(),
                        k -> DomainMap.requests(job.trace, new Locality(was.level(), was.levelName(), false)));
                strict.put(job, p);
                job.pending = new PendingRun(p.id(), p.quota(), p.idleMode(), p.priority(), p.createdAt(), relaxed, p.reclaimed());
            }
        }
    }

    /** The free nodes hold its instances, and its quota's free guarantee or what it may borrow holds it. */
    private boolean roomButForItsPlacement(SimJob job, Holdings.CycleStart start) {
        boolean quota = (job.idleMode.mayUseGuarantee() && job.queueGpus() <= start.freeGuarantee()[job.tenant])
                || (job.idleMode.mayBorrow() && job.queueGpus() <= start.borrowable()[job.tenant]);
        return quota && holdings.instancesFree(job.trace.gpus()) >= job.trace.instances();
    }
}
