package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.api.wire.RunView;
import java.util.Map;

/** Why each queued run waits, as of the latest scheduling cycle. Derived state: recomputed every cycle. */
public final class QueueStatus {
    private volatile Map<RunId, RunView.QueueView> latest = Map.of();

    /**
     * Takes {@code status} over: the caller never changes it again (not copied: with 100,000 queued a copy was a
     * twentieth of a cycle); published whole, read by any thread.
     */
    void replace(Map<RunId, RunView.QueueView> status) {
        latest = java.util.Collections.unmodifiableMap(status);
    }

    public RunView.QueueView of(RunId id) {
        return latest.get(id);
    }
}
