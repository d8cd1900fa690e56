package io.slipstream.simulator.engine;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.Locality;
import io.slipstream.simulator.report.Distribution;
import io.slipstream.simulator.report.TopologyResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a replay on a cluster with a topology counts of it: where each gang landed at its first start, whether each
 * Required group was placed in one domain, and how long jobs waited for the topology alone.
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

    /** Relaxes Required gangs after a wait, if the rule says so; and the gangs that first started relaxed. */
    private final Relaxation relaxation;
    private final Set<SimJob> startedRelaxed = new HashSet<>();

    /** @param domains the cluster's ({@code null}: it has no topology, and nothing is counted) */
    TopologyTally(DomainMap domains, Map<RunId, SimJob> byId, boolean anyRequired, Relaxation relaxation) {
        this.domains = domains;
        this.byId = byId;
        this.anyRequired = anyRequired;
        this.relaxation = relaxation;
    }

    /** The job is queued (it arrived, or stopped). */
    void queued(SimJob job) {
        relaxation.queued(job);
    }

    /**
     * A cycle at {@code now} begins: the previous cycle's waits are closed, and gangs are relaxed (before the queue is
     * read, so that the core sees them so).
     */
    void beginCycle(long now) {
        if (lastCycle >= 0) {
            guaranteed.cycleEnded(lastCycle);
            borrowing.cycleEnded(lastCycle);
        }
        lastCycle = now;
        relaxation.beginCycle(now);
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
        if (job.trace.instances() >= 2 && landed.putIfAbsent(job, domains.landedLevel(job.allocations)) == null && relaxation.relaxed(job)) {
            startedRelaxed.add(job);
        }
    }

    /** The figures, once the replay is over at {@code now} (waits still open end then); {@code null} without a topology. */
    TopologyResult result(List<SimJob> jobs, long now) {
        if (domains == null) {
            return null;
        }
        if (lastCycle >= 0) {
            guaranteed.cycleEnded(lastCycle);
            borrowing.cycleEnded(lastCycle);
        }
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
