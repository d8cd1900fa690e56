package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.RunId;
import java.util.List;

/** What the scheduler decided for one pending run. */
public sealed interface Decision permits Decision.Admit, Decision.Wait {
    RunId runId();

    /** Start the run: every instance has a placement. */
    record Admit(RunId runId, List<Placement> placements) implements Decision {
        public Admit {
            requireNonNull(runId, "runId is null");
            placements = List.copyOf(placements);
        }
    }

    /**
     * Keep the run queued. {@code reason} is a stable word ({@code NoNodeFits}, {@code WaitingForResources});
     * {@code message} says it for people; {@code position} is 1 for the next run to be considered.
     */
    record Wait(RunId runId, String reason, String message, int position) implements Decision {
        public Wait {
            requireNonNull(runId, "runId is null");
            requireNonNull(reason, "reason is null");
            requireNonNull(message, "message is null");
        }
    }
}
