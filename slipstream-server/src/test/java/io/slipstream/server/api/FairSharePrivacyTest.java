package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import io.slipstream.server.support.TestServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * A member of one team reads everything the fair-sharing figures reach (quotas, pools, pending queues, runs, their
 * events and wait messages, usage, metrics) while another team's quota beside theirs borrows: nothing they read names
 * the other team (docs/quotas.md, "Privacy"). What they read should not tell them the other team's weight either; it
 * does today (the disabled test below).
 *
 * <p>One tree {@code org/root} (4 GPUs) over {@code team-x/gpus} (xavier) and {@code team-y/gpus} (yolanda), 2 GPUs each.
 * yolanda borrows 2 GPUs beyond her guarantee; xavier holds three 8-GPU nodes and queues one more run, which waits for
 * his quota's fair share.
 */
class FairSharePrivacyTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static String admin;
    private static String xavier;
    private static String yolanda;
    private static String xWaiting;
    private static String yBorrowing;

    @BeforeAll
    static void start() {
        server = TestServer.startInMemory(dataDir);
        admin = server.adminToken();
        assertThat(server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: org}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-x}
                spec: {members: [xavier]}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-y}
                spec: {members: [yolanda]}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: root, workspace: org}
                spec: {min: {cpu: 8, memory: 8Gi, gpu: 4}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: gpus, workspace: team-x}
                spec: {parent: org/root, min: {cpu: 2, memory: 2Gi, gpu: 2}}
                """ + "---\n" + yQuota(3)).status()).isEqualTo(200);
        xavier = server.tokenFor("xavier");
        yolanda = server.tokenFor("yolanda");

        yBorrowing = run(yolanda, "team-y", "y-borrows", 4);
        server.awaitState(yolanda, yBorrowing, "RUNNING");
        for (int i = 0; i < 3; i++) {
            server.awaitState(xavier, run(xavier, "team-x", "x-holds-" + i, 8), "RUNNING");
        }
        xWaiting = run(xavier, "team-x", "x-waits", 8);
        Awaitility.await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(
                server.get("/api/v1/runs/" + xWaiting, xavier).json().at("/queue/reason").asString()).isEqualTo("WaitingForFairShare"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String yQuota(double weight) {
        return """
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: gpus, workspace: team-y}
                spec: {parent: org/root, min: {cpu: 2, memory: 2Gi, gpu: 2}, fairSharing: {weight: %s}}
                """.formatted(weight);
    }

    private static String run(String token, String workspace, String job, int gpus) {
        TestServer.Response created = server.post("/api/v1/runs", token, """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "%s"},
                 "spec": {"quota": "gpus", "idleResources": "Acceptable", "nodeGroups": [{"name": "main",
                  "resources": {"cpu": 1, "memory": "1Gi", "gpu": %d}, "command": ["sleep", "300"]}]}}}
                """.formatted(job, workspace, gpus));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        return created.json().get("id").asString();
    }

    /** Everything a member may read that fair sharing reaches, by what was asked. */
    private static Map<String, String> everythingReadBy(String token, String otherWorkspace, String ownWorkspace, List<String> ownRuns) {
        Map<String, String> read = new LinkedHashMap<>();
        for (String path : List.of("/api/v1/quotas", "/api/v1/quotas?workspace=" + otherWorkspace, "/api/v1/workspaces/" + ownWorkspace + "/quotas/gpus",
                "/api/v1/workspaces/" + ownWorkspace + "/quotas/gpus/pending", "/api/v1/workspaces/" + otherWorkspace + "/quotas/gpus",
                "/api/v1/workspaces/" + otherWorkspace + "/quotas/gpus/pending", "/api/v1/workspaces/org/quotas/root", "/api/v1/pools",
                "/api/v1/runs", "/api/v1/usage?by=quota", "/api/v1/usage?by=user", "/api/v1/watch?timeoutSeconds=1", "/metrics")) {
            TestServer.Response response = server.get(path, token);
            read.put(path, response.status() + " " + response.text());
        }
        for (String id : ownRuns) {
            read.put("/api/v1/runs/" + id, server.get("/api/v1/runs/" + id, token).text());
            read.put("/api/v1/runs/" + id + "/events", server.get("/api/v1/runs/" + id + "/events", token).text());
        }
        return read;
    }

    @Test
    void aMemberReadsNoNameOfTheOtherTeamAnywhereFairSharingReaches() {
        // The waiting run is told its own quota's figure: the tree above it is named by its own quota's parent already.
        assertThat(server.get("/api/v1/runs/" + xWaiting, xavier).json().at("/queue/message").asString())
                .startsWith("quota team-x/gpus holds ").contains(" times its fair share of pool tree:org/root");
        assertNamesNothingOf("team-y", everythingReadBy(xavier, "team-y", "team-x", List.of(xWaiting)));
        assertNamesNothingOf("team-x", everythingReadBy(yolanda, "team-x", "team-y", List.of(yBorrowing)));
        assertThat(server.get("/metrics", xavier).status()).as("metrics name every team's quotas").isEqualTo(403);
        assertThat(server.get("/api/v1/pools", admin).text()).as("admins see every share").contains("team-x/gpus", "team-y/gpus");
    }

    /** A path that names the other team's quotas finds none, as for quotas that do not exist (a 404 repeats what was asked). */
    private static void assertNamesNothingOf(String other, Map<String, String> read) {
        read.forEach((path, text) -> {
            if (path.contains(other)) {
                assertThat(text).as(path).matches("404 .*|200 \\{\"items\":\\[]}");
            } else {
                assertThat(text).as(path).doesNotContain(other);
            }
        });
    }

    /** What xavier reads of his quota and its pool, and what his waiting run is told. */
    private static List<String> xavierFigures() {
        JsonNode status = server.get("/api/v1/workspaces/team-x/quotas/gpus", xavier).json().get("status");
        JsonNode pool = StreamSupport.stream(server.get("/api/v1/pools", xavier).json().get("items").spliterator(), false)
                .filter(p -> p.get("name").asString().equals("tree:org/root")).findFirst().orElseThrow();
        return List.of(status.toString(), pool.toString(), server.get("/api/v1/runs/" + xWaiting, xavier).json().get("queue").toString());
    }

    /**
     * A known leak, left to a decision on what members are shown: a quota's fair share (and the "N times its fair share"
     * of a wait) is the weighted average of its level's wanting quotas' shares. Where one other team's quota competes,
     * it follows from the pool's sums (what that quota borrows over what the pool lends) and the caller's own weight:
     * here xavier reads fairShare 0.1875 (weight 3) or 0.375 (weight 1), "3.7 times" or "1.8 times", so team-y's weight
     * is (0.0625 + 0.6875) / fairShare - 1 and its share 0.0625 / weight.
     */
    @Test
    @Disabled("known leak: a level's fair share tells a member the weight and share of the one other team's quota that competes at its level")
    void aMemberCannotTellTheOtherTeamsWeight() {
        List<String> before = xavierFigures();
        double share = server.get("/api/v1/workspaces/team-y/quotas/gpus", admin).json().at("/status/weightedShare").asDouble();
        try {
            assertThat(server.post("/api/v1/apply", admin, yQuota(1)).status()).isEqualTo(200);
            Awaitility.await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(server.get("/api/v1/workspaces/team-y/quotas/gpus", admin)
                    .json().at("/status/weightedShare").asDouble()).isCloseTo(share * 3, offset(1e-5)));
            Awaitility.await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(
                    server.get("/api/v1/runs/" + xWaiting, admin).json().at("/queue/reason").asString()).isEqualTo("WaitingForFairShare"));
            assertThat(xavierFigures()).as("team-y's weight went from 3 to 1").isEqualTo(before);
        } finally {
            assertThat(server.post("/api/v1/apply", admin, yQuota(3)).status()).isEqualTo(200);
        }
    }
}
