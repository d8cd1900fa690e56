package io.slipstream.server.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.server.support.TestServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where instances run as the server's user, the run says what stopping it cannot guarantee. */
class ContainmentTest {
    @TempDir
    Path dataDir;

    private static final String JOB = """
            {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "plain", "workspace": "w"},
             "spec": {"nodeGroups": [{"name": "main", "replicas": 1, "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["true"]}]}}}
            """;

    @Test
    void withoutARunUidTheRunsEventsSayThatDetachedProcessesCanOutliveIt() {
        try (TestServer server = TestServer.start(dataDir, config -> config.withExecutor(config.executor(io.slipstream.executor.local.LocalExecutorSettings.class).withIsolation(Isolation.Mode.off)))) {
            String admin = server.adminToken();
            server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
            String run = server.post("/api/v1/runs", admin, JOB).json().get("id").asString();
            server.awaitState(admin, run, "SUCCEEDED");
            assertThat(server.get("/api/v1/runs/" + run + "/events", admin).text()).contains("not contained");
        }
    }

    @Test
    void withARunUidNothingIsSaid() {
        org.junit.jupiter.api.Assumptions.assumeTrue(Isolation.runningAsRoot(), "per-run uids need root");
        try (TestServer server = TestServer.start(dataDir)) {
            String admin = server.adminToken();
            server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
            String run = server.post("/api/v1/runs", admin, JOB).json().get("id").asString();
            server.awaitState(admin, run, "SUCCEEDED");
            assertThat(server.get("/api/v1/runs/" + run + "/events", admin).text()).contains("InstanceStarted").doesNotContain("not contained");
        }
    }
}
