package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceUsage;
import io.slipstream.api.run.RunId;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * What the kernel counted of each instance, as an executor that measures it reports it with the instance's end (the
 * fake executor here, as the local one does from the instance's cgroup): kept with the instance and shown in the run's
 * view, added to the usage report as measured CPU-hours beside the held ones, and counted in the metrics.
 */
class InstanceUsageApiTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static String admin;
    private static String mia;

    @BeforeAll
    static void start() {
        server = TestServer.startInMemory(dataDir);
        admin = server.adminToken();
        Response applied = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-m}
                spec: {members: [mia]}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: measured, workspace: team-m}
                spec: {min: {cpu: 8, memory: 8Gi, gpu: 0}}
                """);
        assertThat(applied.status()).as(applied.text()).isEqualTo(200);
        mia = server.tokenFor("mia");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void whatEachInstanceUsedIsShownWithTheRunInTheUsageReportAndTheMetrics() {
        Response created = server.post("/api/v1/runs", mia, """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "crunch", "workspace": "team-m"},
                 "spec": {"quota": "measured", "nodeGroups": [{"name": "main", "replicas": 3,
                  "resources": {"cpu": 2, "memory": "2Gi"}, "command": ["crunch"]}]}}}
                """);
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        String run = created.json().get("id").asString();
        server.awaitState(mia, run, "RUNNING");

        // Rank 0: both figures; rank 1: CPU time only (no memory peak on its kernel); rank 2: nothing measured.
        server.fakeExecutor().exit(new InstanceId(new RunId(run), 1, 0), 0, null, new InstanceUsage(1536L << 20, 90_500_000_000L));
        server.fakeExecutor().exit(new InstanceId(new RunId(run), 1, 1), 0, null, InstanceUsage.of(-1, 30_000_000_000L));
        server.fakeExecutor().exit(new InstanceId(new RunId(run), 1, 2), 0);
        JsonNode done = server.awaitState(mia, run, "SUCCEEDED");

        JsonNode instances = done.get("instances");
        assertThat(instances.get(0).get("memoryPeak").asString()).isEqualTo("1536Mi");
        assertThat(instances.get(0).get("cpuSeconds").asDouble()).isEqualTo(90.5);
        assertThat(instances.get(1).has("memoryPeak")).isFalse();
        assertThat(instances.get(1).get("cpuSeconds").asDouble()).isEqualTo(30.0);
        assertThat(instances.get(2).has("memoryPeak")).isFalse();
        assertThat(instances.get(2).has("cpuSeconds")).isFalse();

        // 120.5 s of CPU measured, beside the 6 cores the run held while it ran.
        double measured = Math.round(120.5 / 3600 * 1e6) / 1e6;
        JsonNode byQuota = server.get("/api/v1/usage?by=quota", mia).json();
        JsonNode line = byQuota.get("lines").get(0);
        assertThat(line.get("quota").asString()).isEqualTo("measured");
        assertThat(line.get("measuredCpuHours").asDouble()).isEqualTo(measured);
        assertThat(byQuota.at("/total/measuredCpuHours").asDouble()).isEqualTo(measured);
        assertThat(server.get("/api/v1/usage?by=user", mia).json().at("/lines/0/measuredCpuHours").asDouble()).isEqualTo(measured);

        String metrics = server.get("/metrics", admin).text();
        assertThat(metrics).contains("slipstream_instance_cpu_seconds_total{workspace=\"team-m\"} 120.5")
                .contains("slipstream_instance_memory_peak_bytes_count{workspace=\"team-m\"} 1")
                .contains("slipstream_instance_memory_peak_bytes_sum{workspace=\"team-m\"} " + (double) (1536L << 20));
    }
}
