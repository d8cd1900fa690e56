package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** What {@code slipstream get run ID} prints of a run's instances. */
class RunDescribeTest {
    @Test
    void anInstanceEndedByAnOomKillShowsTheCauseBesideItsExitCodeAndItsReason() {
        RunView run = ApiClient.read(Json.mapper().readTree("""
                {"id": "train-1", "job": "train", "workspace": "w", "jobVersion": 1, "state": "FAILED",
                 "reason": "InstanceFailed: main-1 (OOMKilled: used more memory than its limit (exit code 137))", "attempt": 1,
                 "priority": 0, "createdAt": "2026-12-01T10:00:00Z", "instances": [
                  {"nodeGroup": "main", "rank": 0, "groupRank": 0, "attempt": 1, "node": "node-1", "gpus": [], "state": "KILLED",
                   "exitCode": 143, "reason": "Terminated (exit code 143)", "restarts": 0},
                  {"nodeGroup": "main", "rank": 1, "groupRank": 1, "attempt": 1, "node": "node-1", "gpus": [], "state": "FAILED",
                   "exitCode": 137, "endCause": "OOMKilled", "reason": "OOMKilled: used more memory than its limit (exit code 137)",
                   "restarts": 0}]}
                """), RunView.class);
        StringWriter out = new StringWriter();
        Runs.describe(new PrintWriter(out), run);
        assertThat(out.toString()).contains("State:      FAILED (InstanceFailed: main-1 (OOMKilled: used more memory than its limit (exit code 137)))");
        assertThat(out.toString().lines().filter(line -> line.startsWith("  main-1")).findFirst().orElseThrow())
                .matches("  main-1 +1 +1 +node-1 +- +FAILED +137 \\(OOMKilled\\) +0 +OOMKilled: used more memory than its limit \\(exit code 137\\)");
        assertThat(out.toString().lines().filter(line -> line.startsWith("  main-0")).findFirst().orElseThrow())
                .matches("  main-0 .* KILLED +143 +0 +Terminated \\(exit code 143\\)");
    }

    @Test
    void whatEndedInstancesUsedStandsBesideThemOnceOneWasMeasured() {
        RunView run = ApiClient.read(Json.mapper().readTree("""
                {"id": "train-2", "job": "train", "workspace": "w", "jobVersion": 1, "state": "RUNNING", "reason": "Started", "attempt": 1,
                 "priority": 0, "createdAt": "2026-12-01T10:00:00Z", "instances": [
                  {"nodeGroup": "main", "rank": 0, "groupRank": 0, "attempt": 1, "node": "node-1", "gpus": [], "state": "SUCCEEDED",
                   "exitCode": 0, "reason": "Completed", "memoryPeak": "1536Mi", "cpuSeconds": 725.4, "restarts": 0},
                  {"nodeGroup": "main", "rank": 1, "groupRank": 1, "attempt": 1, "node": "node-1", "gpus": [], "state": "SUCCEEDED",
                   "exitCode": 0, "reason": "Completed", "memoryPeak": "104864Ki", "cpuSeconds": 0.42, "restarts": 0},
                  {"nodeGroup": "main", "rank": 2, "groupRank": 2, "attempt": 1, "node": "node-1", "gpus": [], "state": "RUNNING",
                   "reason": "Launched", "restarts": 0}]}
                """), RunView.class);
        StringWriter out = new StringWriter();
        Runs.describe(new PrintWriter(out), run);
        String text = out.toString();
        assertThat(text).containsPattern("  NAME +RANK +ATTEMPT +NODE +GPUS +STATE +EXIT +RESTARTS +PEAK MEM +CPU +REASON");
        assertThat(text.lines().filter(line -> line.startsWith("  main-0")).findFirst().orElseThrow())
                .matches("  main-0 .* SUCCEEDED +0 +0 +1\\.5Gi +12m05s +Completed");
        assertThat(text.lines().filter(line -> line.startsWith("  main-1")).findFirst().orElseThrow())
                .matches("  main-1 .* SUCCEEDED +0 +0 +102Mi +0\\.4s +Completed");
        assertThat(text.lines().filter(line -> line.startsWith("  main-2")).findFirst().orElseThrow())
                .matches("  main-2 .* RUNNING +- +0 +- +- +Launched");
    }

    /** {@code get run} says which quota the run is charged to, and {@code get runs -o wide} shows it in QUOTA. */
    @Test
    void theQuotaIsShownWithTheRunAndInTheWideRow() {
        RunView run = ApiClient.read(Json.mapper().readTree("""
                {"id": "train-3", "job": "train", "workspace": "w", "jobVersion": 1, "state": "RUNNING", "reason": "Started", "attempt": 1,
                 "realTimeResources": "InQuota", "quota": "team-a", "priority": 0, "createdAt": "2026-12-01T10:00:00Z", "instances": []}
                """), RunView.class);
        StringWriter out = new StringWriter();
        Runs.describe(new PrintWriter(out), run);
        assertThat(out.toString()).contains("Quota:      w/team-a\n");
        assertThat(Runs.wideRow(run).get(Runs.WIDE_HEADER.indexOf("QUOTA"))).isEqualTo("team-a");
        RunView without = ApiClient.read(Json.mapper().readTree("""
                {"id": "hello-1", "job": "hello", "workspace": "w", "jobVersion": 1, "state": "QUEUED", "reason": "Submitted", "attempt": 1,
                 "priority": 0, "createdAt": "2026-12-01T10:00:00Z", "instances": []}
                """), RunView.class);
        StringWriter none = new StringWriter();
        Runs.describe(new PrintWriter(none), without);
        assertThat(none.toString()).contains("Quota:      (none");
        assertThat(Runs.wideRow(without).get(Runs.WIDE_HEADER.indexOf("QUOTA"))).isEmpty();
    }

    @Test
    void aRunWhoseInstancesWereNotMeasuredHasNoColumnsForIt() {
        RunView run = ApiClient.read(Json.mapper().readTree("""
                {"id": "train-3", "job": "train", "workspace": "w", "jobVersion": 1, "state": "SUCCEEDED", "reason": "Succeeded", "attempt": 1,
                 "priority": 0, "createdAt": "2026-12-01T10:00:00Z", "instances": [
                  {"nodeGroup": "main", "rank": 0, "groupRank": 0, "attempt": 1, "node": "node-1", "gpus": [], "state": "SUCCEEDED",
                   "exitCode": 0, "reason": "Completed", "restarts": 0}]}
                """), RunView.class);
        StringWriter out = new StringWriter();
        Runs.describe(new PrintWriter(out), run);
        assertThat(out.toString()).doesNotContain("PEAK MEM").containsPattern("RESTARTS +REASON");
    }

    @Test
    void cpuTimeAndMemoryReadAsPeopleWriteThem() {
        assertThat(Runs.cpuTime(59.94)).isEqualTo("59.9s");
        assertThat(Runs.cpuTime(3599.4)).isEqualTo("59m59s");
        assertThat(Runs.cpuTime(12_000.0)).isEqualTo("3h20m");
        assertThat(Runs.cpuTime(null)).isEmpty();
        assertThat(Runs.memory("2Gi")).isEqualTo("2.0Gi");
        assertThat(Runs.memory("4096")).isEqualTo("4Ki");
        assertThat(Runs.memory("512")).isEqualTo("512");
        assertThat(Runs.memory(null)).isEmpty();
    }
}
