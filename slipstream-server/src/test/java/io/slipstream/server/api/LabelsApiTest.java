package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.RunState;
import io.slipstream.server.support.TestServer;
import io.slipstream.testing.NoProcessLeftBehind;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Labels through the API: a job's labels go to its runs, the run request's on top; runs and jobs are selected with
 * {@code labelSelector}; bad labels and bad selectors are 400s naming the field or the parameter.
 */
@ExtendWith(NoProcessLeftBehind.class)
class LabelsApiTest {
    @TempDir
    Path dataDir;

    private static String job(String name, String labels) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: demo, labels: %s}
                spec:
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sh, -c, "exit 0"]}
                """.formatted(name, labels);
    }

    private static List<String> ids(TestServer server, String token, String path) {
        List<String> ids = new ArrayList<>();
        TestServer.Response response = server.get(path, token);
        assertThat(response.status()).as(response.text()).isEqualTo(200);
        response.json().get("items").forEach(item -> ids.add(item.has("id") ? item.get("id").asString() : item.get("metadata").get("name").asString()));
        return ids;
    }

    private static String q(String selector) {
        return URLEncoder.encode(selector, StandardCharsets.UTF_8);
    }

    @Test
    void runsCarryTheirJobsLabelsWithTheirOwnOnTopAndAreSelectedByThem() {
        try (TestServer server = TestServer.start(dataDir)) {
            String admin = server.adminToken();
            TestServer.Response applied = server.post("/api/v1/apply", admin, """
                    apiVersion: slipstream/v1
                    kind: Workspace
                    metadata: {name: demo}
                    ---
                    """ + job("bert", "{team: nlp, tier: gold}") + "---\n" + job("resnet", "{team: vision}"));
            assertThat(applied.status()).as(applied.text()).isEqualTo(200);
            List<String> runs = new ArrayList<>();
            try {
                JsonNode first = server.post("/api/v1/runs", admin, Json.mapper().writeValueAsString(
                        Map.of("workspace", "demo", "job", "bert", "labels", Map.of("tier", "silver", "example.com/sweep", "lr-0.1")))).json();
                runs.add(first.get("id").asString());
                assertThat(first.get("labels").properties()).extracting(Map.Entry::getKey).containsExactly("example.com/sweep", "team", "tier");
                assertThat(first.get("labels").get("tier").asString()).as("the run's own label wins").isEqualTo("silver");
                JsonNode second = server.post("/api/v1/runs", admin, Json.mapper().writeValueAsString(Map.of("workspace", "demo", "job", "bert"))).json();
                runs.add(second.get("id").asString());
                assertThat(second.get("labels").get("tier").asString()).isEqualTo("gold");
                JsonNode third = server.post("/api/v1/runs", admin, Json.mapper().writeValueAsString(Map.of("workspace", "demo", "job", "resnet"))).json();
                runs.add(third.get("id").asString());
                assertThat(server.get("/api/v1/runs/" + runs.get(0), admin).json().get("labels").get("example.com/sweep").asString()).isEqualTo("lr-0.1");

                assertThat(ids(server, admin, "/api/v1/runs?labelSelector=" + q("team=nlp"))).containsExactly(runs.get(1), runs.get(0));
                assertThat(ids(server, admin, "/api/v1/runs?labelSelector=" + q("team=nlp,tier!=silver"))).containsExactly(runs.get(1));
                assertThat(ids(server, admin, "/api/v1/runs?labelSelector=" + q("tier notin (gold,silver)"))).containsExactly(runs.get(2));
                assertThat(ids(server, admin, "/api/v1/runs?limit=1&labelSelector=" + q("team in (nlp, vision)"))).containsExactly(runs.get(2));
                assertThat(ids(server, admin, "/api/v1/runs?labelSelector=" + q("!example.com/sweep") + "&job=bert")).containsExactly(runs.get(1));
                assertThat(ids(server, admin, "/api/v1/jobs?labelSelector=" + q("team=vision"))).containsExactly("resnet");
                assertThat(ids(server, admin, "/api/v1/jobs?workspace=demo&labelSelector=" + q("tier"))).containsExactly("bert");
                assertThat(server.get("/api/v1/workspaces/demo/jobs/bert", admin).json().get("metadata").get("labels").get("team").asString())
                        .isEqualTo("nlp");

                // A change of the job's labels alone is a new version; runs made after it get them, earlier runs keep theirs.
                TestServer.Response relabelled = server.post("/api/v1/apply", admin, job("resnet", "{team: vision, tier: bronze}"));
                assertThat(relabelled.json().get("items").get(0).get("action").asString()).as(relabelled.text()).isEqualTo("updated");
                assertThat(server.post("/api/v1/apply", admin, job("resnet", "{tier: bronze, team: vision}")).json().get("items").get(0)
                        .get("action").asString()).isEqualTo("unchanged");
                JsonNode fourth = server.post("/api/v1/runs", admin, Json.mapper().writeValueAsString(Map.of("workspace", "demo", "job", "resnet"))).json();
                runs.add(fourth.get("id").asString());
                assertThat(fourth.get("labels").get("tier").asString()).isEqualTo("bronze");
                assertThat(server.get("/api/v1/runs/" + runs.get(2), admin).json().get("labels").has("tier")).isFalse();
                assertThat(ids(server, admin, "/api/v1/runs?labelSelector=" + q("tier=bronze"))).containsExactly(runs.get(3));
            } finally {
                for (String id : runs) {
                    server.awaitRun(admin, id, r -> RunState.valueOf(r.get("state").asString()).isFinal());
                }
            }
        }
    }

    @Test
    void badLabelsAndBadSelectorsAre400sNamingTheFieldOrTheParameter() {
        try (TestServer server = TestServer.start(dataDir)) {
            String admin = server.adminToken();
            assertThat(server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: demo}\n---\n"
                    + job("bert", "{team: nlp}")).status()).isEqualTo(200);
            TestServer.Response badJob = server.post("/api/v1/apply", admin, job("bad", "{\"-x\": a, ok: \"b c\"}"));
            assertThat(badJob.status()).isEqualTo(400);
            assertThat(badJob.text()).contains("metadata.labels.-x", "metadata.labels.ok");

            TestServer.Response badRun = server.post("/api/v1/runs", admin, Json.mapper().writeValueAsString(
                    Map.of("workspace", "demo", "job", "bert", "labels", Map.of("a/b/c", "x", "n", 5))));
            assertThat(badRun.status()).isEqualTo(400);
            assertThat(badRun.json().get("problems")).extracting(p -> p.get("field").asString()).containsExactlyInAnyOrder("labels.a/b/c", "labels.n");

            for (String path : List.of("/api/v1/runs", "/api/v1/jobs")) {
                TestServer.Response bad = server.get(path + "?labelSelector=" + q("team in nlp"), admin);
                assertThat(bad.status()).as(bad.text()).isEqualTo(400);
                JsonNode problem = bad.json().get("problems").get(0);
                assertThat(problem.get("field").asString()).isEqualTo("labelSelector");
                assertThat(problem.get("message").asString()).isEqualTo("at character 9: '(' after 'in' expected, not 'n'");
            }
            assertThat(ids(server, admin, "/api/v1/runs")).as("a refused run changes nothing").isEmpty();
        }
    }
}
