package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** Jobs and their runs through HTTP: overrides, idempotent creation, filters by time, limits and schedules at apply. */
class RunLifecycleApiTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static String alice;

    private static final String SETUP = """
            apiVersion: slipstream/v1
            kind: Workspace
            metadata: {name: team-a}
            spec: {members: [alice]}
            ---
            apiVersion: slipstream/v1
            kind: Shape
            metadata: {name: gpu.small}
            spec: {cpu: 4, memory: 16Gi, gpu: 1}
            ---
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: shaped, workspace: team-a}
            spec:
              nodeGroups:
                - {name: worker, shape: gpu.small, command: ["true"]}
            ---
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: train, workspace: team-a}
            spec:
              nodeGroups:
                - {name: worker, replicas: 1, resources: {cpu: 1, memory: 1Gi}, command: ["true"], env: {LR: "0.01"}}
            """;

    @BeforeAll
    static void start() {
        server = TestServer.startInMemory(dataDir);
        assertThat(server.post("/api/v1/apply", server.adminToken(), SETUP).status()).isEqualTo(200);
        alice = server.tokenFor("alice");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static Response createRun(String body, String key) {
        return server.call("POST", "/api/v1/runs", alice, body, "application/json", key == null ? Map.of() : Map.of("Idempotency-Key", key));
    }

    private static String runOf(String job, Map<String, Object> overrides) {
        return Json.mapper().writeValueAsString(Map.of("workspace", "team-a", "job", job, "overrides", overrides));
    }

    @Test
    void overridesChangeOnlyThatRunAndAreShownWithIt() {
        Response created = createRun(runOf("train", Map.of("nodeGroups.worker.env.LR", "0.1", "priority", 5, "maxRuntime", "2h")), null);
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        JsonNode run = server.get("/api/v1/runs/" + created.json().get("id").asString(), alice).json();
        assertThat(run.get("overrides").get("nodeGroups.worker.env.LR").asString()).isEqualTo("0.1");
        assertThat(run.get("priority").asInt()).isEqualTo(5);
        assertThat(run.get("spec").get("spec").get("maxRuntime").asString()).isEqualTo("2h");
        assertThat(run.get("spec").get("spec").get("nodeGroups").get(0).get("env").get("LR").asString()).isEqualTo("0.1");
        assertThat(run.get("jobVersion").asLong()).isEqualTo(1);

        JsonNode job = server.get("/api/v1/workspaces/team-a/jobs/train", alice).json();
        assertThat(job.get("spec").get("nodeGroups").get(0).get("env").get("LR").asString()).as("the job is unchanged").isEqualTo("0.01");
    }

    @Test
    void overridingOneResourceOfAShapedGroupKeepsTheShapesOthers() {
        Response created = createRun(runOf("shaped", Map.of("nodeGroups.worker.resources.gpu", 2)), null);
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        JsonNode resources = created.json().get("spec").get("spec").get("nodeGroups").get(0).get("resources");
        assertThat(resources.get("gpu").asInt()).isEqualTo(2);
        assertThat(resources.get("cpu").asString()).isEqualTo("4");
        assertThat(resources.get("memory").asString()).isEqualTo("16Gi");
    }

    @Test
    void badOverridesAreRejectedNamingTheOverride() {
        int before = countOf("train");
        Response unknownGroup = createRun(runOf("train", Map.of("nodeGroups.ps.replicas", 2)), null);
        assertThat(unknownGroup.status()).isEqualTo(400);
        assertThat(fields(unknownGroup)).contains("overrides.nodeGroups.ps.replicas");
        assertThat(unknownGroup.text()).contains("no node group 'ps'");

        Response badValue = createRun(runOf("train", Map.of("nodeGroups.worker.replicas", "many")), null);
        assertThat(badValue.status()).isEqualTo(400);
        assertThat(fields(badValue)).singleElement().asString().startsWith("overrides.");

        Response tooLong = createRun(runOf("train", Map.of("maxRuntime", "31d")), null);
        assertThat(tooLong.status()).isEqualTo(400);
        assertThat(tooLong.text()).contains("maxRuntime");

        Response notAValue = createRun("{\"workspace\": \"team-a\", \"job\": \"train\", \"overrides\": {\"priority\": null}}", null);
        assertThat(notAValue.status()).isEqualTo(400);
        assertThat(fields(notAValue)).containsExactly("overrides.priority");

        Response groupTooLong = createRun(runOf("train", Map.of("nodeGroups.worker.maxRuntime", "31d")), null);
        assertThat(groupTooLong.status()).isEqualTo(400);
        assertThat(fields(groupTooLong)).containsExactly("overrides.nodeGroups.worker.maxRuntime");
        assertThat(countOf("train")).as("nothing was created by a rejected request").isEqualTo(before);
    }

    @Test
    void theSameIdempotencyKeyReturnsTheSameRunAndSaysSo() {
        String body = runOf("train", Map.of());
        Response first = createRun(body, "key-sequential");
        Response again = createRun(body, "key-sequential");
        assertThat(first.status()).isEqualTo(201);
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(again.json().get("id").asString()).isEqualTo(first.json().get("id").asString());

        Response otherRequest = createRun(runOf("train", Map.of("priority", 3)), "key-sequential");
        assertThat(otherRequest.status()).isEqualTo(422);
        assertThat(otherRequest.json().get("code").asString()).isEqualTo("IDEMPOTENCY_KEY_REUSED");

        Response badKey = createRun(body, "has space");
        assertThat(badKey.status()).isEqualTo(400);
        assertThat(fields(badKey)).containsExactly("Idempotency-Key");
    }

    @Test
    void concurrentDuplicateRequestsCreateOneRun() throws Exception {
        int before = countOf("train");
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<Response>> responses = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Callable<Response> call = () -> {
                    go.await();
                    return createRun(runOf("train", Map.of()), "key-concurrent");
                };
                responses.add(pool.submit(call));
            }
            go.countDown();
            Set<String> ids = new HashSet<>();
            int created = 0;
            for (Future<Response> future : responses) {
                Response response = future.get();
                assertThat(response.status()).as(response.text()).isIn(200, 201);
                created += response.status() == 201 ? 1 : 0;
                ids.add(response.json().get("id").asString());
            }
            assertThat(ids).hasSize(1);
            assertThat(created).isEqualTo(1);
            assertThat(countOf("train")).isEqualTo(before + 1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void submittingADocumentIsIdempotentToo() {
        String body = Json.mapper().writeValueAsString(Map.of("jobDocument", Json.yaml().readTree("""
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: one-shot, workspace: team-a}
                spec:
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: ["true"]}
                """)));
        Response first = createRun(body, "submit-key");
        Response lostResponseRetry = createRun(body, "submit-key");
        assertThat(first.status()).isEqualTo(201);
        assertThat(lostResponseRetry.status()).isEqualTo(200);
        assertThat(lostResponseRetry.json().get("id").asString()).isEqualTo(first.json().get("id").asString());
        assertThat(countOf("one-shot")).isEqualTo(1);
    }

    @Test
    void runsAreFilteredByCreationTime() {
        Instant before = Instant.now().minusMillis(1);
        String id = createRun(runOf("train", Map.of()), null).json().get("id").asString();
        List<String> since = ids(server.get("/api/v1/runs?job=train&since=" + before, alice).json());
        assertThat(since).contains(id);
        List<String> until = ids(server.get("/api/v1/runs?job=train&until=" + before, alice).json());
        assertThat(until).doesNotContain(id);
        assertThat(ids(server.get("/api/v1/runs?job=train&since=1h", alice).json())).contains(id);

        Response bad = server.get("/api/v1/runs?since=yesterday", alice);
        assertThat(bad.status()).isEqualTo(400);
        assertThat(fields(bad)).containsExactly("since");
    }

    @Test
    void schedulesAndRuntimesAreCheckedWhenAJobIsApplied() {
        Response response = server.post("/api/v1/apply", alice, """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: nightly, workspace: team-a}
                spec:
                  maxRuntime: 31d
                  schedule: {cron: "0 25 * * *", timeZone: Mars/Olympus, concurrencyPolicy: Sometimes}
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: ["true"], maxRuntime: 40d}
                """);
        assertThat(response.status()).isEqualTo(400);
        assertThat(fields(response)).contains("spec.maxRuntime", "spec.schedule.cron", "spec.schedule.timeZone",
                "spec.schedule.concurrencyPolicy", "spec.nodeGroups[0].maxRuntime");
        assertThat(server.get("/api/v1/workspaces/team-a/jobs/nightly", alice).status()).isEqualTo(404);

        Response good = server.post("/api/v1/apply", alice, """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: nightly, workspace: team-a}
                spec:
                  schedule: {cron: "0 2 * * *", timeZone: Europe/Berlin, concurrencyPolicy: Forbid, startingDeadline: 1h}
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: ["true"]}
                """);
        assertThat(good.status()).as(good.text()).isEqualTo(200);
        JsonNode schedule = server.get("/api/v1/workspaces/team-a/jobs/nightly", alice).json().get("spec").get("schedule");
        assertThat(schedule.get("timeZone").asString()).isEqualTo("Europe/Berlin");
        assertThat(schedule.get("concurrencyPolicy").asString()).isEqualTo("Forbid");
    }

    private static List<String> fields(Response response) {
        assertThat(response.json().has("problems")).as(response.text()).isTrue();
        return StreamSupport.stream(response.json().get("problems").spliterator(), false).map(p -> p.get("field").asString()).toList();
    }

    private static List<String> ids(JsonNode list) {
        return StreamSupport.stream(list.get("items").spliterator(), false).map(r -> r.get("id").asString()).toList();
    }

    private static List<String> runsOf(String job) {
        return ids(server.get("/api/v1/runs?job=" + job + "&limit=1000", alice).json());
    }

    private static int countOf(String job) {
        return runsOf(job).size();
    }
}
