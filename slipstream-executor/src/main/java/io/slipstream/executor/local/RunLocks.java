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
    private final Map<RunId, ReentrantLock> locks = new ConcurrentHashMap<>();

    ReentrantLock of(RunId run) {
        return locks.computeIfAbsent(run, r -> new ReentrantLock());
    }

    /** The run is forgotten, and its lock with it. */
    void forget(RunId run) {
        locks.remove(run);
    }
}
