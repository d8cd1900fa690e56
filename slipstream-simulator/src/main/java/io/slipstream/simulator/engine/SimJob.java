package io.slipstream.simulator.engine;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.scheduler.ActiveRun;
import io.slipstream.scheduler.Allocation;
import io.slipstream.scheduler.ElasticRun;
import io.slipstream.scheduler.PendingRun;
import io.slipstream.simulator.input.TraceJob;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** One trace job as the simulation moves it: queued, running, stopping, requeued, done. Times in virtual ms. */
final class SimJob {
    enum State {
        WAITING_TO_ARRIVE,
        QUEUED,
        RUNNING,
        STOPPING,
        DONE
    }

    final TraceJob trace;
    final int tenant;
    PendingRun pending;
    final IdleMode idleMode;

    State state = State.WAITING_TO_ARRIVE;
    int attempt;
    long queuedSince;
    long queuedTotal;
    long firstStart = -1;
    long finishedAt = -1;

    /** Progress (ms of work) that survives a stop: the newest saved checkpoint. */
    long durable;
    long attemptStart;
    boolean inQuota;
    /** Its live instances (an elastic job's, without those a shrink is removing). */
    List<Allocation> allocations = List.of();

    // Elastic jobs (docs/elastic.md): a minimum, instances on idle capacity while guaranteed, instances being removed.
    /** Its minimum in instances ({@code 0}: rigid). */
    final int minInstances;
    /** Live instances on idle capacity while it is guaranteed (ranks). */
    Set<Integer> borrowedRanks = Set.of();
    /** Instances a shrink is removing, each with the run it is for and when it is gone. */
    List<Releasing> releasing = List.of();
    /** How the core sees its instances ({@code null}: rigid); a new object at each change, so a view of it is cached by identity. */
    ElasticRun elasticView;

    /** {@code inQuota}: it stood on the guarantee (an extra on it that gave way to a run of the same quota). */
    record Releasing(Allocation allocation, RunId forRun, long goneAt, boolean inQuota) {
    }

    // The attempt's progress since its start or its last change of size (see Progress).
    /** When the segment began, how long before it makes progress, its progress then, and the instances making progress. */
    long segmentStart;
    long segmentOverhead;
    long segmentProgress;
    int instancesRunning;
    /** Changes of size in this attempt: a FINISH event of an earlier segment is stale. */
    int segment;

    // What Holdings and the Recorder counted it as, so that it is taken out exactly as it was put in.
    long countedGuaranteed;
    long countedBorrowed;
    long countedExtras;
    long countedQuotaExtras;
    int countedPromotable;
    boolean countedBorrower;
    long recordedGuaranteed;
    long recordedBorrowed;
    /** Its place in the core's queue order among all jobs (the order never changes: priority, submission, id). */
    int queueRank;
    /** The last cycle that showed it to the core, and the last that left it out of the guarantee cut (see {@code ShownQueue}). */
    long shownInCycle = -1;
    long cutInCycle = -1;
    /** What the core was last shown of it while active (reused while unchanged). */
    ActiveRun active;

    // While stopping:
    long stopAt;
    long progressAtStop;
    long durableAtStop;
    RunId reclaimFor;
    /** When the scheduler last moved it (virtual ms; -1: never). */
    long movedAt = -1;

    /**
     * When the run, fitting its quota's guarantee, began waiting for capacity (-1: not now), and when the change came
     * after which borrowers were first preempted for it (-1: none were).
     */
    long entitledAt = -1;
    /**
     * Its guarantee wait before the current one: a run that no longer fits its guarantee (its quota's own runs took the
     * room) is not waiting for it, and its clock stops until it fits again.
     */
    long entitledBefore;
    /**
     * Whether the runs stopping for it were taken for it as a borrower (preemption for fairness, or extras giving way to
     * a queued minimum): its wait for them is no guarantee wait.
     */
    boolean reclaimAsBorrower;
    /** When a cycle last told it why it waits, while its guarantee wait runs (a cycle that tells it nothing ends that wait). */
    long toldAt = -1;
    long reclaimFrom = -1;
    /** While reclaiming: cycles that chose victims for it, victims chosen, and when the last were chosen. */
    int reclaimRounds;
    int reclaimVictims;
    long firstVictimsAt = -1;
    long lastVictimsAt = -1;

    SimJob(TraceJob trace, int tenant, PendingRun pending) {
        this.trace = trace;
        this.tenant = tenant;
        this.pending = pending;
        this.idleMode = pending.idleMode();
        this.minInstances = pending.elastic() ? pending.minimum().size() : 0;
    }

    boolean elastic() {
        return minInstances > 0;
    }

    /** What the core needs free to admit it: all its GPUs, or an elastic job's minimum. */
    int queueGpus() {
        return elastic() ? minInstances * trace.gpus() : gpus();
    }

    /** GPUs its live instances hold. */
    long liveGpus() {
        if (!elastic()) {
            return allocations.isEmpty() ? 0 : gpus();
        }
        long sum = 0;
        for (Allocation allocation : allocations) {
            sum += allocation.resources().gpu();
        }
        return sum;
    }

    /** GPUs its live instances hold on idle capacity while it is guaranteed. */
    long borrowedLiveGpus() {
        long sum = 0;
        for (Allocation allocation : allocations) {
            if (borrowedRanks.contains(allocation.rank())) {
                sum += allocation.resources().gpu();
            }
        }
        return sum;
    }

    /** GPUs of its live instances on idle capacity beyond its minimum: what a shrink could take. */
    long shrinkableGpus() {
        if (!elastic() || state != State.RUNNING) {
            return 0;
        }
        int spare = allocations.size() - minInstances;
        int onIdle = inQuota ? borrowedRanks.size() : allocations.size();
        return (long) Math.max(0, Math.min(spare, onIdle)) * trace.gpus();
    }

    /** GPUs of its live instances on its guarantee beyond its minimum (once those on idle capacity are gone): what its quota's runs may take. */
    long inQuotaExtraGpus() {
        if (!elastic() || state != State.RUNNING || !inQuota) {
            return 0;
        }
        int spare = allocations.size() - minInstances - borrowedRanks.size();
        return (long) Math.max(0, spare) * trace.gpus();
    }

    /** GPUs the instances a shrink is removing still hold: those that stood on the guarantee, or the others. */
    long releasingGpus(boolean inQuota) {
        long sum = 0;
        for (Releasing r : releasing) {
            if (r.inQuota() == inQuota) {
                sum += r.allocation().resources().gpu();
            }
        }
        return sum;
    }

    /** Every allocation it holds, live and being removed. */
    List<Allocation> held() {
        if (releasing.isEmpty()) {
            return allocations;
        }
        List<Allocation> all = new ArrayList<>(allocations);
        releasing.forEach(r -> all.add(r.allocation()));
        return all;
    }

    /** Whether it may grow: elastic, running, slots vacant, and no shrink of it in flight. */
    boolean mayGrow() {
        return elastic() && state == State.RUNNING && releasing.isEmpty() && allocations.size() < trace.instances();
    }

    /** The instances the core placed, as allocations of this job's instance requests. */
    List<Allocation> allocationsAt(List<io.slipstream.scheduler.Placement> placements) {
        List<Allocation> allocations = new ArrayList<>(placements.size());
        for (io.slipstream.scheduler.Placement placement : placements) {
            allocations.add(new Allocation(placement.rank(), placement.node(), pending.instances().get(placement.rank()).resources(), placement.gpus()));
        }
        return allocations;
    }

    /** It started: no guarantee wait or reclaim is under way for it any more. */
    void clearWaits() {
        entitledAt = -1;
        entitledBefore = 0;
        reclaimAsBorrower = false;
        reclaimFrom = -1;
        reclaimRounds = 0;
        reclaimVictims = 0;
        firstVictimsAt = -1;
        lastVictimsAt = -1;
    }

    /** A new view for the core, after its instances changed. */
    void viewChanged() {
        if (elastic()) {
            List<ElasticRun.Release> releases = new ArrayList<>(releasing.size());
            releasing.forEach(r -> releases.add(new ElasticRun.Release(r.allocation(), r.forRun(),
                    r.inQuota() ? RealTimeResources.InQuota : RealTimeResources.NotInQuota)));
            elasticView = new ElasticRun(pending.instances(), pending.minReplicas(), inQuota ? borrowedRanks : Set.of(), releases);
        }
    }

    RunId id() {
        return pending.id();
    }

    long work() {
        return trace.durationMillis();
    }

    int gpus() {
        return trace.totalGpus();
    }
}
