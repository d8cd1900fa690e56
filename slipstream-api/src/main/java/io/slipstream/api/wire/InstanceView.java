package io.slipstream.api.wire;

import io.slipstream.api.run.EndCause;
import io.slipstream.api.run.InstanceState;
import java.time.Instant;
import java.util.List;

/**
 * One instance of a run as the API shows it. {@code rank} is global across node groups; {@code ip} and {@code ports}
 * are where the run's other instances reach it; {@code readyAt} is when its startup probe passed; {@code restarts} how
 * often this rank was restarted in place within its attempt ({@code faultTolerance.runType: Async}); {@code endCause} why
 * it ended where the executor knows more than the exit code ({@code OOMKilled}), else {@code null}. Once it ended, where
 * its executor measured them: {@code memoryPeak}, the most memory it used at once (a quantity, {@code "1536Mi"}), and
 * {@code cpuSeconds}, the CPU time it used; {@code null} where not measured.
 */
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
        EndCause endCause,
        String memoryPeak,
        Double cpuSeconds,
        Instant startedAt,
        Instant readyAt,
        Instant finishedAt,
        String ip,
        List<Integer> ports,
        int restarts) {
}
