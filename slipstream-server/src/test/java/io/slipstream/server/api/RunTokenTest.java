package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunTokenTest {
    @TempDir
    Path dataDir;

    private static String job(String name) {
        String script = "echo \"token=$SLIPSTREAM_RUN_TOKEN server=$SLIPSTREAM_SERVER\"; exec sleep 600";
        return """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "w"},
                 "spec": {"nodeGroups": [{"name": "main", "replicas": 1, "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["sh", "-c", %s]}]}}}
                """.formatted(name, Json.mapper().writeValueAsString(script));
    }

    @Test
    void aRunsInstancesReadTheirOwnRunWithItsTokenAndNothingElse() {
        try (TestServer server = TestServer.start(dataDir)) {
            String admin = server.adminToken();
            server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
            String run = server.post("/api/v1/runs", admin, job("reader")).json().get("id").asString();
            String other = server.post("/api/v1/runs", admin, job("other")).json().get("id").asString();
            String logPath = "/api/v1/runs/" + run + "/logs?instance=main-0&stream=stdout&prefix=false";
            server.awaitRun(admin, run, r -> server.get(logPath, admin).text().contains("token="));
            String line = server.get(logPath, admin).text().lines().filter(l -> l.startsWith("token=")).findFirst().orElseThrow();
            String token = line.substring("token=".length(), line.indexOf(' '));
            assertThat(token).startsWith("ss_");
            assertThat(line).endsWith("server=" + server.server().url());

            assertThat(server.get("/api/v1/runs/" + run, token).json().get("state").asString()).isIn("STARTING", "RUNNING");
            assertThat(server.get("/api/v1/runs/" + run + "/events", token).status()).isEqualTo(200);
            assertThat(server.get("/api/v1/whoami", token).json().get("user").asString()).isEqualTo("run:" + run);
            assertThat(server.get("/api/v1/runs/" + other, token).status()).isEqualTo(403);
            // Dot segments, encoded or not, and doubled slashes: the allowlist reads the path the router routes.
            for (String sneaky : java.util.List.of("/api/v1/runs/" + run + "/../../watch?timeoutSeconds=1", "/api/v1/runs/" + run + "/%2e%2e/%2e%2e/watch?timeoutSeconds=1",
                    "/api/v1/runs/" + run + "/..%2f..%2fwatch?timeoutSeconds=1", "/api/v1/runs/" + run + "/../../usage", "/api/v1/runs/" + run + "/../" + other,
                    "/api/v1/runs/" + run + ";x/../../usage", "//api/v1/usage", "/api/v1//usage", "/api//v1/usage", "/api/v1/./usage",
                    "/api/v1/runs/" + run + "/%2E%2E/" + other, "/api/v1/runs/" + run + "/%252e%252e/" + other, "/api/v1/runs/" + run + "/./../" + other)) {
                assertThat(server.rawGet(sneaky, token)).as("a run token reaches nothing but its run through " + sneaky).isIn(400, 403, 404);
            }
            assertThat(server.get("/api/v1/runs", token).status()).isEqualTo(403);
            assertThat(server.post("/api/v1/runs/" + run + "/cancel", token, "{}").status()).isEqualTo(403);
            assertThat(server.post("/api/v1/runs", token, job("sneaky")).status()).isEqualTo(403);

            // Progress, as the SDK reports it where no executor reads a progress file.
            String progressPath = "/api/v1/runs/" + run + "/instances/0/progress";
            assertThat(server.post(progressPath, token, "{\"step\": 120, \"checkpointStep\": 100, \"checkpointTime\": \"2026-11-30T10:00:00Z\", "
                    + "\"metrics\": {\"loss\": 0.5}}").status()).isEqualTo(204);
            server.awaitRun(admin, run, r -> r.path("progress").path("step").asLong(-1) == 120);
            assertThat(server.get("/api/v1/runs/" + run, admin).json().get("progress").get("checkpointStep").asLong()).isEqualTo(100);
            TestServer.Response bad = server.post(progressPath, token, "{\"step\": -1, \"checkpointStep\": 3, \"metrics\": {\"loss\": \"low\"}, \"x\": 1}");
            assertThat(bad.status()).isEqualTo(400);
            assertThat(bad.json().get("problems").toString()).contains("step", "checkpointTime", "metrics.loss", "\"x\"");
            assertThat(server.post("/api/v1/runs/" + run + "/instances/7/progress", token, "{\"step\": 1}").status()).isEqualTo(404);
            assertThat(server.post("/api/v1/runs/" + other + "/instances/0/progress", token, "{\"step\": 1}").status()).isEqualTo(403);
            String member = server.tokenFor("someone");
            assertThat(server.post(progressPath, member, "{\"step\": 1}").status()).as("not a member: the run is not found").isEqualTo(404);

            assertThat(server.post("/api/v1/runs/" + run + "/cancel", admin, "{}").status()).isLessThan(300);
            server.awaitState(admin, run, "CANCELLED");
            TestServer.Response ended = server.get("/api/v1/runs/" + run, token);
            assertThat(ended.status()).isEqualTo(401);
            assertThat(ended.text()).contains("the run of this token has ended");
            server.post("/api/v1/runs/" + other + "/cancel", admin, "{}");
            // Closed only once it is: the instance's cgroup is removed by the server that sees it end.
            server.awaitState(admin, other, "CANCELLED");
        }
    }
}
