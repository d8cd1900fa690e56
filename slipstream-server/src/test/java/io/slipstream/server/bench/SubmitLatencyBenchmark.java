package io.slipstream.server.bench;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Submit-to-RUNNING latency of a one-instance job on the local executor, over HTTP. Not part of the test run
 * (its name does not end in Test); run it with:
 *
 * <pre>mvn -B -pl slipstream-server -am test -Dtest=SubmitLatencyBenchmark -Dsurefire.failIfNoSpecifiedTests=false</pre>
 *
 * Prints the figures and writes them to {@code slipstream-server/target/submit-latency.json}.
 */
class SubmitLatencyBenchmark {
    private static final int WARMUP = 5;
    private static final int RUNS = 20;

    @TempDir
    Path dataDir;

    @Test
    void submitToRunning() throws Exception {
        try (TestServer server = TestServer.start(dataDir)) {
            String admin = server.adminToken();
            server.post("/api/v1/apply", admin, """
                    apiVersion: slipstream/v1
                    kind: Workspace
                    metadata: {name: bench}
                    ---
                    apiVersion: slipstream/v1
                    kind: Job
                    metadata: {name: one, workspace: bench}
                    spec:
                      nodeGroups:
                        - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sleep, "0.3"]}
                    """);
            List<Double> serverSide = new ArrayList<>();
            List<Double> clientSide = new ArrayList<>();
            for (int i = 0; i < WARMUP + RUNS; i++) {
                long sent = System.nanoTime();
                JsonNode created = server.post("/api/v1/runs", admin, "{\"workspace\":\"bench\",\"job\":\"one\"}").json();
                String id = created.get("id").asString();
                JsonNode running = server.get("/api/v1/runs/" + id, admin).json();
                while (running.get("startedAt") == null) {
                    Thread.onSpinWait(); // poll as fast as the API answers: this measures latency
                    running = server.get("/api/v1/runs/" + id, admin).json();
                }
                long seen = System.nanoTime();
                server.awaitState(admin, id, "SUCCEEDED");
                if (i >= WARMUP) {
                    clientSide.add((seen - sent) / 1e6);
                    serverSide.add((double) Duration.between(Instant.parse(running.get("createdAt").asString()),
                            Instant.parse(running.get("startedAt").asString())).toMillis());
                }
            }
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("benchmark", "submit-to-running");
            result.put("runs", RUNS);
            result.put("cores", Runtime.getRuntime().availableProcessors());
            result.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
            result.put("serverSideMillis", summary(serverSide));
            result.put("clientObservedMillis", summary(clientSide));
            String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(result);
            System.out.println(json);
            Files.writeString(Path.of("target", "submit-latency.json"), json);
        }
    }

    private static Map<String, Double> summary(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        Map<String, Double> summary = new LinkedHashMap<>();
        summary.put("min", sorted.get(0));
        summary.put("median", (sorted.get((sorted.size() - 1) / 2) + sorted.get(sorted.size() / 2)) / 2);
        summary.put("p90", sorted.get((int) Math.ceil(sorted.size() * 0.9) - 1));
        summary.put("max", sorted.get(sorted.size() - 1));
        return summary;
    }
}
