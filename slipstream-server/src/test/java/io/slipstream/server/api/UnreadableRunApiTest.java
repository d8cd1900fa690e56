package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import io.slipstream.store.jdbc.JdbcStore;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * One run whose stored record cannot be read (its spec damaged in the database, as a bug, a hand edit or a newer
 * server would leave it) stops nothing else: the control loop runs the other runs, the API names it with a 409 and
 * lists it as unreadable, and it is shown only to those who may see its workspace.
 */
@ExtendWith(NoProcessLeftBehind.class)
class UnreadableRunApiTest {
    @TempDir
    Path dataDir;

    private static final String SETUP = """
            apiVersion: slipstream/v1
            kind: Workspace
            metadata: {name: team-a}
            spec: {members: [alice]}
            ---
            apiVersion: slipstream/v1
            kind: Workspace
            metadata: {name: team-b}
            spec: {members: [bob]}
            ---
            apiVersion: slipstream/v1
            kind: Quota
            metadata: {name: tiny, workspace: team-a}
            spec: {min: {gpu: 1}}
            ---
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: waits, workspace: team-a}
            spec:
              quota: tiny
              nodeGroups:
                - {name: worker, resources: {cpu: 1, memory: 1Gi, gpu: 2}, command: ["true"]}
            ---
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: quick, workspace: team-a}
            spec:
              nodeGroups:
                - {name: worker, resources: {cpu: 1, memory: 1Gi}, command: ["true"]}
            """;

    private static final String UNBINDABLE = "{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"waits\","
            + "\"workspace\":\"team-a\"},\"spec\":{\"nodeGroups\":\"not a list\"}}";

    @Test
    void anUnreadableRunStopsNothingElseAndIsNamedByTheApi() throws Exception {
        String alice;
        String bob;
        String broken;
        try (TestServer server = TestServer.start(dataDir)) {
            assertThat(server.post("/api/v1/apply", server.adminToken(), SETUP).status()).isEqualTo(200);
            alice = server.tokenFor("alice");
            bob = server.tokenFor("bob");
            broken = createRun(server, alice, "waits");
        }
        // Damaged while the server is down, as it can only be (another process cannot open the file while a server has
        // it open; the test's JVM could, but the server keeps the active rows it wrote and would not see the change).
        try (Connection db = DriverManager.getConnection(JdbcStore.h2Url(dataDir), "sa", ""); Statement sql = db.createStatement()) {
            assertThat(sql.executeUpdate("UPDATE runs SET spec = '" + UNBINDABLE + "' WHERE id = '" + broken + "'")).isEqualTo(1);
        }
        try (TestServer server = TestServer.start(dataDir)) {
            String quick = createRun(server, alice, "quick");
            server.awaitState(alice, quick, "SUCCEEDED"); // the control loop goes on cycling past the unreadable run

            Response get = server.get("/api/v1/runs/" + broken, alice);
            assertThat(get.status()).as(get.text()).isEqualTo(409);
            assertThat(get.json().get("code").asString()).isEqualTo("STORED_DATA_UNREADABLE");
            assertThat(get.json().get("message").asString()).contains("run " + broken).contains("cannot read").contains("at nodeGroups");
            assertThat(server.post("/api/v1/runs/" + broken + "/cancel", alice, "").status()).isEqualTo(409);
            assertThat(server.get("/api/v1/runs/" + broken, bob).status()).as("not revealed to other workspaces").isEqualTo(404);

            JsonNode list = server.get("/api/v1/runs", alice).json();
            assertThat(ids(list.get("items"))).containsExactly(quick);
            assertThat(list.get("unreadable")).singleElement().satisfies(run -> {
                assertThat(run.get("id").asString()).isEqualTo(broken);
                assertThat(run.get("job").asString()).isEqualTo("waits");
                assertThat(run.get("workspace").asString()).isEqualTo("team-a");
                assertThat(run.get("state").asString()).isEqualTo("QUEUED");
                assertThat(run.get("storedDataError").asString()).contains("nodeGroups");
            });
            JsonNode page = server.get("/api/v1/runs?limit=1", alice).json();
            assertThat(ids(page.get("items"))).containsExactly(quick);
            JsonNode rest = server.get("/api/v1/runs?limit=1&before=" + page.get("next").asString(), alice).json();
            assertThat(rest.get("items")).isEmpty();
            assertThat(ids(rest.get("unreadable"))).as("a page may end on it").containsExactly(broken);
            assertThat(server.get("/api/v1/runs", bob).json().has("unreadable")).isFalse();
            assertThat(server.get("/api/v1/nodes", server.adminToken()).status()).isEqualTo(200);
        }
    }

    private static String createRun(TestServer server, String token, String job) {
        Response created = server.post("/api/v1/runs", token, "{\"workspace\":\"team-a\",\"job\":\"" + job + "\"}");
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        return created.json().get("id").asString();
    }

    private static List<String> ids(JsonNode runs) {
        List<String> ids = new ArrayList<>();
        runs.forEach(run -> ids.add(run.get("id").asString()));
        return ids;
    }
}
