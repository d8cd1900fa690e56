package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.support.ShiftedClock;
import io.slipstream.server.support.TestServer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** A scheduled job read back says when it runs next; a suspended one, and a job without a schedule, do not. */
class JobStatusApiTest {
    @TempDir
    Path dataDir;

    private static String job(String name, String schedule) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: demo}
                spec:
                  %s
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sh, -c, "echo hi"]}
                """.formatted(name, schedule);
    }

    @Test
    void aScheduledJobHasItsNextRunTimeAndASuspendedOneHasNone() {
        // The server's clock at 09:59:30 UTC on 1 June 2026 (02:00 in Berlin is 00:00 UTC in summer), moving on from there.
        ShiftedClock clock = new ShiftedClock(Duration.between(Instant.now(), Instant.parse("2026-06-01T09:59:30Z")));
        try (TestServer server = TestServer.startInMemory(dataDir, clock)) {
            String admin = server.adminToken();
            TestServer.Response applied = server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: demo}\n---\n"
                    + job("nightly", "schedule: {cron: \"0 2 * * *\", timeZone: Europe/Berlin}") + "---\n"
                    + job("paused", "schedule: {cron: \"0 2 * * *\", suspend: true}") + "---\n"
                    + job("once", "priority: 0"));
            assertThat(applied.status()).as(applied.text()).isEqualTo(200);

            JsonNode nightly = server.get("/api/v1/workspaces/demo/jobs/nightly", admin).json();
            assertThat(nightly.path("status").path("nextRunAt").asString()).isEqualTo("2026-06-02T00:00:00Z");
            JsonNode paused = server.get("/api/v1/workspaces/demo/jobs/paused", admin).json();
            assertThat(paused.path("status").isObject()).isTrue();
            assertThat(paused.path("status").has("nextRunAt")).as("suspended: no next run").isFalse();
            assertThat(server.get("/api/v1/workspaces/demo/jobs/once", admin).json().has("status")).isFalse();

            // The list says the same of each.
            JsonNode items = server.get("/api/v1/jobs?workspace=demo", admin).json().get("items");
            assertThat(items).hasSize(3);
            for (JsonNode item : items) {
                String name = item.path("metadata").path("name").asString();
                assertThat(item.path("status").path("nextRunAt").asString(""))
                        .as(name).isEqualTo(name.equals("nightly") ? "2026-06-02T00:00:00Z" : "");
            }
        }
    }
}
