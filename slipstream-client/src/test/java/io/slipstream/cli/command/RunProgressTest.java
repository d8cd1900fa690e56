package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@code submit --wait}, {@code run --wait} and {@code cancel --wait} print while a run goes on. */
class RunProgressTest {
    /** A run in {@code state} whose two instances are in the given states, having reported {@code step} (or null). */
    private static RunView run(String state, String reason, String first, String second, Long step) {
        String instances = first == null ? "" : """
                {"nodeGroup": "main", "rank": 0, "groupRank": 0, "attempt": 1, "node": "node-1", "gpus": [], "state": "%s"},
                {"nodeGroup": "main", "rank": 1, "groupRank": 1, "attempt": 1, "node": "node-1", "gpus": [], "state": "%s"}
                """.formatted(first, second);
        String progress = step == null ? "null" : "{\"step\": " + step + ", \"workLostSeconds\": 0}";
        return ApiClient.read(Json.mapper().readTree("""
                {"id": "train-1", "job": "train", "workspace": "w", "jobVersion": 1, "state": "%s", "reason": "%s", "attempt": 1,
                 "priority": 0, "createdAt": "2026-12-01T10:00:00Z", "progress": %s, "instances": [%s]}
                """.formatted(state, reason, progress, instances)), RunView.class);
    }

    // The final state is the caller's to print (once: on stdout for cancel, with the exit code for run and submit).
    @Test
    void eachChangeIsPrintedOnceWithTheInstancesAndTheReportedProgress() {
        Iterator<RunView> polls = List.of(
                run("QUEUED", "Submitted", null, null, null),
                run("STARTING", "Admitted", "PENDING", "PENDING", null),
                run("STARTING", "Admitted", "RUNNING", "PENDING", null),
                run("STARTING", "Admitted", "RUNNING", "PENDING", null),
                run("RUNNING", "AllInstancesRunning", "RUNNING", "RUNNING", null),
                run("RUNNING", "AllInstancesRunning", "RUNNING", "RUNNING", 100L),
                run("RUNNING", "AllInstancesRunning", "RUNNING", "RUNNING", 100L),
                run("RUNNING", "AllInstancesRunning", "RUNNING", "RUNNING", 200L),
                run("SUCCEEDED", "AllInstancesSucceeded", "SUCCEEDED", "SUCCEEDED", 200L)).iterator();
        StringWriter progress = new StringWriter();
        RunView done = Runs.follow(polls::next, new PrintWriter(progress), d -> { });
        assertThat(done.state().name()).isEqualTo("SUCCEEDED");
        List<String> lines = progress.toString().lines().toList();
        assertThat(lines).doesNotHaveDuplicates().containsExactly(
                "run train-1: QUEUED (Submitted)",
                "run train-1: STARTING (Admitted), 2 pending",
                "run train-1: STARTING (Admitted), 1 pending, 1 running",
                "run train-1: RUNNING (AllInstancesRunning), 2 running",
                "run train-1: RUNNING (AllInstancesRunning), 2 running, step 100",
                "run train-1: RUNNING (AllInstancesRunning), 2 running, step 200");
    }
}
