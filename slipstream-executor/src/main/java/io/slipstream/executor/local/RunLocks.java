package io.slipstream.executor.local;

import io.slipstream.api.run.RunId;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per run: a run's launches take turns (so that an instance starts once), and so do a launch (or a probe
 * starting) and the sweep of the run's uid when its last instance ended. One per run, so that nothing a run does can
 * make another run's launch wait.
 */
final class RunLocks {
    /**
     * A launch waits this long for a sweep of the run's uid that is under way (milliseconds, normally); one that takes
     * longer (processes stuck in the kernel) fails the launch, rather than hold up the control loop.
     */
    static final java.time.Duration LAUNCH_WAIT = java.time.Duration.ofSeconds(2);

    private final Map<RunId, ReentrantLock> locks = new ConcurrentHashMap<>();

    ReentrantLock of(RunId run) {
        return locks.computeIfAbsent(run, r -> new ReentrantLock());
    }

    /** Takes the lock of {@code id}'s run for a launch, waiting at most {@link #LAUNCH_WAIT}; fails the launch after that. */
    ReentrantLock forLaunch(io.slipstream.api.run.InstanceId id) {
        ReentrantLock lock = of(id.runId());
        try {
            if (!lock.tryLock(LAUNCH_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                throw new io.slipstream.executor.ExecutorException("instance " + id + " cannot start: processes of the run's last attempt are still being killed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new io.slipstream.executor.ExecutorException("interrupted while launching " + id, e);
        }
        return lock;
    }

    /** The run is forgotten, and its lock with it. */
    void forget(RunId run) {
        locks.remove(run);
    }
}
