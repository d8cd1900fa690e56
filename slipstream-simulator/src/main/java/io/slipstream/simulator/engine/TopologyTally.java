package io.slipstream.simulator.engine;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.InstanceRequest;
import io.slipstream.scheduler.Locality;
import io.slipstream.scheduler.PendingRun;
import io.slipstream.simulator.input.PlacementRule;
import io.slipstream.simulator.report.Distribution;
import io.slipstream.simulator.report.TopologyResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * What a replay on a cluster with a topology counts of it: where each gang landed at its first start, whether each
 * Required group was placed in one domain, and how long jobs waited for the topology alone. It also relaxes the
 * Required gangs of a rule with {@code waitAtMost} to Preferred once they have waited that long in the queue.
 *
 * <p>A wait is the topology's when the scheduler says so, which it does only when the gang would fit the free nodes
 * without its placement: {@code WaitingForTopology} for a run its quota's guarantee has room for, and
 * {@code WaitingForIdleCapacity} with the topology's message for a borrower (the core gives borrowers no reason of their
 * own for it). Borrowers are counted apart: what the core tells a borrower depends on which other borrowers it is shown
 * (one whose quota is over its fair share is told {@code WaitingForFairShare}, and not whether the topology was in the
 * way too), and the simulator shows it only those it could admit. A wait lasts until a cycle tells the job anything
 * else, admits it, or does not look at it (a job the simulator does not show the core could not fit the free nodes).
 */
final class TopologyTally {
    /** In the core's message for a Required group no domain has room for (LocalityPlacement.miss). */
    private static final String REQUIRED_MISS = "(placement Required)";

    private final DomainMap domains;
    private final Map<RunId, SimJob> byId;
    /** Whether any job of the policy has a Required group (else no wait is the topology's, and none is looked at). */
    private final boolean anyRequired;
    private final Waits guaranteed = new Waits();
    private final Waits borrowing = new Waits();
    /** Per started gang: the level it was compact at when it first started (-1: none). */
    private final Map<SimJob, Integer> landed = new HashMap<>();
    private int requiredOutsideDomain;
    /** The time of the cycle whose waits are still to be closed ({@code -1}: none). */
    private long lastCycle = -1;

    private final PlacementRule rule;
    private record Due(long time, SimJob job, int attempt) {
    }
    /** Required gangs to relax, by when. */
    private final PriorityQueue<Due> relaxAt = new PriorityQueue<>(Comparator.comparingLong(Due::time).thenComparingInt(d -> d.job().queueRank));
    /** Relaxed gangs: what they asked before (restored when they queue again). */
    private final Map<SimJob, PendingRun> strict = new HashMap<>();
    private final Map<String, List<InstanceRequest>> relaxedShapes = new HashMap<>();
    private final Set<SimJob> startedRelaxed = new HashSet<>();

    /**
     * @param domains the cluster's ({@code null}: it has no topology, and nothing is counted)
     * @param rule    the policy's placement rule ({@code null}: none)
     */
    TopologyTally(DomainMap domains, Map<RunId, SimJob> byId, boolean anyRequired, PlacementRule rule) {
        this.domains = domains;
        this.byId = byId;
        this.anyRequired = anyRequired;
        this.rule = rule;
    }

    /**
     * The job is queued at {@code now} (it arrived, or stopped): as the rule asks. Returns when it is to be relaxed
     * ({@code -1}: never), for a cycle to run then.
     */
    long queued(SimJob job, long now) {
        PendingRun before = strict.remove(job);
        if (before != null) {
            job.pending = before.withReclaimed(job.pending.reclaimed());
        }
        Locality locality = job.pending.instances().get(0).locality();
        if (rule != null && rule.waitAtMost() != null && locality != null && locality.required() && !(rule.fromTrace() && job.trace.placement() != null)) {
            relaxAt.add(new Due(now + rule.waitAtMost().toMillis(), job, job.attempt));
            return now + rule.waitAtMost().toMillis();
        }
        return -1;
    }

    /**
     * A cycle at {@code now} begins: the previous cycle's waits are closed, and the gangs that have waited long enough
     * are relaxed (before the queue is read, so that the core sees them so).
     */
    void beginCycle(long now) {
        if (lastCycle >= 0) {
            guaranteed.cycleEnded(lastCycle);
            borrowing.cycleEnded(lastCycle);
        }
        lastCycle = now;
        while (!relaxAt.isEmpty() && relaxAt.peek().time() <= now) {
            Due due = relaxAt.poll();
            SimJob job = due.job();
            if (job.attempt == due.attempt() && job.state == SimJob.State.QUEUED) {
                PendingRun p = job.pending;
                Locality was = p.instances().get(0).locality();
                List<InstanceRequest> relaxed = relaxedShapes.computeIfAbsent(job.trace.gpus() + "x" + job.trace.instances() + ":" + was.level(),
                        k -> DomainMap.requests(job.trace, new Locality(was.level(), was.levelName(), false)));
                strict.put(job, p);
                job.pending = new PendingRun(p.id(), p.quota(), p.idleMode(), p.priority(), p.createdAt(), relaxed, p.reclaimed());
            }
        }
    }

    /** A decision of the cycle: a job told to wait waits for the topology if the core says that is why. */
    void decided(Decision decision) {
        if (!anyRequired || !(decision instanceof Decision.Wait wait)) {
            return;
        }
        if (wait.reason() == WaitReason.WaitingForTopology) {
            guaranteed.told(byId.get(wait.runId()));
        } else if (wait.reason() == WaitReason.WaitingForIdleCapacity && wait.message() != null && wait.message().contains(REQUIRED_MISS)) {
            borrowing.told(byId.get(wait.runId()));
        }
    }

    /** The job started an attempt on its allocations. */
    void admitted(SimJob job) {
        if (domains == null) {
            return;
        }
        Locality locality = job.pending.instances().get(0).locality();
        if (locality != null && locality.required() && !domains.together(job.allocations, locality.level())) {
            requiredOutsideDomain++;
        }
        if (job.trace.instances() >= 2 && landed.putIfAbsent(job, domains.landedLevel(job.allocations)) == null && strict.containsKey(job)) {
            startedRelaxed.add(job);
        }
    }

    /** The figures, once the replay is over at {@code now} (waits still open end then); {@code null} without a topology. */
    TopologyResult result(List<SimJob> jobs, long now) {
        if (domains == null) {
            return null;
        }
        beginCycle(now); // closes the last cycle's waits
        guaranteed.end(now);
        borrowing.end(now);
        int levels = domains.levels().size();
        int[] byLevel = new int[levels + 1];
        int gangs = 0;
        int constrained = 0;
        int fitting = 0;
        int inSmallest = 0;
        int constrainedFitting = 0;
        int constrainedInSmallest = 0;
        List<Double> gangDelays = new ArrayList<>();
        for (SimJob job : jobs) {
            boolean placed = job.pending.instances().get(0).locality() != null;
            if (job.firstStart >= 0 && placed) {
                constrained++;
            }
            Integer level = landed.get(job);
            if (level == null) {
                continue; // not a gang, or never started
            }
            gangs++;
            byLevel[level < 0 ? levels : level]++;
            int smallest = domains.smallestLevel(job.trace);
            if (smallest >= 0) {
                fitting++;
                inSmallest += level >= smallest ? 1 : 0;
                if (placed) {
                    constrainedFitting++;
                    constrainedInSmallest += level >= smallest ? 1 : 0;
                }
            }
            if (job.state == SimJob.State.DONE) {
                gangDelays.add(job.queuedTotal / 1000.0);
            }
        }
        List<Integer> landedCounts = new ArrayList<>();
        for (int count : byLevel) {
            landedCounts.add(count);
        }
        return new TopologyResult(domains.levels(), gangs, constrained, landedCounts, fitting, inSmallest, constrainedFitting, constrainedInSmallest,
                Distribution.of(gangDelays), guaranteed.seconds(jobs), borrowing.seconds(jobs), requiredOutsideDomain, startedRelaxed.size());
    }

    /** Waits of one kind: those open, and each job's total. */
    private static final class Waits {
        /** Open waits: since when ({@code -1}: from the end of this cycle). */
        private final Map<SimJob, Long> since = new LinkedHashMap<>();
        private final Set<SimJob> toldThisCycle = new HashSet<>();
        /** Per job that waited so: ms in all. */
        private final Map<SimJob, Long> waited = new HashMap<>();

        void told(SimJob job) {
            toldThisCycle.add(job);
            since.putIfAbsent(job, -1L);
        }

        void cycleEnded(long now) {
            for (Iterator<Map.Entry<SimJob, Long>> open = since.entrySet().iterator(); open.hasNext(); ) {
                Map.Entry<SimJob, Long> wait = open.next();
                if (wait.getValue() < 0) {
                    wait.setValue(now);
                    waited.putIfAbsent(wait.getKey(), 0L);
                } else if (!toldThisCycle.contains(wait.getKey())) {
                    waited.merge(wait.getKey(), now - wait.getValue(), Long::sum);
                    open.remove();
                }
            }
            toldThisCycle.clear();
        }

        void end(long now) {
            cycleEnded(now);
            since.forEach((job, from) -> waited.merge(job, now - from, Long::sum));
            since.clear();
        }

        /** Each job's total, in the jobs' order. */
        Distribution seconds(List<SimJob> jobs) {
            List<Double> seconds = new ArrayList<>();
            for (SimJob job : jobs) {
                Long ms = waited.get(job);
                if (ms != null) {
                    seconds.add(ms / 1000.0);
                }
            }
            return Distribution.of(seconds);
        }
    }
}
