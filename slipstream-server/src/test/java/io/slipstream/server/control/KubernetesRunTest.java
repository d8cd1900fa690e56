package io.slipstream.server.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.executor.kubernetes.TestCluster;
import io.slipstream.server.support.TestServer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The real server with {@code executor: kubernetes}, on fabric8's mock API server with the test kubelet
 * ({@link KubernetesCluster}): the same jobs, the same API, instances as pods.
 */
class KubernetesRunTest {
    private static final String IMAGE = "registry.example.com/team-a/trainer:1.0";

    @TempDir
    Path root;

    private KubernetesCluster kubernetes;
    private TestCluster cluster;
    private TestServer server;
    private String admin;

    @BeforeEach
    void start() throws Exception {
        kubernetes = new KubernetesCluster(root, TestCluster.NODES);
        cluster = kubernetes.cluster;
        server = kubernetes.startServer(root.resolve("data"));
        admin = server.adminToken();
        server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
    }

    @AfterEach
    void stop() {
        server.close();
        kubernetes.close();
    }

    private String submit(String name, String image, List<Map<String, Object>> groups, String startupOrder) {
        Map<String, Object> job = Map.of("jobDocument", Map.of("apiVersion", "slipstream/v1", "kind", "Job",
                "metadata", Map.of("name", name, "workspace", "w"),
                "spec", Map.of("startupOrder", startupOrder, "storage", List.of(Map.of("name", "out", "scope", "job")),
                        "nodeGroups", groups.stream().map(g -> {
                            Map<String, Object> group = new java.util.HashMap<>(g);
                            group.put("image", image);
                            return group;
                        }).toList())));
        TestServer.Response response = server.post("/api/v1/runs", admin, Json.mapper().writeValueAsString(job));
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        return response.json().get("id").asString();
    }

    @Test
    void aTwoGroupJobRunsAsPodsPinnedToTheChosenNodesAndRendezvousesByName() {
        String script = "echo \"$SLIPSTREAM_NODE_GROUP rank=$RANK master=$MASTER_ADDR:$MASTER_PORT ip=$SLIPSTREAM_IP\"; "
                + "grep -c '\"ip\" : \"10.42.0.' \"$SLIPSTREAM_METADATA_FILE\"; echo model > \"$SLIPSTREAM_STORAGE_OUT/$RANK\"; "
                + "echo \"token=${SLIPSTREAM_RUN_TOKEN:+set} server=$SLIPSTREAM_SERVER\"";
        String run = submit("pretrain", IMAGE, List.of(
                Map.of("name", "coordinator", "replicas", 1, "resources", Map.of("cpu", 2, "memory", "4Gi"), "command", List.of("sh", "-c", script),
                        "startupProbe", Map.of("command", List.of("true"), "periodSeconds", 1)),
                Map.of("name", "worker", "replicas", 2, "resources", Map.of("cpu", 8, "memory", "32Gi", "gpu", 8),
                        "command", List.of("sh", "-c", script))), "InOrder");
        JsonNode done = server.awaitState(admin, run, "SUCCEEDED");

        String master = "coordinator-0.ss-" + run + ".slipstream-jobs.svc.cluster.local:29500";
        String logs = server.get("/api/v1/runs/" + run + "/logs", admin).text();
        assertThat(logs).contains("|r0|gpu-node-").contains("coordinator rank=0 master=" + master + " ip=10.42.0.")
                .contains("worker rank=1 master=" + master).contains("worker rank=2 master=" + master)
                .contains("token=set server=http://slipstream.slipstream.svc:8080");
        assertThat(cluster.admin.secrets().inNamespace(TestCluster.NAMESPACE).withName("ss-" + run + "-1-token").get())
                .as("the run's token is in a Secret, not in the pods' specs").isNotNull();
        // Each worker holds a whole 8-GPU node: the gang is spread exactly as the scheduler placed it.
        List<String> nodes = new java.util.ArrayList<>();
        done.get("instances").forEach(instance -> nodes.add(instance.get("node").asString()));
        assertThat(nodes.subList(1, 3)).containsExactlyInAnyOrder("gpu-node-1", "gpu-node-2");
        var pods = kubernetes.pods(run);
        assertThat(pods).hasSize(3).allSatisfy(pod -> assertThat(pod.getSpec().getNodeName())
                .isEqualTo(nodes.get(Integer.parseInt(pod.getMetadata().getLabels().get("slipstream.io/rank")))));
    }

    @Test
    void anImageThatCannotBePulledFailsTheRunWithAClearReason() {
        String run = submit("typo", "missing/trainer:1.0", List.of(Map.of("name", "main", "replicas", 1,
                "resources", Map.of("cpu", 1, "memory", "1Gi"), "command", List.of("train"))), "InParallel");
        JsonNode failed = server.awaitState(admin, run, "FAILED");
        assertThat(failed.toString()).contains("ImagePullFailed: ImagePullBackOff").contains("missing/trainer:1.0");
    }

    @Test
    void aNodeThatStaysNotReadyLosesItsInstanceAndTheRunRestartsOnAnotherNode() {
        String run = submit("resilient", IMAGE, List.of(Map.of("name", "main", "replicas", 1, "resources", Map.of("cpu", 8, "memory", "8Gi", "gpu", 8),
                "command", List.of("sh", "-c", "echo \"attempt $SLIPSTREAM_ATTEMPT on $SLIPSTREAM_NODE\"; exec sleep 600"))), "InParallel");
        JsonNode running = server.awaitRun(admin, run, r -> r.get("state").asString().equals("RUNNING")
                && server.get("/api/v1/runs/" + run + "/logs", admin).text().contains("attempt 1"));
        String first = running.get("instances").get(0).get("node").asString();
        cluster.setReady(first, false);

        JsonNode restarted = server.awaitRun(admin, run, r -> r.get("attempt").asInt() == 2 && r.get("state").asString().equals("RUNNING"));
        List<String> attempts = new java.util.ArrayList<>();
        restarted.get("instances").forEach(i -> attempts.add(i.get("attempt").asInt() + ":" + i.get("state").asString() + "@" + i.get("node").asString()));
        assertThat(attempts).containsExactly("1:NODE_LOST@" + first, "2:RUNNING@" + (first.equals("gpu-node-1") ? "gpu-node-2" : "gpu-node-1"));
        assertThat(server.get("/api/v1/runs/" + run + "/events", admin).text()).contains("NodeLost: node " + first + " is NotReady for");
        assertThat(server.post("/api/v1/runs/" + run + "/cancel", admin, "{}").status()).isLessThan(300);
        server.awaitState(admin, run, "CANCELLED");
    }

    @Test
    void aRestartedServerAdoptsTheRunsPodsWithoutMakingNewOnes() {
        String run = submit("survivor", IMAGE, List.of(Map.of("name", "main", "replicas", 2, "resources", Map.of("cpu", 1, "memory", "1Gi"),
                "command", List.of("sh", "-c", "echo up; exec sleep 600"))), "InParallel");
        server.awaitRun(admin, run, r -> server.get("/api/v1/runs/" + run + "/logs", admin).text().lines().filter(l -> l.endsWith("up")).count() == 2);
        List<String> before = podUids(run);
        server.close(); // the control plane goes away; its pods run on

        server = kubernetes.startServer(root.resolve("data"));
        JsonNode adopted = server.awaitState(admin, run, "RUNNING");
        assertThat(adopted.get("attempt").asInt()).isEqualTo(1);
        assertThat(podUids(run)).isEqualTo(before);
        assertThat(server.get("/api/v1/runs/" + run + "/logs", admin).text()).contains("up");

        assertThat(server.post("/api/v1/runs/" + run + "/cancel", admin, "{}").status()).isLessThan(300);
        server.awaitState(admin, run, "CANCELLED");
        assertThat(podUids(run)).isEmpty();
    }

    private List<String> podUids(String run) {
        return kubernetes.pods(run).stream().map(pod -> pod.getMetadata().getName() + "=" + pod.getMetadata().getUid()).toList();
    }

    /**
     * {@code runType: Async}: rank 1 exits 137 once, while rank 0 runs; only rank 1 starts again, as a new pod on the node
     * it held, with its host name, and the run succeeds in its first attempt. Rank 0 prints every start it saw at its end.
     */
    @Test
    void anAsyncRunRestartsTheFailedInstanceInPlaceWhileItsPeerRunsOn() {
        String script = String.join("\n",
                "CK=\"$SLIPSTREAM_CHECKPOINT_DIR\"",
                "echo \"start rank=$SLIPSTREAM_RANK restart=$SLIPSTREAM_RESTART_COUNT host=$HOSTNAME\" >> \"$CK/starts.log\"",
                "if [ \"$SLIPSTREAM_RANK\" = 1 ] && [ ! -e \"$CK/crashed\" ]; then",
                "  while [ \"$(wc -l < \"$CK/starts.log\")\" -lt 2 ]; do sleep 0.1; done",
                "  touch \"$CK/crashed\"; exit 137",
                "fi",
                "[ \"$SLIPSTREAM_RANK\" = 1 ] && touch \"$CK/done\"",
                "while [ ! -e \"$CK/done\" ]; do sleep 0.1; done",
                "[ \"$SLIPSTREAM_RANK\" = 0 ] && cat \"$CK/starts.log\"",
                "exit 0");
        String job = """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: ps, workspace: w}
                spec:
                  faultTolerance:
                    runType: Async
                    maxRestarts: 1
                    backoff: {base: 1s, cap: 1s}
                    retryOn: {exitCodes: [137]}
                  nodeGroups:
                    - name: main
                      replicas: 2
                      image: "%s"
                      resources: {cpu: 1, memory: 1Gi}
                      command: [sh, -c, %s]
                """.formatted(IMAGE, Json.mapper().writeValueAsString(script));
        TestServer.Response applied = server.post("/api/v1/apply", admin, job);
        assertThat(applied.status()).as(applied.text()).isEqualTo(200);
        TestServer.Response created = server.post("/api/v1/runs", admin, "{\"workspace\": \"w\", \"job\": \"ps\"}");
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        String run = created.json().get("id").asString();

        JsonNode done = server.awaitState(admin, run, "SUCCEEDED");
        assertThat(done.get("attempt").asInt()).as("no new attempt").isEqualTo(1);
        List<String> restarts = new java.util.ArrayList<>();
        done.get("instances").forEach(i -> restarts.add(i.get("rank").asInt() + ":" + i.get("restarts").asInt()));
        assertThat(restarts).containsExactly("0:0", "1:1");
        assertThat(server.get("/api/v1/runs/" + run + "/logs", admin).text()).as("rank 0 saw one start of its own and two of rank 1")
                .contains("start rank=0 restart=0 host=main-0", "start rank=1 restart=0 host=main-1", "start rank=1 restart=1 host=main-1")
                .containsOnlyOnce("start rank=0");
        String node = done.get("instances").get(1).get("node").asString();
        var pods = kubernetes.pods(run);
        assertThat(pods).extracting(pod -> pod.getMetadata().getName()).as("the ended pod of rank 1 is gone")
                .containsExactlyInAnyOrder("ss-" + run + "-1-0", "ss-" + run + "-1-1-r1");
        assertThat(pods).filteredOn(pod -> pod.getMetadata().getName().endsWith("-r1")).singleElement()
                .satisfies(pod -> assertThat(pod.getSpec().getNodeName()).as("on the node rank 1 held").isEqualTo(node));
    }

    @Test
    void aJobWithoutAnImageIsRefusedNamingTheField() {
        String job = """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "bare", "workspace": "w"},
                 "spec": {"nodeGroups": [{"name": "main", "replicas": 1, "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["train"]}]}}}
                """;
        TestServer.Response refused = server.post("/api/v1/runs", admin, job);
        assertThat(refused.status()).isEqualTo(400);
        assertThat(refused.text()).contains("spec.nodeGroups[0].image").contains("is required: this server runs instances as containers");
        assertThat(server.get("/api/v1/runs", admin).json().toString()).doesNotContain("bare");
    }

    @Test
    void cancellingARunDeletesItsPodsAndEndsIt() {
        String run = submit("long", IMAGE, List.of(Map.of("name", "main", "replicas", 2, "resources", Map.of("cpu", 1, "memory", "1Gi"),
                "command", List.of("sh", "-c", "echo up; exec sleep 600"))), "InParallel");
        server.awaitRun(admin, run, r -> server.get("/api/v1/runs/" + run + "/logs", admin).text().lines().filter(l -> l.endsWith("up")).count() == 2);
        assertThat(server.post("/api/v1/runs/" + run + "/cancel", admin, "{}").status()).isLessThan(300);
        server.awaitState(admin, run, "CANCELLED");
        assertThat(kubernetes.pods(run)).isEmpty();
    }
}
