package io.slipstream.api.wire;

import io.slipstream.api.run.InstanceState;
import java.time.Instant;
import java.util.List;

/** One instance of a run as the API shows it. {@code rank} is global across node groups. */
public record InstanceView(
        String nodeGroup,
        int rank,
        int groupRank,
        int attempt,
        String node,
        List<Integer> gpus,
        InstanceState state,
        Integer exitCode,
        String reason,
        Instant startedAt,
        Instant finishedAt) {
}
