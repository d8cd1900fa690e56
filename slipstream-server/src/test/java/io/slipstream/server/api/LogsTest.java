package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

class LogsTest {
    @TempDir
    Path dataDir;

    @Test
    void linesAreSplitOnNewlinesAndCarriageReturnsAndTaggedWithTheirOrigin() {
        try (TestServer server = TestServer.start(dataDir)) {
            String admin = server.adminToken();
            server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
            String script = "printf 'one\\rtwo\\r\\nthree\\nlast-without-newline'; echo oops >&2";
            String job = """
                    {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "printer", "workspace": "w"},
                     "spec": {"nodeGroups": [{"name": "main", "replicas": 2, "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["sh", "-c", %s]}]}}}
                    """.formatted(Json.mapper().writeValueAsString(script));
            String run = server.post("/api/v1/runs", admin, job).json().get("id").asString();
            server.awaitState(admin, run, "SUCCEEDED");

            String bare = server.get("/api/v1/runs/" + run + "/logs?instance=main-1&stream=stdout&prefix=false", admin).text();
            assertThat(bare).isEqualTo("one\ntwo\nthree\nlast-without-newline\n");
            String tagged = server.get("/api/v1/runs/" + run + "/logs?follow=true", admin).text();
            assertThat(tagged).contains("[main-0|r0|node-1] three", "[main-1|r1|node-1] three", "[main-1|r1|node-1] oops");
            JsonNode line = Json.mapper().readTree(server.get("/api/v1/runs/" + run + "/logs?instance=main-0&stream=stderr&format=jsonl", admin)
                    .text().lines().findFirst().orElseThrow());
            assertThat(line.get("stream").asString()).isEqualTo("stderr");
            assertThat(line.get("line").asString()).isEqualTo("oops");
            assertThat(line.get("nodeGroup").asString()).isEqualTo("main");

            assertThat(server.get("/api/v1/runs/" + run + "/logs?instance=main-2", admin).status()).isEqualTo(404);
            assertThat(server.get("/api/v1/runs/" + run + "/logs?instance=../etc", admin).status()).isEqualTo(404);
            assertThat(server.get("/api/v1/runs/" + run + "/logs?attempt=2", admin).status()).isEqualTo(400);
        }
    }

    @Test
    void followingShowsEveryAttemptInOrderNotOnlyTheCurrentOne() {
        try (TestServer server = TestServer.start(dataDir)) {
            String admin = server.adminToken();
            server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
            // The first attempt prints a line and fails at once; the second prints one and succeeds.
            String script = "echo attempt-$SLIPSTREAM_ATTEMPT; [ $SLIPSTREAM_ATTEMPT -ge 2 ] || exit 3";
            String job = """
                    {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "retried", "workspace": "w"},
                     "spec": {"faultTolerance": {"maxRestarts": 1, "backoff": {"base": "1s", "cap": "1s"}, "retryOn": {"exitCodes": [3]}},
                              "nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["sh", "-c", %s]}]}}}
                    """.formatted(Json.mapper().writeValueAsString(script));
            var created = server.post("/api/v1/runs", admin, job);
            assertThat(created.status()).as(created.text()).isEqualTo(201);
            String run = created.json().get("id").asString();
            String followed = server.get("/api/v1/runs/" + run + "/logs?follow=true&prefix=false", admin).text();
            server.awaitState(admin, run, "SUCCEEDED");
            assertThat(followed).isEqualTo("attempt-1\nattempt-2\n");
            assertThat(server.get("/api/v1/runs/" + run + "/logs?follow=true&prefix=false", admin).text()).isEqualTo("attempt-1\nattempt-2\n");
            assertThat(server.get("/api/v1/runs/" + run + "/logs?prefix=false", admin).text()).isEqualTo("attempt-2\n"); // without follow: the current one
            assertThat(server.get("/api/v1/runs/" + run + "/logs?prefix=false&attempt=1", admin).text()).isEqualTo("attempt-1\n");
        }
    }
}
