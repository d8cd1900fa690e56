package io.slipstream.simulator.engine;

import io.slipstream.simulator.input.Policy;

/**
 * How an attempt progresses, in segments: one begins at the attempt's start and, for an elastic job, at each change of
 * size (a world change). From a segment's start the job restores (the restart overhead, or the world change's pause),
 * then makes progress at the rate of its running instances over all it asks for (1 ms of progress per ms when all run,
 * half as fast at half the instances: throughput proportional to instances) until its work is done. Periodic
 * checkpoints are taken every {@code interval} of running time in the segment and count once their save completes
 * ({@code save} later; training goes on meanwhile, as with asynchronous checkpointing). A world change saves the job's
 * progress (the survivors restart from it). A rigid job has one segment per attempt, at full rate: as before segments.
 */
final class Progress {
    private final long overhead;
    private final long interval;
    private final long save;

    Progress(Policy policy) {
        this.overhead = policy.restartOverhead().toMillis();
        this.interval = policy.checkpointInterval().toMillis();
        this.save = policy.checkpointSave().toMillis();
    }

    /** An attempt starts at {@code t} with {@code instances} running, from its saved progress. */
    void start(SimJob job, long t, int instances) {
        job.segmentStart = t;
        job.segmentOverhead = overhead;
        job.segmentProgress = job.durable;
        job.instancesRunning = instances;
        job.segment++;
    }

    /** Its size changes at {@code t} to {@code instances} running: its progress is saved, and it pauses {@code pause}. */
    void resize(SimJob job, long t, int instances, long pause) {
        long progress = at(job, t);
        job.durable = progress;
        job.segmentStart = t;
        job.segmentOverhead = pause;
        job.segmentProgress = progress;
        job.instancesRunning = instances;
        job.segment++;
    }

    /** Progress of the job's current attempt at {@code t}. */
    long at(SimJob job, long t) {
        long running = Math.max(0, t - job.segmentStart - job.segmentOverhead);
        return Math.min(job.work(), job.segmentProgress + running * job.instancesRunning / job.trace.instances());
    }

    /** Running time (after the overhead) the segment needs to finish the work. */
    private static long runTime(SimJob job) {
        long left = (job.work() - job.segmentProgress) * job.trace.instances();
        return Math.max(0, (left + job.instancesRunning - 1) / job.instancesRunning);
    }

    /** When the attempt finishes if nothing stops or resizes it. */
    long finishTime(SimJob job) {
        return job.segmentStart + job.segmentOverhead + runTime(job);
    }

    /** How many periodic checkpoints of the current segment are saved by {@code t}. */
    private long saved(SimJob job, long t) {
        if (interval <= 0) {
            return 0;
        }
        long since = t - job.segmentStart - job.segmentOverhead - save;
        if (since < 0) {
            return 0;
        }
        long count = since / interval;
        long possible = (runTime(job) - 1) / interval; // none at or after the end: the job is done then
        return Math.max(0, Math.min(count, possible));
    }

    /** The progress that survives a stop at {@code t}: the newest checkpoint saved by then. */
    long durableAt(SimJob job, long t) {
        return job.segmentProgress + saved(job, t) * interval * job.instancesRunning / job.trace.instances();
    }

    /** When the attempt's next checkpoint after {@code t} will be saved, or -1 if it takes no more. */
    long nextCheckpointTime(SimJob job, long t) {
        if (interval <= 0) {
            return -1;
        }
        long next = saved(job, t) + 1;
        long possible = (runTime(job) - 1) / interval;
        return next > possible ? -1 : job.segmentStart + job.segmentOverhead + next * interval + save;
    }

    /** When the newest checkpoint saved by {@code t} was saved (a change of size saves one), or -1 if the attempt has none yet. */
    long lastCheckpointTime(SimJob job, long t) {
        long count = saved(job, t);
        if (count == 0) {
            return job.segmentStart > job.attemptStart ? job.segmentStart : -1;
        }
        return job.segmentStart + job.segmentOverhead + count * interval + save;
    }
}
