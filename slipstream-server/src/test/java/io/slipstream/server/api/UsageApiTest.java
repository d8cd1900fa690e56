package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.support.ShiftedClock;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * GPU-hours as the control loop records them: runs on a quota tree (org = lender 6 + borrower 2 GPUs) are admitted
 * for real, then the server's clock moves three hours on, and the report adds them up.
 */
class UsageApiTest {
    @TempDir
    static Path dataDir;

    private static final ShiftedClock CLOCK = new ShiftedClock(Duration.ZERO);
    private static TestServer server;
    private static String admin;
    private static String uma;

    @BeforeAll
    static void start() {
        server = TestServer.startInMemory(dataDir, CLOCK);
        admin = server.adminToken();
        Response applied = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-u}
                spec: {members: [uma]}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-o}
                spec: {members: [otto]}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: org, workspace: team-u}
                spec: {min: {cpu: 16, memory: 16Gi, gpu: 8}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: lender, workspace: team-u}
                spec: {parent: org, min: {cpu: 8, memory: 8Gi, gpu: 6}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: borrower, workspace: team-u}
                spec: {parent: org, min: {cpu: 8, memory: 8Gi, gpu: 2}}
                """);
        assertThat(applied.status()).as(applied.text()).isEqualTo(200);
        uma = server.tokenFor("uma");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String run(String job, String quota, String idle, int gpus) {
        Response created = server.post("/api/v1/runs", uma, """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "team-u"},
                 "spec": {"quota": "%s", "idleResources": "%s", "nodeGroups": [{"name": "main",
                  "resources": {"cpu": 1, "memory": "1Gi", "gpu": %d}, "command": ["sleep", "300"]}]}}}
                """.formatted(job, quota, idle, gpus));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        return created.json().get("id").asString();
    }

    private static JsonNode line(JsonNode report, String field, String value) {
        for (JsonNode line : report.get("lines")) {
            if (line.has(field) && line.get(field).asString().equals(value)) {
                return line;
            }
        }
        throw new AssertionError("no line with " + field + " " + value + " in " + report);
    }

    @Test
    void hoursOnTheQuotaBorrowedAndLentAreReportedByQuotaUserAndJob() {
        String own = run("own", "lender", "Disabled", 2);
        String extra = run("extra", "borrower", "Acceptable", 4);
        server.awaitState(uma, own, "RUNNING");
        server.awaitState(uma, extra, "RUNNING");
        assertThat(server.get("/api/v1/runs/" + extra, uma).json().get("realTimeResources").asString()).isEqualTo("NotInQuota");
        // The lender's unused guarantee is held by the borrower: the loop's next cycle records that it lends.
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() ->
                line(server.get("/api/v1/usage?by=quota", uma).json(), "quota", "lender").at("/gpuHours/lent").asDouble() > 0);
        CLOCK.shift(Duration.ofHours(3));
        try {
            JsonNode byQuota = server.get("/api/v1/usage?by=quota", uma).json();
            assertThat(byQuota.get("by").asString()).isEqualTo("quota");
            JsonNode lender = line(byQuota, "quota", "lender");
            assertThat(lender.at("/gpuHours/inQuota").asDouble()).isBetween(6.0, 6.2);
            assertThat(lender.at("/cpuHours/inQuota").asDouble()).isBetween(3.0, 3.1);
            assertThat(lender.at("/gpuHours/lent").asDouble()).as("it lent for the three hours: %s", lender).isGreaterThan(2.9);
            JsonNode borrower = line(byQuota, "quota", "borrower");
            assertThat(borrower.at("/gpuHours/borrowed").asDouble()).isBetween(12.0, 12.4);
            assertThat(borrower.at("/gpuHours/inQuota").asDouble()).isZero();
            assertThat(byQuota.at("/total/gpuHours/inQuota").asDouble()).isEqualTo(lender.at("/gpuHours/inQuota").asDouble());

            JsonNode byUser = line(server.get("/api/v1/usage?by=user", uma).json(), "user", "uma");
            assertThat(byUser.at("/gpuHours/borrowed").asDouble()).isBetween(12.0, 12.4);
            assertThat(byUser.at("/gpuHours/lent").asDouble()).as("lending is a quota's").isZero();
            JsonNode byJob = line(server.get("/api/v1/usage?by=job&workspace=team-u", uma).json(), "job", "own");
            assertThat(byJob.get("workspace").asString()).isEqualTo("team-u");
            assertThat(byJob.at("/gpuHours/inQuota").asDouble()).isBetween(6.0, 6.2);

            // A window that ends earlier counts only its part; reports are by whole hours (until rounded up).
            JsonNode early = server.get("/api/v1/usage?by=quota&until=2h", uma).json();
            assertThat(java.time.Instant.parse(early.get("until").asString()).toEpochMilli() % 3_600_000).isZero();
            assertThat(line(early, "quota", "borrower").at("/gpuHours/borrowed").asDouble()).isBetween(4.0, 8.0);

            // Another team sees none of it, also when it asks for the workspace by name.
            String otto = server.tokenFor("otto");
            assertThat(server.get("/api/v1/usage?by=job", otto).json().get("lines")).isEmpty();
            assertThat(server.get("/api/v1/usage?workspace=team-u", otto).json().get("lines")).isEmpty();
            assertThat(server.get("/api/v1/usage", admin).json().get("lines").toString()).contains("team-u");
        } finally {
            CLOCK.shift(Duration.ZERO);
            server.post("/api/v1/runs/" + own + "/cancel", uma, "");
            server.post("/api/v1/runs/" + extra + "/cancel", uma, "");
        }
    }

    @Test
    void aBadQueryIsRefusedNamingItsParameter() {
        Response by = server.get("/api/v1/usage?by=team", uma);
        assertThat(by.status()).isEqualTo(400);
        assertThat(by.json().at("/problems/0/field").asString()).isEqualTo("by");
        assertThat(by.json().at("/problems/0/message").asString()).contains("workspace, quota, user, job");
        Response backwards = server.get("/api/v1/usage?since=1h&until=2h", uma);
        assertThat(backwards.status()).isEqualTo(400);
        assertThat(backwards.json().at("/problems/0/field").asString()).isEqualTo("since");
        Response time = server.get("/api/v1/usage?since=yesterday", uma);
        assertThat(time.status()).isEqualTo(400);
        assertThat(time.json().at("/problems/0/field").asString()).isEqualTo("since");
        assertThat(server.get("/api/v1/usage?workspace=Not_A_Name", uma).status()).isEqualTo(400);
    }
}
