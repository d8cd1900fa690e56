package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import org.junit.jupiter.api.Test;

/** What {@code slipstream logs RUN} says of the attempts it did not print. */
class LogsCommandTest {
    private static RunView run(int attempt, String instances) {
        return ApiClient.read(Json.mapper().readTree("""
                {"id": "train-1", "job": "train", "workspace": "w", "jobVersion": 1, "state": "RUNNING", "reason": "Started",
                 "attempt": %d, "priority": 0, "createdAt": "2026-12-01T10:00:00Z", "instances": [%s]}
                """.formatted(attempt, instances)), RunView.class);
    }

    @Test
    void aFirstAttemptHasNothingToSay() {
        assertThat(LogsCommand.earlierAttempts(run(1, ""))).isEmpty();
    }

    @Test
    void eachEarlierAttemptIsNamedWithHowItEnded() {
        RunView run = run(3, """
                {"nodeGroup": "main", "rank": 0, "groupRank": 0, "attempt": 1, "gpus": [], "state": "SUCCEEDED", "reason": "Completed"},
                {"nodeGroup": "main", "rank": 1, "groupRank": 1, "attempt": 1, "gpus": [], "state": "FAILED", "exitCode": 3,
                 "reason": "Exited with code 3"},
                {"nodeGroup": "main", "rank": 0, "groupRank": 0, "attempt": 2, "gpus": [], "state": "RESOURCE_PREEMPTED",
                 "reason": "Reclaimed: the quota that guarantees the capacity it borrowed needs it back"},
                {"nodeGroup": "main", "rank": 0, "groupRank": 0, "attempt": 3, "gpus": [], "state": "RUNNING", "reason": "Launched"}
                """);
        assertThat(LogsCommand.earlierAttempts(run)).containsExactly(
                "(the output above is attempt 3's; see an earlier one with --attempt N, or all of them with -f:)",
                "  attempt 1: main-1 FAILED: Exited with code 3",
                "  attempt 2: main-0 RESOURCE_PREEMPTED: Reclaimed: the quota that guarantees the capacity it borrowed needs it back");
    }
}
