package io.slipstream.server.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.codec.Json;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.server.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A server running as root runs every job under a uid of its own: a member cannot read the admin token (needs root). */
class IsolationTest {
    @TempDir
    Path parent;

    @Test
    void aJobCannotReadTheAdminTokenOrTheStore() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "switching users needs root");
        Files.setPosixFilePermissions(parent, PosixFilePermissions.fromString("rwx--x--x"));
        try (TestServer server = TestServer.start(parent.resolve("data"))) {
            String admin = server.adminToken();
            server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\nspec: {members: [alice]}\n");
            String alice = server.tokenFor("alice");
            String script = "id -u; cat " + server.server().adminTokenFile() + " || echo no-token; ls " + parent.resolve("data/store")
                    + " || echo no-store; cat ../../../../../admin.token || echo no-relative-token";
            String job = """
                    {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "snoop", "workspace": "w"},
                     "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["sh", "-c", %s]}]}}}
                    """.formatted(Json.mapper().writeValueAsString(script));
            String run = server.post("/api/v1/runs", alice, job).json().get("id").asString();
            server.awaitState(alice, run, "SUCCEEDED");
            String logs = server.get("/api/v1/runs/" + run + "/logs?prefix=false&stream=stdout", alice).text();
            assertThat(logs).contains("no-token", "no-store", "no-relative-token").doesNotContain(admin);
            assertThat(Integer.parseInt(logs.lines().findFirst().orElseThrow())).isGreaterThanOrEqualTo(Isolation.DEFAULT_FIRST_UID);
        }
    }
}
