package io.slipstream.server.api;

import io.slipstream.api.wire.RunView;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** Which watched runs changed between two polls of a watch stream. Pure: {@link RunWatch} polls and writes. */
final class WatchChanges {
    private WatchChanges() {
    }

    /**
     * What a watcher sees of a run, as a key that changes whenever that does: the run's stored version, its current
     * instances' versions (their states are written apart from the run) and its place in the queue (held in memory).
     */
    static String fingerprint(RunRecord run, List<InstanceRecord> currentInstances, RunView.QueueView queue) {
        StringBuilder key = new StringBuilder().append(run.version());
        for (InstanceRecord instance : currentInstances) {
            key.append(',').append(instance.id()).append('@').append(instance.version());
        }
        if (queue != null) {
            key.append('|').append(queue.position()).append(' ').append(queue.reason()).append(' ').append(queue.message());
        }
        return key.toString();
    }

    /**
     * The ids of {@code before} that {@code now} lacks: runs that left the watched set (another state than the filter's,
     * pushed off the page by newer runs, deleted after their retention).
     */
    static List<String> gone(Map<String, String> before, Map<String, String> now) {
        List<String> gone = new ArrayList<>();
        before.keySet().forEach(id -> {
            if (!now.containsKey(id)) {
                gone.add(id);
            }
        });
        return gone;
    }

    /** The ids of {@code now} (in its order) that are new or whose fingerprint differs from {@code before}'s. */
    static List<String> changed(Map<String, String> before, Map<String, String> now) {
        List<String> changed = new ArrayList<>();
        now.forEach((id, key) -> {
            if (!Objects.equals(before.get(id), key)) {
                changed.add(id);
            }
        });
        return changed;
    }
}
