package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/** Stored documents are data: what the server wrote reads back equal, however the rules for user input change. */
class StoredSpecsTest {
    static final String ALL = SpecReaderTest.JOB + """
            ---
            apiVersion: slipstream/v1
            kind: Shape
            metadata: {name: gpu.8x.sim}
            spec: {cpu: "7500m", memory: 64Gi, gpu: 8, gpuModel: sim-gpu}
            ---
            apiVersion: slipstream/v1
            kind: Quota
            metadata: {name: team-a-gpu, workspace: team-a}
            spec: {type: Dedicated, gpuModel: h100, min: {gpu: 16, cpu: 128, memory: 1Ti}, max: {gpu: 32}, parent: org/root,
                   withinQuota: LowerPriority, overcommit: true, fairSharing: {weight: 2.5}}
            ---
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: borrower, workspace: team-b}
            spec:
              quota: gpus
              idleResources: Acceptable
              preemptionGracePeriod: 90s
              nodeGroups:
                - {name: w, resources: {cpu: 1, memory: 1Gi}, command: [x]}
            ---
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: distributed, workspace: team-b}
            spec:
              startupOrder: InOrder
              faultTolerance:
                runType: Sync
                maxRestarts: 5
                maxPreemptions: 100
                maxNodeLostRestarts: 2
                maxHangRestarts: 1
                backoff: {base: 5s, cap: 2m}
                retryOn: {exitCodes: [137, "200-255"], errorPatterns: ["NCCL error", "CUDA error: an illegal memory access"]}
                otherFailures: Fail
                sameErrorLimit: 3
                hangTimeout: 30m
                exitHangTimeout: 10m
              storage:
                - {name: data, scope: workspace, subPath: datasets/mnist}
                - {name: out, scope: job, mountPath: /mnt/out}
                - {name: scratch, scope: run}
              nodeGroups:
                - name: coordinator
                  resources: {cpu: 1, memory: 1Gi}
                  command: [x]
                  ports: 2
                  startupProbe: {command: [test, -f, ready], periodSeconds: 2, failureThreshold: 5, initialDelaySeconds: 1}
                - {name: worker, replicas: 3, minSuccessReplicas: 2, resources: {cpu: 1, memory: 1Gi}, command: [y]}
            ---
            apiVersion: slipstream/v1
            kind: Workspace
            metadata: {name: team-a}
            spec: {members: [alice, bob]}
            """;

    @Test
    void everyWrittenDocumentReadsBackEqual() {
        for (Document<?> document : Documents.readAll(ALL.getBytes(StandardCharsets.UTF_8))) {
            ObjectNode written = SpecWriter.write(document);
            assertThat(StoredSpecs.read(Json.mapper().readTree(written.toString()))).as(written.toString()).isEqualTo(document);
        }
    }

    @Test
    void aQuotaStoredBeforeFairSharingReadsAsWeightOneAndOneOfWeightOneIsWrittenAsBefore() {
        QuotaSpec old = (QuotaSpec) StoredSpecs.read(Json.mapper().readTree("""
                {"apiVersion": "slipstream/v1", "kind": "Quota", "metadata": {"name": "q", "workspace": "w"},
                 "spec": {"type": "General", "min": {"gpu": 8}, "parent": "root"}}""")).spec();
        assertThat(old.fairSharing()).isEqualTo(FairSharing.DEFAULT);
        assertThat(old.fairSharing().weight()).isEqualTo(1.0);
        Document<?> document = Documents.readAll("""
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: q, workspace: w}
                spec: {min: {gpu: 8}, parent: root, fairSharing: {weight: 1}}
                """.getBytes(StandardCharsets.UTF_8)).get(0);
        assertThat(SpecWriter.write(document).path("spec").has("fairSharing")).isFalse();
        Document<?> zero = Documents.readAll("""
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: q, workspace: w}
                spec: {min: {gpu: 8}, parent: root, fairSharing: {weight: 0}}
                """.getBytes(StandardCharsets.UTF_8)).get(0);
        assertThat(SpecWriter.write(zero).path("spec").path("fairSharing").path("weight").asDouble()).isEqualTo(0.0);
        assertThat(StoredSpecs.read(Json.mapper().readTree(SpecWriter.write(zero).toString()))).isEqualTo(zero);
    }

    @Test
    void storedDataIsReadWithoutTheLimitsAndRulesOfUserInputAndUnknownFieldsAreIgnored() {
        String stored = """
                {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "old", "workspace": "team-a"},
                 "spec": {"priority": 5, "maxRuntime": "400d", "removedLater": {"x": 1},
                          "nodeGroups": [{"name": "w", "replicas": 20000, "shape": "s", "resources": {"cpu": "9000", "memory": "1Ei"},
                                          "command": ["x"], "env": {"A": "1", "T": {"secretRef": "hf/token"}}, "colour": "red"}]}}
                """;
        JobSpec job = StoredSpecs.readJob(Json.mapper().readTree(stored));
        assertThat(job.maxRuntime()).isEqualTo(Duration.ofDays(400));
        NodeGroupSpec group = job.nodeGroups().get(0);
        assertThat(group.replicas()).isEqualTo(20000);
        assertThat(group.shape()).isEqualTo("s");
        assertThat(group.resources()).isEqualTo(new Resources(9_000_000, 1L << 60, 0, null));
        assertThat(group.env()).containsExactly(java.util.Map.entry("A", "1"));
        assertThat(group.secretEnv()).containsEntry("T", new SecretRef("hf", "token"));
    }

    @Test
    void documentsAreWrittenAsUsersWriteThemWithoutTheDefaults() {
        Document<?> job = Documents.readAll("""
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: j, workspace: team-a}
                spec:
                  nodeGroups:
                    - {name: a, resources: {cpu: "1.5", memory: 1Gi}, command: [x]}
                    - {name: b, shape: s, command: [y], env: {T: {secretRef: hf/token}, A: "1"}, ports: 2}
                """.getBytes(StandardCharsets.UTF_8)).get(0);
        assertThat(SpecWriter.write(job)).isEqualTo(Json.mapper().readTree("""
                {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "j", "workspace": "team-a"},
                 "spec": {"priority": 0, "idleResources": "OnlyIdle", "nodeGroups": [
                   {"name": "a", "replicas": 1, "resources": {"cpu": "1500m", "memory": "1Gi", "gpu": 0}, "command": ["x"]},
                   {"name": "b", "replicas": 1, "shape": "s", "command": ["y"], "ports": 2, "env": {"A": "1", "T": {"secretRef": "hf/token"}}}]}}
                """));
    }
}
