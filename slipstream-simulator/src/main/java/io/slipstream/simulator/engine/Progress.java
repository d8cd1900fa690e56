package io.slipstream.simulator.engine;

import io.slipstream.simulator.input.Policy;

/**
 * How an attempt progresses: from its start it restores (restart overhead), then makes one ms of progress per ms
 * until its work is done. Periodic checkpoints are taken every {@code interval} of progress and count once their
 * save completes ({@code save} later; training goes on meanwhile, as with asynchronous checkpointing).
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

    /** Progress of the job's current attempt at {@code t}. */
    long at(SimJob job, long t) {
        return Math.min(job.work(), job.durable + Math.max(0, t - job.attemptStart - overhead));
    }

    /** When the attempt finishes if nothing stops it. */
    long finishTime(SimJob job) {
        return job.attemptStart + overhead + (job.work() - job.durable);
    }

    /** How many periodic checkpoints of the current attempt are saved by {@code t}. */
    private long saved(SimJob job, long t) {
        if (interval <= 0) {
            return 0;
        }
        long since = t - job.attemptStart - overhead - save;
        if (since < 0) {
            return 0;
        }
        long count = since / interval;
        long possible = (job.work() - job.durable - 1) / interval; // none at or after the end: the job is done then
        return Math.max(0, Math.min(count, possible));
    }

    /** The progress that survives a stop at {@code t}: the newest checkpoint saved by then. */
    long durableAt(SimJob job, long t) {
        return job.durable + saved(job, t) * interval;
    }

    /** When the attempt's next checkpoint after {@code t} will be saved, or -1 if it takes no more. */
    long nextCheckpointTime(SimJob job, long t) {
        if (interval <= 0) {
            return -1;
        }
        long next = saved(job, t) + 1;
        long possible = (job.work() - job.durable - 1) / interval;
        return next > possible ? -1 : job.attemptStart + overhead + next * interval + save;
    }

    /** When the newest checkpoint saved by {@code t} was saved, or -1 if the attempt has none yet. */
    long lastCheckpointTime(SimJob job, long t) {
        long count = saved(job, t);
        return count == 0 ? -1 : job.attemptStart + overhead + count * interval + save;
    }
}
