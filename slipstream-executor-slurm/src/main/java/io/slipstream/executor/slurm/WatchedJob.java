package io.slipstream.executor.slurm;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.local.files.InstanceDirectory;
import java.time.Instant;
import java.util.Map;

/** One launch of an instance, followed until its job ended: what was reported of it, and how far a stop has gone. */
final class WatchedJob {
    final InstanceId id;
    final Map<String, String> handle;
    /** Its Slurm job's id (digits: {@link SlurmHandles#isJobId}). */
    final String job;
    /** The name its job must bear ({@link JobName}): a job of another name is not its own, whatever the id. */
    final String name;
    final InstanceDirectory dir;
    /** When it began to be watched ({@link System#nanoTime}): a queue read before then says nothing of it. */
    final long since = System.nanoTime();

    // Read and written by the watch's thread and by callers' (adoption, stops): volatile, and a stop's under this object's lock.
    /** Adopted: it is reported running once its job is seen alive. */
    volatile boolean reportRunning;
    volatile boolean readyReported;
    volatile boolean probeFailedReported;
    /** Since when its job has been seen waiting to start, or {@code null}. */
    volatile Instant waitingSince;
    /** Why it is lost once its job is gone (Slurm kept it waiting too long), or {@code null}. */
    volatile String lostReason;
    /** When a stop kills it, or {@code null} while none was asked. */
    volatile Instant killAt;
    /** Whether the polite signal went out, and whether the kill did. */
    volatile boolean signalled;
    volatile boolean killed;

    WatchedJob(InstanceId id, Map<String, String> handle, InstanceDirectory dir, String name) {
        this.id = id;
        this.handle = Map.copyOf(handle);
        this.job = handle.get(SlurmHandles.JOB);
        if (!SlurmHandles.isJobId(job)) {
            throw new IllegalArgumentException("instance " + id + ": its handle names no Slurm job id");
        }
        this.name = name;
        this.dir = dir;
    }
}
