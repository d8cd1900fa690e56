package io.slipstream.simulator.engine;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.scheduler.ActiveRun;
import io.slipstream.scheduler.Allocation;
import io.slipstream.scheduler.PendingRun;
import io.slipstream.simulator.input.TraceJob;
import java.util.List;

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
    List<Allocation> allocations = List.of();
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
     * When the run, fitting its quota's guarantee, first waited for capacity (-1: not now), and when the change came
     * after which borrowers were first preempted for it (-1: none were).
     */
    long entitledAt = -1;
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
