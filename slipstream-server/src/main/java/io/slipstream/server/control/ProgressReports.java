package io.slipstream.server.control;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.Activity;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Progress that instances report through the API with their run's token (where no executor can read a progress file:
 * Kubernetes). Kept in memory like the executor's view of the file: a restarted server learns it again at the next
 * report. The newest report of an instance counts.
 */
public final class ProgressReports {
    private final Map<InstanceId, Activity.Progress> latest = new ConcurrentHashMap<>();

    public void record(InstanceId id, Activity.Progress progress) {
        latest.merge(id, progress, (before, now) -> now.at().isBefore(before.at()) ? before : now);
    }

    Activity.Progress latest(InstanceId id) {
        return latest.get(id);
    }

    /** Forgets the reports of runs that are no longer active. */
    void retainOnly(Set<RunId> active) {
        latest.keySet().removeIf(id -> !active.contains(id.runId()));
    }
}
