package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.run.WaitReason;
import io.slipstream.api.wire.RunView;
import io.slipstream.model.RunRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which runs the scheduler sees this cycle: a queued run inside its restart backoff ({@code faults.retryAt} not
 * reached) is left out and told why. Pure: the cycle's input is prepared here, the scheduler never sees the clock.
 *
 * @param ready   the runs the scheduler is shown, in the order given
 * @param backingOff why each run left out waits
 */
record BackoffGate(List<RunRecord> ready, Map<RunId, RunView.QueueView> backingOff) {
    BackoffGate {
        ready = List.copyOf(ready);
        backingOff = Map.copyOf(backingOff);
    }

    static BackoffGate of(List<RunRecord> runs, Instant now) {
        List<RunRecord> ready = new ArrayList<>();
        Map<RunId, RunView.QueueView> waiting = new LinkedHashMap<>();
        for (RunRecord run : runs) {
            Instant retryAt = run.faults().retryAt();
            if (run.state() == RunState.QUEUED && retryAt != null && now.isBefore(retryAt)) {
                waiting.put(run.id(), new RunView.QueueView(WaitReason.BackingOff.name(), "restarts after " + retryAt + " (backoff)", 0));
            } else {
                ready.add(run);
            }
        }
        return new BackoffGate(ready, waiting);
    }
}
