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
        server = TestServer.startInMemory(dataDir);
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
    void aFairSharingWeightIsStoredAndRefusedWhereItIsNegativeOrDoesNothing() {
        assertThat(problems(server.post("/api/v1/apply", admin, quota("team-b", "fair-child", "{min: {gpu: 1}, parent: fair-root, fairSharing: {weight: -1}}"))))
                .contains("spec.fairSharing.weight: must not be negative (is -1)");
        assertThat(problems(server.post("/api/v1/apply", admin, quota("team-b", "fair-child", "{min: {gpu: 1}, parent: fair-root, fairSharing: {weight: two}}"))))
                .contains("spec.fairSharing.weight: must be a number, not a string");
        assertThat(problems(server.post("/api/v1/apply", admin, quota("team-b", "fair-root", "{min: {gpu: 2}, fairSharing: {weight: 2}}"))))
                .singleElement().asString().startsWith("spec.fairSharing.weight: has no effect on a General quota without a parent");

        assertThat(server.post("/api/v1/apply", admin, quota("team-b", "fair-root", "{min: {gpu: 2}}") + "---\n"
                + quota("team-b", "fair-child", "{min: {gpu: 1}, parent: fair-root, fairSharing: {weight: 0.5}}")).status()).isEqualTo(200);
        JsonNode child = server.get("/api/v1/workspaces/team-b/quotas/fair-child", admin).json();
        assertThat(child.at("/spec/fairSharing/weight").asDouble()).isEqualTo(0.5);
        assertThat(child.at("/status/weightedShare").asDouble()).isZero();
        assertThat(server.get("/api/v1/workspaces/team-b/quotas/fair-root", admin).json().at("/spec").has("fairSharing")).isFalse();

        // A pool shared with another team: alice sees it, and her own quota's share in it, never team-b's.
        assertThat(server.post("/api/v1/apply", admin, quota("team-a", "fair-a", "{min: {gpu: 1}, parent: team-b/fair-root, fairSharing: {weight: 2}}"))
                .status()).isEqualTo(200);
        JsonNode shared = java.util.stream.StreamSupport.stream(server.get("/api/v1/pools", server.tokenFor("alice")).json().get("items").spliterator(), false)
                .filter(p -> p.get("name").asString().equals("tree:team-b/fair-root")).findFirst().orElseThrow();
        assertThat(shared.get("shares")).extracting(s -> s.get("quota").asString()).containsExactly("team-a/fair-a");
        assertThat(shared.get("shares").get(0).get("weight").asDouble()).isEqualTo(2);
        assertThat(server.get("/api/v1/pools", admin).json().toString()).contains("team-b/fair-child", "team-b/fair-root", "team-a/fair-a");
        assertThat(server.call("DELETE", "/api/v1/workspaces/team-a/quotas/fair-a", admin, null, null).status()).isEqualTo(204);
        assertThat(server.call("DELETE", "/api/v1/workspaces/team-b/quotas/fair-child", admin, null, null).status()).isEqualTo(204);
        assertThat(server.call("DELETE", "/api/v1/workspaces/team-b/quotas/fair-root", admin, null, null).status()).isEqualTo(204);
    }

    @Test
    void membersCannotCreateQuotas() {
        String alice = server.tokenFor("alice");
        assertThat(server.post("/api/v1/apply", alice, quota("team-a", "mine", "{min: {gpu: 1}}")).status()).isEqualTo(403);
    }

    private static String run(String token, String workspace, String job, String extra, int gpus) {
        Response created = server.post("/api/v1/runs", token, """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "%s"},
                 "spec": {"quota": "train", %s "nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi", "gpu": %d},
                  "command": ["sleep", "300"]}]}}}
                """.formatted(job, workspace, extra, gpus));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        return created.json().get("id").asString();
    }

    @Test
    void aQuotaShowsWhatItsRunsUseBorrowAndAskForLiveAndItsQueueInOrder() {
        server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-c}
                spec: {members: [carol]}
                """);
        assertThat(server.post("/api/v1/apply", admin, quota("team-c", "train", "{min: {cpu: 8, memory: 8Gi, gpu: 4}}")).status()).isEqualTo(200);
        String carol = server.tokenFor("carol");
        String guaranteed = run(carol, "team-c", "own", "", 4);
        String borrowing = run(carol, "team-c", "extra", "\"idleResources\": \"Acceptable\",", 2);
        server.awaitState(carol, guaranteed, "RUNNING");
        assertThat(server.get("/api/v1/runs/" + guaranteed, admin).json().get("submittedBy").asString()).as("accounting needs who").isEqualTo("carol");
        server.awaitState(carol, borrowing, "RUNNING");
        String first = run(carol, "team-c", "waits", "\"priority\": 5,", 4);
        String second = run(carol, "team-c", "waits-too", "", 2);

        JsonNode status = server.get("/api/v1/workspaces/team-c/quotas/train", carol).json().get("status");
        assertThat(status.get("pool").asString()).isEqualTo("tree:team-c/train");
        assertThat(status.at("/used/gpu").asInt()).isEqualTo(6);
        assertThat(status.at("/inQuota/gpu").asInt()).isEqualTo(4);
        assertThat(status.at("/borrowed/gpu").asInt()).isEqualTo(2);
        assertThat(status.at("/used/cpu").asString()).isEqualTo("2");
        assertThat(status.at("/lent/gpu").asInt()).isZero();
        assertThat(status.at("/pending/gpu").asInt()).isEqualTo(6);
        assertThat(status.get("admittedRuns").asInt()).isEqualTo(2);
        assertThat(status.get("pendingRuns").asInt()).isEqualTo(2);
        assertThat(status.get("runs").asInt()).as("what its runs went through stays beside the live figures").isEqualTo(4);
        assertThat(status.get("weightedShare").asDouble()).as("it holds 2 GPUs beyond its guarantee").isPositive();

        JsonNode listed = server.get("/api/v1/quotas?workspace=team-c", carol).json().get("items").get(0);
        assertThat(listed.at("/status/used/gpu").asInt()).isEqualTo(6);

        // The queue in the order the scheduler takes it: priority first; why each waits once a cycle has seen it.
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).untilAsserted(() -> {
            JsonNode pending = server.get("/api/v1/workspaces/team-c/quotas/train/pending", carol).json().get("items");
            assertThat(pending).extracting(p -> p.get("id").asString()).containsExactly(first, second);
            assertThat(pending.get(0).get("reason")).as(pending.toString()).isNotNull();
            assertThat(pending.get(0).get("position").asInt()).isEqualTo(1);
            assertThat(pending.get(0).at("/resources/gpu").asInt()).isEqualTo(4);
        });

        // Another team sees neither the queue nor the pool; the pool of runs without a quota is everyone's.
        String alice = server.tokenFor("alice");
        assertThat(server.get("/api/v1/workspaces/team-c/quotas/train/pending", alice).status()).isEqualTo(404);
        assertThat(server.get("/api/v1/pools", alice).json().get("items")).extracting(p -> p.get("name").asString()).doesNotContain("tree:team-c/train");
        JsonNode pool = server.get("/api/v1/pools", carol).json().get("items");
        assertThat(pool).extracting(p -> p.get("name").asString()).contains("tree:team-c/train");
        JsonNode train = java.util.stream.StreamSupport.stream(pool.spliterator(), false).filter(p -> p.get("name").asString().equals("tree:team-c/train"))
                .findFirst().orElseThrow();
        assertThat(train.at("/lendable/gpu").asInt()).as(train.toString()).isPositive();
        assertThat(train.get("shares")).extracting(s -> s.get("quota").asString()).containsExactly("team-c/train");
        assertThat(train.get("shares").get(0).get("weightedShare").asDouble()).isEqualTo(status.get("weightedShare").asDouble());
        assertThat(train.get("shares").get(0).get("fairShare").asDouble()).as("it borrows alone: all of it is its fair share")
                .isEqualTo(status.get("fairShare").asDouble()).isEqualTo(status.get("weightedShare").asDouble());

        // The same figures for Prometheus, with what the loop did to get there.
        String metrics = server.get("/metrics", admin).text();
        assertThat(metrics).contains("slipstream_quota_used{pool=\"tree:team-c/train\",quota=\"team-c/train\",resource=\"gpu\"} 6.0")
                .contains("slipstream_quota_borrowed{pool=\"tree:team-c/train\",quota=\"team-c/train\",resource=\"gpu\"} 2.0")
                .contains("slipstream_quota_runs{pool=\"tree:team-c/train\",quota=\"team-c/train\",status=\"pending\"} 2.0")
                .contains("slipstream_quota_weighted_share{pool=\"tree:team-c/train\",quota=\"team-c/train\"} ")
                .contains("slipstream_admissions_total{quota=\"team-c/train\",resources=\"InQuota\"} 1.0")
                .contains("slipstream_admissions_total{quota=\"team-c/train\",resources=\"NotInQuota\"} 1.0")
                .contains("slipstream_admission_wait_seconds_count{quota=\"team-c/train\"} 2")
                .contains("slipstream_api_request_seconds_count{code=\"201\",method=\"POST\",route=\"/api/v1/runs\"}")
                .contains("slipstream_store_operation_seconds_count{operation=\"runs.active\",outcome=\"ok\"}")
                .contains("slipstream_cycle_duration_seconds_bucket").contains("slipstream_leader 1.0")
                .doesNotContain("/api/v1/runs/" + guaranteed);
        assertThat(server.get("/metrics", carol).status()).isEqualTo(403);

        for (String id : List.of(guaranteed, borrowing, first, second)) {
            server.post("/api/v1/runs/" + id + "/cancel", carol, "{}");
        }
        for (String id : List.of(guaranteed, borrowing, first, second)) {
            server.awaitRun(carol, id, r -> r.get("state").asString().equals("CANCELLED"));
        }
        assertThat(server.get("/api/v1/workspaces/team-c/quotas/train", carol).json().at("/status/used/gpu").asInt()).isZero();
        // Counted once the transaction that ended the run commits: a run may read CANCELLED an instant before its count.
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).untilAsserted(() -> assertThat(server.get("/metrics", admin).text())
                .contains("slipstream_runs_finished_total{quota=\"team-c/train\",state=\"CANCELLED\"} 4.0"));
    }

    @Test
    void aRunThatNoNodeCouldEverHoldIsRefusedAndOneItsQuotaKeepsWaitingForeverIsAcceptedWithAWarning() {
        server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-d}
                spec: {members: [dana]}
                """);
        assertThat(server.post("/api/v1/apply", admin, quota("team-d", "train", "{min: {cpu: 8, memory: 8Gi, gpu: 4}}")).status()).isEqualTo(200);
        String dana = server.tokenFor("dana");
        String job = """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "team-d"},
                 "spec": {%s "nodeGroups": [{"name": "main", "replicas": %d, "resources": {"cpu": 1, "memory": "1Gi", "gpu": %d}, "command": ["true"]}]}}}
                """;
        Response tooBig = server.post("/api/v1/runs", dana, job.formatted("too-big", "", 1, 9));
        assertThat(tooBig.status()).isEqualTo(400);
        assertThat(problems(tooBig)).singleElement().asString().startsWith("spec.nodeGroups: this run could never start: no node can ever hold")
                .contains("node-1");
        assertThat(server.get("/api/v1/workspaces/team-d/jobs/too-big", dana).status()).as("nothing of it was kept").isEqualTo(404);
        Response overQuotaToo = server.post("/api/v1/runs", dana, job.formatted("gang", "\"quota\": \"train\",", 2, 16));
        assertThat(overQuotaToo.status()).as("the node size is said first: a larger quota would never let it run").isEqualTo(400);
        assertThat(problems(overQuotaToo)).singleElement().asString().contains("no node can ever hold its instance main (cpu=1 memory=1Gi gpu=16)");
        Response tooMany = server.post("/api/v1/runs", dana, job.formatted("too-many", "", 5, 8));
        assertThat(problems(tooMany)).singleElement().asString().contains("more than all schedulable nodes have");

        Response trapped = server.post("/api/v1/runs", dana, job.formatted("over-quota", "\"quota\": \"train\",", 1, 6));
        assertThat(trapped.status()).as(trapped.text()).isEqualTo(201);
        assertThat(trapped.headers().allValues("Warning")).singleElement().asString().startsWith("299 slipstream \"this run cannot start even with")
                .contains("ExceedsGuarantee").contains("more than its quota guarantees");
        server.post("/api/v1/runs/" + trapped.json().get("id").asString() + "/cancel", dana, "{}");
        // The check runs on the quotas as they are now, not as they were at the last check.
        assertThat(server.post("/api/v1/apply", admin, quota("team-d", "train", "{min: {cpu: 8, memory: 8Gi, gpu: 8}}")).status()).isEqualTo(200);
        Response fits = server.post("/api/v1/runs", dana, job.formatted("over-quota", "\"quota\": \"train\",", 1, 6));
        assertThat(fits.status()).as(fits.text()).isEqualTo(201);
        assertThat(fits.headers().allValues("Warning")).as("the quota grew").isEmpty();
        server.post("/api/v1/runs/" + fits.json().get("id").asString() + "/cancel", dana, "{}");
    }
}
