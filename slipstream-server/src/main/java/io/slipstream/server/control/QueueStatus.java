package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.api.wire.RunView;
import java.util.Map;

/** Why each queued run waits, as of the latest scheduling cycle. Derived state: recomputed every cycle. */
public final class QueueStatus {
    private volatile Map<RunId, RunView.QueueView> latest = Map.of();

    void replace(Map<RunId, RunView.QueueView> status) {
        latest = Map.copyOf(status);
    }

    public RunView.QueueView of(RunId id) {
        return latest.get(id);
    }
}
