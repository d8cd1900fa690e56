package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.slipstream.server.support.ShiftedClock;
import io.slipstream.server.support.TestServer;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Schedules through the real API and the real local executor, on a {@link ShiftedClock} that the test moves a minute
 * at a time: no real cron minute passes. Every minute on the minute; Forbid skips while its run is active; Replace
 * cancels the active run (its real processes stop) and starts the new one. (It was {@code RunLifecycleIT}'s, which
 * waited two real minutes; {@code ControlLoopTest} holds the same rules cycle by cycle on a fake clock.)
 */
@ExtendWith(NoProcessLeftBehind.class)
class ScheduledRunsApiTest {
    @TempDir
    Path dataDir;

    private static String scheduled(String name, String policy) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: demo}
                spec:
                  schedule: {cron: "* * * * *", timeZone: UTC, concurrencyPolicy: %s}
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sh, -c, "echo tick; sleep 600"]}
                """.formatted(name, policy);
    }

    @Test
    void schedulesFireEveryMinuteOnTheMinuteForbidSkipsAndReplaceCancels() {
        ShiftedClock clock = new ShiftedClock(Duration.ZERO);
        try (TestServer server = TestServer.start(dataDir, config -> config, clock)) {
            String admin = server.adminToken();
            TestServer.Response applied = server.post("/api/v1/apply", admin, """
                    apiVersion: slipstream/v1
                    kind: Workspace
                    metadata: {name: demo}
                    ---
                    """ + scheduled("every-minute-forbid", "Forbid") + "---\n" + scheduled("every-minute-replace", "Replace"));
            assertThat(applied.status()).as(applied.text()).isEqualTo(200);
            Instant firstDue = clock.instant().truncatedTo(ChronoUnit.MINUTES).plus(Duration.ofMinutes(1));
            try {
                clock.shift(Duration.between(Instant.now(), firstDue.plusMillis(200)));
                List<JsonNode> replaced = awaitRuns(server, admin, "every-minute-replace", 1);
                List<JsonNode> forbidden = awaitRuns(server, admin, "every-minute-forbid", 1);
                for (JsonNode run : List.of(replaced.get(0), forbidden.get(0))) {
                    assertThat(Instant.parse(run.get("scheduleTime").asString())).as("on the minute").isEqualTo(firstDue);
                    assertThat(Instant.parse(run.get("createdAt").asString())).as("never early").isAfterOrEqualTo(firstDue);
                }
                String first = replaced.get(0).get("id").asString();
                server.awaitState(admin, first, "RUNNING");
                server.awaitState(admin, forbidden.get(0).get("id").asString(), "RUNNING");

                clock.shift(Duration.between(Instant.now(), firstDue.plus(Duration.ofMinutes(1)).plusMillis(200)));
                replaced = awaitRuns(server, admin, "every-minute-replace", 2);
                JsonNode second = replaced.get(0); // newest first
                assertThat(Duration.between(firstDue, Instant.parse(second.get("scheduleTime").asString()))).isEqualTo(Duration.ofMinutes(1));
                JsonNode cancelled = server.awaitState(admin, first, "CANCELLED");
                assertThat(cancelled.get("instances").get(0).get("state").asString()).isIn("CANCELLED", "KILLED", "SUCCEEDED", "FAILED");
                assertThat(server.get("/api/v1/runs/" + first + "/events?limit=1000", admin).text()).contains("ReplacedBySchedule");
                assertThat(server.get("/api/v1/runs/" + second.get("id").asString(), admin).json().get("state").asString())
                        .isIn("QUEUED", "STARTING", "RUNNING");

                // The tick that started Replace's second run handled every schedule at that time: Forbid's second due time
                // has been decided, and it started nothing while the first run is active.
                assertThat(runsOf(server, admin, "every-minute-forbid")).extracting(r -> r.get("scheduleTime").asString())
                        .containsExactly(firstDue.toString());
                assertThat(runsOf(server, admin, "every-minute-forbid").get(0).get("state").asString()).isEqualTo("RUNNING");
            } finally {
                for (JsonNode run : server.get("/api/v1/runs?limit=1000", admin).json().get("items")) {
                    String id = run.get("id").asString();
                    server.post("/api/v1/runs/" + id + "/cancel", admin, "{}");
                    server.awaitRun(admin, id, r -> io.slipstream.api.run.RunState.valueOf(r.get("state").asString()).isFinal());
                }
            }
        }
    }

    private static List<JsonNode> runsOf(TestServer server, String token, String job) {
        List<JsonNode> runs = new ArrayList<>();
        server.get("/api/v1/runs?job=" + job + "&limit=1000", token).json().get("items").forEach(runs::add);
        return runs;
    }

    private static List<JsonNode> awaitRuns(TestServer server, String token, String job, int count) {
        return await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).alias(job + ": " + count + " run(s)")
                .until(() -> runsOf(server, token, job), runs -> runs.size() >= count);
    }
}
