package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The nodes a run on idle capacity borrows belong to other teams' quotas: their names are hidden from the run's own
 * team, also where a reason names them (a borrowed node going down restarts the run with "NodeLost: node N is down").
 */
class BorrowedNodesApiTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static String admin;
    private static String uma;

    @BeforeAll
    static void start() {
        server = TestServer.startInMemory(dataDir);
        admin = server.adminToken();
        Response applied = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-u}
                spec: {members: [uma]}
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

    @Test
    void aBorrowedNodeThatGoesDownIsNotNamedToTheBorrower() {
        String id = startBorrower("extra");
        String node = server.get("/api/v1/runs/" + id, admin).json().at("/instances/0/node").asString();
        try {
            assertThat(server.post("/api/v1/nodes/" + node + "/down", admin, "{\"reason\": \"maintenance\"}").status()).isEqualTo(200);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() ->
                    server.get("/api/v1/runs/" + id + "/events", admin).text().contains("restarting elsewhere"));
            assertThat(server.get("/api/v1/runs/" + id + "/events", admin).text()).as("admins see the node").contains(node + " is down");

            String run = server.get("/api/v1/runs/" + id, uma).text();
            String list = server.get("/api/v1/runs?workspace=team-u", uma).text();
            String events = server.get("/api/v1/runs/" + id + "/events", uma).text();
            assertThat(events).as("the reasons are still told").contains("NodeLost").contains("hidden is down (maintenance)");
            assertNotNamed(node, run, list, events);
        } finally {
            server.post("/api/v1/nodes/" + node + "/up", admin, "{}");
            server.post("/api/v1/runs/" + id + "/cancel", uma, "");
        }
    }

    @Test
    void aBorrowedNodeThatIsDrainedIsNotNamedToTheBorrowerEvenWhereTheAdminsReasonNamesIt() {
        String id = startBorrower("moved");
        String node = server.get("/api/v1/runs/" + id, admin).json().at("/instances/0/node").asString();
        try {
            assertThat(server.post("/api/v1/nodes/" + node + "/drain", admin, "{\"reason\": \"fan of " + node + " fails\"}").status()).isEqualTo(200);
            // Moved off as a reclaim moves a victim: queued again once its instances are gone, then placed elsewhere.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() ->
                    server.get("/api/v1/runs/" + id + "/events", admin).text().contains("Preempted: NodeDrain"));
            assertThat(server.get("/api/v1/runs/" + id + "/events", admin).text()).as("admins see the node").contains("node " + node + " is drained");

            String run = server.get("/api/v1/runs/" + id, uma).text();
            String list = server.get("/api/v1/runs?workspace=team-u", uma).text();
            String events = server.get("/api/v1/runs/" + id + "/events", uma).text();
            assertThat(events).as("the reasons are still told").contains("NodeDrain: node hidden is drained (by admin: fan of hidden fails)");
            assertNotNamed(node, run, list, events);
        } finally {
            server.post("/api/v1/nodes/" + node + "/uncordon", admin, "{}");
            server.post("/api/v1/runs/" + id + "/cancel", uma, "");
        }
    }

    /** A run of uma's on idle capacity (NotInQuota), running. */
    private static String startBorrower(String name) {
        Response created = server.post("/api/v1/runs", uma, """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "team-u"},
                 "spec": {"quota": "borrower", "idleResources": "Acceptable", "nodeGroups": [{"name": "main",
                  "resources": {"cpu": 1, "memory": "1Gi", "gpu": 4}, "command": ["sleep", "300"]}]}}}
                """.formatted(name));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        String id = created.json().get("id").asString();
        server.awaitState(uma, id, "RUNNING");
        assertThat(server.get("/api/v1/runs/" + id, uma).json().get("realTimeResources").asString()).isEqualTo("NotInQuota");
        return id;
    }

    private static void assertNotNamed(String node, String... seen) {
        for (String text : seen) {
            assertThat(text).doesNotContainPattern("\\b" + java.util.regex.Pattern.quote(node) + "\\b");
        }
    }
}
