package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.LocalExecutorSettings;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.server.support.TestServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The cluster's topology through the API, with the real server and local executor on four declared nodes in two racks
 * of one block: one Topology per cluster, applied by admins and read by all; nodes show their place; a job's placement
 * names a level of it; a gang that must be in one rack lands in one, its instances' metadata and environment say where,
 * and one that no rack holds waits saying why.
 */
class TopologyApiTest {
    @TempDir
    static Path root;

    private static TestServer server;
    private static String admin;
    private static String alice;

    private static final String TOPOLOGY = """
            apiVersion: slipstream/v1
            kind: Topology
            metadata: {name: default}
            spec:
              levels:
              - {name: block, nodeLabel: topology.slipstream.io/block}
              - {name: rack, nodeLabel: topology.slipstream.io/rack}
            """;

    @BeforeAll
    static void start() {
        List<NodeInfo> nodes = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            // Three racks of two nodes (node-1 and node-4 in r2...): name order is not rack order.
            nodes.add(new NodeInfo("node-" + i, new Resources(4000, 8L << 30, 2, "sim-gpu"), null,
                    Map.of("topology.slipstream.io/block", "b1", "topology.slipstream.io/rack", rackOf("node-" + i)), null));
        }
        server = TestServer.start(root.resolve("data"), config -> config.withExecutor(config.executor(LocalExecutorSettings.class)
                .withIsolation(Isolation.Mode.off).withCgroups(Cgroups.Mode.off).withNodes(nodes)));
        admin = server.adminToken();
        assertThat(server.post("/api/v1/apply", admin, "{\"apiVersion\": \"slipstream/v1\", \"kind\": \"Workspace\", \"metadata\": {\"name\": \"team-a\"},"
                + " \"spec\": {\"members\": [\"alice\"]}}").status()).isEqualTo(200);
        alice = server.tokenFor("alice");
    }

    private static String rackOf(String node) {
        return "r" + (Integer.parseInt(node.substring("node-".length())) % 3 + 1);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String job(String name, String placement, String script) {
        return """
                {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "team-a"},
                 "spec": {"nodeGroups": [{"name": "worker", "replicas": 2, "resources": {"cpu": 1, "memory": "1Gi", "gpu": 2},
                   "placement": %s, "command": ["sh", "-c", %s]}]}}
                """.formatted(name, placement, Json.mapper().writeValueAsString(script));
    }

    private static void assertProblem(TestServer.Response response, int status, String field, String message) {
        assertThat(response.status()).as(response.text()).isEqualTo(status);
        assertThat(response.json().get("problems")).as(response.text()).anySatisfy(problem -> {
            assertThat(problem.get("field").asString()).isEqualTo(field);
            assertThat(problem.get("message").asString()).contains(message);
        });
    }

    @Test
    void aGangThatMustShareARackLandsInOneAndKnowsWhereAndAnotherWaitsSayingWhy() {
        // Before the cluster has a topology, a placement names nothing.
        assertProblem(server.post("/api/v1/apply", alice, job("early", "{\"level\": \"rack\"}", "true")), 400, "spec.nodeGroups[0].placement.level",
                "the cluster has no topology");
        assertThat(server.post("/api/v1/apply", alice, TOPOLOGY).status()).as("only admins apply one").isEqualTo(403);
        assertThat(server.post("/api/v1/apply", admin, TOPOLOGY).status()).isEqualTo(200);
        assertProblem(server.post("/api/v1/apply", admin, TOPOLOGY.replace("name: default", "name: other")), 400, "metadata.name",
                "must be default");
        assertProblem(server.post("/api/v1/apply", admin, TOPOLOGY.replace("{name: rack,", "{name: block,")), 400, "spec.levels[1].name",
                "is a level already");
        assertThat(server.get("/api/v1/topologies", alice).json().get("items")).as("everyone reads it").hasSize(1);

        JsonNode nodes = server.get("/api/v1/nodes", alice).json().get("items");
        assertThat(nodes).anySatisfy(node -> {
            assertThat(node.get("name").asString()).isEqualTo("node-2");
            assertThat(node.get("topology").get("block").asString()).isEqualTo("b1");
            assertThat(node.get("topology").get("rack").asString()).isEqualTo(rackOf("node-2"));
        });

        assertProblem(server.post("/api/v1/apply", alice, job("zoned", "{\"level\": \"zone\"}", "true")), 400, "spec.nodeGroups[0].placement.level",
                "'zone' is not a level of the cluster's topology (block, rack)");
        assertProblem(server.post("/api/v1/apply", alice, job("moody", "{\"level\": \"rack\", \"mode\": \"Sometimes\"}", "true")), 400,
                "spec.nodeGroups[0].placement.mode", "Required");

        assertProblem(server.post("/api/v1/apply", alice, job("wide", "{\"level\": \"rack\", \"sliceSize\": 1, \"sliceLevel\": \"block\"}", "true")), 400,
                "spec.nodeGroups[0].placement.sliceLevel", "'block' is broader than the group's level (rack)");
        assertProblem(server.post("/api/v1/apply", alice, job("hosted", "{\"level\": \"rack\", \"sliceSize\": 1, \"sliceLevel\": \"host\"}", "true")), 400,
                "spec.nodeGroups[0].placement.sliceLevel", "'host' is not a level of the cluster's topology (block, rack)");
        assertThat(server.post("/api/v1/apply", alice, job("sliced", "{\"level\": \"block\", \"sliceSize\": 2, \"sliceLevel\": \"rack\"}", "true"))
                .status()).isEqualTo(200);
        TestServer.Response uneven = server.post("/api/v1/runs", alice, """
                {"workspace": "team-a", "job": "sliced", "overrides": {"nodeGroups.worker.replicas": 3}}""");
        assertProblem(uneven, 400, "overrides.nodeGroups.worker.placement.sliceSize", "must divide replicas (3)");
        assertThat(server.post("/api/v1/apply", alice, job("placed", "{\"level\": \"rack\"}", "true")).status()).isEqualTo(200);
        TestServer.Response overridden = server.post("/api/v1/runs", alice, """
                {"workspace": "team-a", "job": "placed", "overrides": {"nodeGroups.worker.placement.level": "zone"}}""");
        assertProblem(overridden, 400, "overrides.nodeGroups.worker.placement.level", "'zone' is not a level of the cluster's topology");

        // Three instances of two GPUs in one rack: every rack has two nodes of two GPUs. Refused, as a run no node holds is.
        TestServer.Response tooBig = server.post("/api/v1/runs", alice, """
                {"workspace": "team-a", "job": "placed", "overrides": {"nodeGroups.worker.replicas": 3}}""");
        assertProblem(tooBig, 400, "spec.nodeGroups", "no rack could ever hold the 3 instances of node group worker together");

        String waitForever = "echo \"$SLIPSTREAM_TOPOLOGY_BLOCK/$SLIPSTREAM_TOPOLOGY_RACK\"; tr -d '\\n' < \"$SLIPSTREAM_METADATA_FILE\"; echo; sleep 600";
        String first = submit(job("first", "{\"level\": \"rack\"}", waitForever));
        JsonNode running = server.awaitState(admin, first, "RUNNING"); // members see no node names
        Set<String> racks = new HashSet<>();
        List<String> nodesInRankOrder = new ArrayList<>();
        for (JsonNode instance : running.get("instances")) {
            nodesInRankOrder.add(instance.get("node").asString());
            racks.add(rackOf(instance.get("node").asString()));
        }
        assertThat(racks).as("both in one rack: %s", nodesInRankOrder).hasSize(1);
        String rack = racks.iterator().next();
        server.awaitRun(alice, first, r -> stdout(first).contains("\"topology\""));
        String out = stdout(first);
        assertThat(out).contains("b1/" + rack);
        JsonNode metadata = Json.mapper().readTree(out.lines().filter(l -> l.startsWith("{")).findFirst().orElseThrow());
        assertThat(metadata.get("instances")).allSatisfy(instance -> {
            assertThat(instance.get("topology").get("rack").asString()).isEqualTo(rack);
            assertThat(instance.get("topology").get("block").asString()).isEqualTo("b1");
        });

        // One node of each other rack taken: a second rack-bound gang fits in no rack, though two nodes are free.
        String single = """
                {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "single-%d", "workspace": "team-a"},
                 "spec": {"nodeGroups": [{"name": "one", "resources": {"cpu": 1, "memory": "1Gi", "gpu": 2}, "command": ["sleep", "600"]}]}}
                """;
        String single1 = submit(single.formatted(1));
        server.awaitState(alice, single1, "RUNNING");
        String single2 = submit(single.formatted(2));
        server.awaitState(alice, single2, "RUNNING");
        String second = submit(job("second", "{\"level\": \"rack\"}", "true"));
        JsonNode waiting = server.awaitRun(alice, second, r -> r.path("queue").has("message"));
        assertThat(waiting.get("state").asString()).isEqualTo("QUEUED");
        assertThat(waiting.get("queue").get("message").asString()).contains("no rack has room for the 2 instances of node group worker together");
        String anywhere = submit(job("anywhere", "{\"level\": \"rack\", \"mode\": \"Preferred\"}", "true"));
        assertThat(server.awaitState(alice, anywhere, "SUCCEEDED").get("state").asString()).as("Preferred: not one rack, if none has room").isEqualTo("SUCCEEDED");
        for (String run : List.of(first, single1, single2, second)) {
            server.post("/api/v1/runs/" + run + "/cancel", alice, "{}");
        }
        for (String run : List.of(first, single1, single2, second)) {
            server.awaitRun(alice, run, r -> r.get("state").asString().matches("CANCELLED|SUCCEEDED|FAILED"));
        }
    }

    private static String submit(String jobDocument) {
        TestServer.Response response = server.post("/api/v1/runs", alice, Json.mapper().writeValueAsString(Map.of("jobDocument",
                Json.mapper().readTree(jobDocument))));
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        return response.json().get("id").asString();
    }

    private static String stdout(String run) {
        return server.get("/api/v1/runs/" + run + "/logs?stream=stdout&prefix=false", alice).text();
    }
}
