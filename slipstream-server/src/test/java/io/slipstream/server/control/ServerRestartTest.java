package io.slipstream.server.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import io.slipstream.testing.NoProcessLeftBehind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** Real processes outlive the server: a new server on the same data dir adopts them and records how they ended. */
@ExtendWith(NoProcessLeftBehind.class)
class ServerRestartTest {
    @TempDir
    Path dataDir;

    private static String submit(TestServer server, String name, String script) {
        String job = """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "w"},
                 "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["sh", "-c", %s]}]}}}
                """.formatted(name, Json.mapper().writeValueAsString(script));
        var response = server.post("/api/v1/runs", server.adminToken(), job);
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        return response.json().get("id").asString();
    }

    @Test
    void instancesAreAdoptedAndExitCodesOfThoseThatEndedMeanwhileAreRecorded() throws Exception {
        Path gate = dataDir.resolve("gate");
        assertThat(new ProcessBuilder("mkfifo", gate.toString()).start().waitFor()).isZero();
        String admin;
        String survivor;
        String endsWhileDown;
        try (TestServer server = TestServer.start(dataDir)) {
            admin = server.adminToken();
            server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
            survivor = submit(server, "survivor", "echo started; read line < " + gate + "; echo \"got $line\"; exit 0");
            endsWhileDown = submit(server, "short", "echo started; sleep 0.2; exit 7");
            server.awaitState(admin, survivor, "RUNNING");
            server.awaitState(admin, endsWhileDown, "RUNNING");
        } // the server stops; its instances do not

        // The short instance ends while no server watches: its supervisor records the exit code.
        Path exitCode = dataDir.resolve("instances").resolve(endsWhileDown).resolve("1").resolve("0").resolve("exit_code");
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
        while (!Files.exists(exitCode)) {
            assertThat(System.nanoTime()).as("the instance never ended").isLessThan(deadline);
            java.util.concurrent.TimeUnit.MILLISECONDS.sleep(20);
        }
        try (TestServer server = TestServer.start(dataDir)) {
            assertThat(server.adminToken()).isEqualTo(admin);
            JsonNode failed = server.awaitState(admin, endsWhileDown, "FAILED");
            assertThat(failed.get("instances").get(0).get("exitCode").asInt()).isEqualTo(7);
            assertThat(server.get("/api/v1/runs/" + survivor, admin).json().get("state").asString()).isEqualTo("RUNNING");

            io.slipstream.testing.Fifos.write(gate, "go\n", java.time.Duration.ofSeconds(30));
            server.awaitState(admin, survivor, "SUCCEEDED");
            String logs = server.get("/api/v1/runs/" + survivor + "/logs", admin).text();
            assertThat(logs).contains("[main-0|r0|node-1] started").contains("[main-0|r0|node-1] got go");
            JsonNode events = server.get("/api/v1/runs/" + survivor + "/events", admin).json();
            assertThat(events.toString()).contains("AllInstancesSucceeded");
        }
    }

    /**
     * A data directory moved (renamed) while the server is down keeps its runs: a run still running is adopted from the
     * new place and ends there, one that ended meanwhile is judged by the exit code its supervisor wrote there; both
     * with the absolute handles older servers stored.
     */
    @Test
    void aDataDirectoryMovedWhileTheServerIsDownKeepsItsRuns(@TempDir Path elsewhere) throws Exception {
        Path before = elsewhere.resolve("before");
        Path after = elsewhere.resolve("after");
        Path survivorGate = elsewhere.resolve("survivor-gate");
        Path shortGate = elsewhere.resolve("short-gate");
        for (Path gate : java.util.List.of(survivorGate, shortGate)) {
            assertThat(new ProcessBuilder("mkfifo", gate.toString()).start().waitFor()).isZero();
        }
        String admin;
        String survivor;
        String endsAfterTheMove;
        try (TestServer server = TestServer.start(before)) {
            admin = server.adminToken();
            server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
            survivor = submit(server, "survivor", "echo started; read line < " + survivorGate + "; echo \"got $line\"; exit 0");
            endsAfterTheMove = submit(server, "short", "echo started; read line < " + shortGate + "; exit 7");
            // Each workload itself under way (not only its instance reported started) before the server stops.
            for (String run : java.util.List.of(survivor, endsAfterTheMove)) {
                server.awaitRun(admin, run, r -> server.get("/api/v1/runs/" + run + "/logs", admin).text().contains("started"));
            }
        }
        // As a server before relative handles wrote them: absolute, naming the place the data directory is moved from.
        try (io.slipstream.store.Store store = io.slipstream.store.jdbc.JdbcStore.openH2(before)) {
            for (var instance : store.runs().activeInstances()) {
                java.util.Map<String, String> handle = new java.util.HashMap<>(instance.handle());
                handle.put("dir", before.resolve("instances").resolve(handle.get("dir")).toString());
                store.write(tx -> tx.updateInstance(instance.running(handle, instance.startedAt())));
            }
        }
        Files.move(before, after);
        // One instance ends after the move, while no server watches: its supervisor writes the exit code where it is now.
        io.slipstream.testing.Fifos.write(shortGate, "go\n", java.time.Duration.ofSeconds(30));
        Path exitCode = after.resolve("instances").resolve(endsAfterTheMove).resolve("1").resolve("0").resolve("exit_code");
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> Files.exists(exitCode));

        try (TestServer server = TestServer.start(after)) {
            JsonNode failed = server.awaitState(admin, endsAfterTheMove, "FAILED");
            assertThat(failed.get("instances").get(0).get("exitCode").asInt()).isEqualTo(7);
            assertThat(server.get("/api/v1/runs/" + survivor, admin).json().get("state").asString()).isEqualTo("RUNNING");

            io.slipstream.testing.Fifos.write(survivorGate, "go\n", java.time.Duration.ofSeconds(30));
            server.awaitState(admin, survivor, "SUCCEEDED");
            assertThat(server.get("/api/v1/runs/" + survivor + "/logs", admin).text())
                    .contains("[main-0|r0|node-1] started").contains("[main-0|r0|node-1] got go");
        }
    }

    @Test
    void cancelStopsTheWholeProcessTreeEvenWhenItIgnoresSigterm() throws Exception {
        try (TestServer server = TestServer.start(dataDir)) {
            String admin = server.adminToken();
            server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
            String run = submit(server, "stubborn", "trap '' TERM; sleep 300 & sleep 300 & echo started; wait");
            server.awaitRun(admin, run, r -> server.get("/api/v1/runs/" + run + "/logs", admin).text().contains("started"));
            JsonNode cancel = server.post("/api/v1/runs/" + run + "/cancel", admin, "{}").json();
            assertThat(cancel.get("accepted").asBoolean()).isTrue();
            JsonNode cancelled = server.awaitState(admin, run, "CANCELLED");
            assertThat(cancelled.get("instances").get(0).get("state").asString()).isEqualTo("KILLED");
            assertThat(cancelled.get("instances").get(0).get("exitCode").asInt()).isEqualTo(137);
            JsonNode again = server.post("/api/v1/runs/" + run + "/cancel", admin, "{}").json();
            assertThat(again.get("accepted").asBoolean()).isFalse();
            assertThat(again.get("message").asString()).contains("already finished");
        }
    }
}
