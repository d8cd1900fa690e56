package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** Quotas are checked against each other and against the cluster (4 nodes of 32 cpu, 256Gi, 8 sim-gpu GPUs). */
class QuotaApiTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static String admin;

    @BeforeAll
    static void start() {
        server = TestServer.start(dataDir);
        admin = server.adminToken();
        assertThat(server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-a}
                spec: {members: [alice]}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-b}
                """).status()).isEqualTo(200);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String quota(String workspace, String name, String spec) {
        return "apiVersion: slipstream/v1\nkind: Quota\nmetadata: {name: " + name + ", workspace: " + workspace + "}\nspec: " + spec + "\n";
    }

    private static List<String> problems(Response response) {
        List<String> problems = new ArrayList<>();
        JsonNode list = response.json().get("problems");
        if (list != null) {
            list.forEach(p -> problems.add(p.get("field").asString() + ": " + p.get("message").asString()));
        }
        return problems;
    }

    @Test
    void guaranteesBeyondTheClusterAreRefusedUnlessOvercommitted() {
        Response tooMuch = server.post("/api/v1/apply", admin, quota("team-a", "huge", "{min: {gpu: 40}}"));
        assertThat(tooMuch.status()).isEqualTo(400);
        assertThat(problems(tooMuch)).singleElement().asString().startsWith("spec.min: General quotas would be guaranteed")
                .contains("but the cluster has cpu 128, memory 1Ti, 32 GPUs").contains("overcommit");
        assertThat(server.get("/api/v1/workspaces/team-a/quotas/huge", admin).status()).isEqualTo(404);

        assertThat(server.post("/api/v1/apply", admin, quota("team-a", "huge", "{min: {gpu: 40}, overcommit: true}")).status()).isEqualTo(200);
        server.call("DELETE", "/api/v1/workspaces/team-a/quotas/huge", admin, null, null);
    }

    @Test
    void dedicatedGuaranteesMustFitTheNodesOfTheirModel() {
        Response none = server.post("/api/v1/apply", admin, quota("team-a", "h100", "{type: Dedicated, gpuModel: h100, min: {gpu: 8}}"));
        assertThat(problems(none)).singleElement().asString().contains("Dedicated h100 quotas would be guaranteed").contains("0 GPUs");
        assertThat(server.post("/api/v1/apply", admin, quota("team-a", "sim", "{type: Dedicated, gpuModel: sim-gpu, min: {gpu: 8}}")).status())
                .isEqualTo(200);
        server.call("DELETE", "/api/v1/workspaces/team-a/quotas/sim", admin, null, null);
    }

    @Test
    void treesNeedTheirParentAndChildrenWithinIt() {
        Response orphan = server.post("/api/v1/apply", admin, quota("team-a", "child", "{parent: org/missing, min: {gpu: 1}}"));
        assertThat(problems(orphan)).singleElement().asString().isEqualTo("spec.parent: quota 'org/missing' does not exist");

        Response tooBig = server.post("/api/v1/apply", admin, quota("team-a", "root", "{min: {gpu: 8}}") + "---\n"
                + quota("team-a", "left", "{parent: root, min: {gpu: 6}}") + "---\n" + quota("team-b", "right", "{parent: team-a/root, min: {gpu: 6}}"));
        assertThat(problems(tooBig)).anyMatch(p -> p.contains("the quotas under 'team-a/root' would be guaranteed") && p.contains("12"));
        assertThat(server.get("/api/v1/workspaces/team-a/quotas/root", admin).status()).as("nothing of the batch is kept").isEqualTo(404);

        Response fits = server.post("/api/v1/apply", admin, quota("team-b", "right", "{parent: team-a/root, min: {gpu: 2}}") + "---\n"
                + quota("team-a", "root", "{min: {gpu: 8}}") + "---\n" + quota("team-a", "left", "{parent: root, min: {gpu: 6}}"));
        assertThat(fits.status()).as("documents may come in any order: %s", fits.text()).isEqualTo(200);
    }

    @Test
    void jobsNameAQuotaOfTheirWorkspaceAndAGracePeriodWithinTheMaximum() {
        server.post("/api/v1/apply", admin, quota("team-a", "gpus", "{min: {gpu: 4}}"));
        String job = """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: j, workspace: team-a}
                spec:
                  quota: %s
                  preemptionGracePeriod: %s
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: ["true"]}
                """;
        Response wrong = server.post("/api/v1/apply", admin, job.formatted("nope", "1h"));
        assertThat(problems(wrong)).containsExactlyInAnyOrder("spec.quota: workspace 'team-a' has no quota 'nope'",
                "spec.preemptionGracePeriod: must be at most 10m (this installation's maximum)");
        assertThat(server.post("/api/v1/apply", admin, job.formatted("gpus", "90s")).status()).isEqualTo(200);
        Response disabledWithoutQuota = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: k, workspace: team-a}
                spec:
                  idleResources: Disabled
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: ["true"]}
                """);
        assertThat(problems(disabledWithoutQuota)).singleElement().asString().startsWith("spec.idleResources: Disabled needs a quota");
    }

    @Test
    void membersCannotCreateQuotas() {
        String alice = server.tokenFor("alice");
        assertThat(server.post("/api/v1/apply", alice, quota("team-a", "mine", "{min: {gpu: 1}}")).status()).isEqualTo(403);
    }
}
