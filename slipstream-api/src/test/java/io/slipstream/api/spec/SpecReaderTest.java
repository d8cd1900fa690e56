package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SpecReaderTest {
    static final String JOB = """
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: train, workspace: team-a}
            spec:
              priority: 5
              nodeGroups:
                - name: worker
                  replicas: 2
                  resources: {cpu: 4, memory: 16Gi, gpu: 1}
                  command: [python, train.py, --lr, "0.1"]
                  env: {LR: "0.1"}
                  workingDir: out/run
            """;

    private static List<Document<?>> read(String yaml) {
        return Documents.readAll(yaml.getBytes(StandardCharsets.UTF_8));
    }

    private static List<Problem> problemsOf(String yaml) {
        try {
            read(yaml);
        } catch (InvalidInputException e) {
            return e.problems();
        }
        throw new AssertionError("expected the document to be rejected:\n" + yaml);
    }

    @Test
    void readsAValidJob() {
        Document<?> document = read(JOB).get(0);
        assertThat(document.reference()).isEqualTo("Job team-a/train");
        JobSpec job = (JobSpec) document.spec();
        assertThat(job.priority()).isEqualTo(5);
        NodeGroupSpec group = job.nodeGroups().get(0);
        assertThat(group.replicas()).isEqualTo(2);
        assertThat(group.resources()).isEqualTo(new Resources(4000, 16L << 30, 1, null));
        assertThat(group.command()).containsExactly("python", "train.py", "--lr", "0.1");
        assertThat(group.env()).containsEntry("LR", "0.1");
        assertThat(group.workingDir()).isEqualTo("out/run");
    }

    @Test
    void aMemoryLimitIsReadAsBytesAndMayEqualTheRequest() {
        String burstable = JOB.replace("      resources: {cpu: 4, memory: 16Gi, gpu: 1}",
                "      resources: {cpu: 4, memory: 16Gi, gpu: 1}\n      limits: {memory: 24Gi}");
        NodeGroupSpec group = ((JobSpec) read(burstable).get(0).spec()).nodeGroups().get(0);
        assertThat(group.limits()).isEqualTo(new Limits(24L << 30));
        assertThat(group.memoryLimitBytes()).isEqualTo(24L << 30);
        assertThat(group.burstsMemory()).isTrue();
        String inBytes = JOB.replace("      resources: {cpu: 4, memory: 16Gi, gpu: 1}",
                "      resources: {cpu: 4, memory: 16Gi, gpu: 1}\n      limits: {memory: 17179869184}");
        NodeGroupSpec equal = ((JobSpec) read(inBytes).get(0).spec()).nodeGroups().get(0);
        assertThat(equal.limits()).isEqualTo(new Limits(16L << 30));
        assertThat(equal.burstsMemory()).as("a limit equal to the request is no burst").isFalse();
        NodeGroupSpec without = ((JobSpec) read(JOB).get(0).spec()).nodeGroups().get(0);
        assertThat(without.limits()).isNull();
        assertThat(without.memoryLimitBytes()).as("without limits, the request is the limit").isEqualTo(16L << 30);
        assertThat(SpecWriter.write(read(JOB).get(0)).toString()).doesNotContain("limits");
    }

    @Test
    void labelsOfAJobAreReadWrittenBackAndStoredSortedByKey() {
        Document<?> document = read(JOB.replace("metadata: {name: train, workspace: team-a}",
                "metadata: {name: train, workspace: team-a, labels: {tier: gold, example.com/team: nlp, empty: \"\"}}")).get(0);
        assertThat(document.metadata().labels()).containsExactly(
                java.util.Map.entry("empty", ""), java.util.Map.entry("example.com/team", "nlp"), java.util.Map.entry("tier", "gold"));
        tools.jackson.databind.JsonNode written = SpecWriter.write(document);
        assertThat(written.path("metadata").path("labels").path("tier").asString()).isEqualTo("gold");
        assertThat(StoredSpecs.read(written)).isEqualTo(document);
        assertThat(SpecWriter.write(read(JOB).get(0)).path("metadata").has("labels")).as("no labels, no field").isFalse();
    }

    @Test
    void badLabelsAreEachAProblemAtTheirKey() {
        List<Problem> problems = problemsOf(JOB.replace("metadata: {name: train, workspace: team-a}",
                "metadata: {name: train, workspace: team-a, labels: {\"-bad\": x, Bad_Prefix/a: x, ok: \"no way\", n: 5, long: "
                        + "v".repeat(64) + "}}"));
        assertThat(problems).extracting(Problem::field).containsExactlyInAnyOrder(
                "metadata.labels.-bad", "metadata.labels.Bad_Prefix/a", "metadata.labels.ok", "metadata.labels.n", "metadata.labels.long");
        assertThat(problems).filteredOn(p -> p.field().equals("metadata.labels.-bad")).extracting(Problem::message)
                .containsExactly("'-bad' is not a label key: its name uses letters, digits, '-', '_' and '.', starting and ending with a letter or digit");
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 65; i++) {
            many.append(i == 0 ? "" : ", ").append("k").append(i).append(": v");
        }
        assertThat(problemsOf(JOB.replace("metadata: {name: train, workspace: team-a}", "metadata: {name: train, workspace: team-a, labels: {" + many + "}}")))
                .extracting(Problem::field, Problem::message).containsExactly(org.assertj.core.groups.Tuple.tuple("metadata.labels", "must have at most 64 entries (has 65)"));
    }

    @Test
    void faultToleranceDefaultsAndItsProblemsNameTheirFields() {
        JobSpec plain = (JobSpec) read(JOB).get(0).spec();
        assertThat(plain.faultTolerance()).isEqualTo(FaultTolerance.DEFAULT);
        assertThat(plain.faultTolerance().maxPreemptions()).as("preemptions are unlimited").isNull();
        assertThat(FaultTolerance.DEFAULT.backoff(1)).isEqualTo(java.time.Duration.ofSeconds(10));
        assertThat(FaultTolerance.DEFAULT.backoff(3)).isEqualTo(java.time.Duration.ofSeconds(40));
        assertThat(FaultTolerance.DEFAULT.backoff(30)).isEqualTo(java.time.Duration.ofMinutes(5));

        List<Problem> problems = problemsOf(JOB.replace("  priority: 5", String.join("\n",
                "  priority: 5",
                "  faultTolerance:",
                "    runType: Eventually",
                "    maxRestarts: -1",
                "    backoff: {base: 1m, cap: 10s}",
                "    retryOn: {exitCodes: [300, \"9-3\", x], errorPatterns: [\"NCCL (error\", 5]}",
                "    hangTimeout: soon",
                "    restartPolicy: Always")));
        assertThat(problems).extracting(Problem::field).containsExactlyInAnyOrder(
                "spec.faultTolerance.runType", "spec.faultTolerance.maxRestarts", "spec.faultTolerance.backoff.cap",
                "spec.faultTolerance.retryOn.exitCodes[0]", "spec.faultTolerance.retryOn.exitCodes[1]", "spec.faultTolerance.retryOn.exitCodes[2]",
                "spec.faultTolerance.retryOn.errorPatterns[0]", "spec.faultTolerance.retryOn.errorPatterns[1]", "spec.faultTolerance.hangTimeout",
                "spec.faultTolerance.restartPolicy");
        assertThat(problems).filteredOn(p -> p.field().equals("spec.faultTolerance.retryOn.errorPatterns[0]"))
                .singleElement().satisfies(p -> assertThat(p.message()).startsWith("is not a regular expression: Unclosed group"));
    }

    @Test
    void retryOnReasonsAreEndCausesAndAnUnknownOneIsAProblemOfItsItem() {
        String oom = JOB.replace("  priority: 5", String.join("\n", "  priority: 5", "  faultTolerance:", "    retryOn: {reasons: [OOMKilled]}"));
        FaultTolerance policy = ((JobSpec) read(oom).get(0).spec()).faultTolerance();
        assertThat(policy.retryReasons()).containsExactly(io.slipstream.api.run.EndCause.OOMKilled);
        assertThat(policy.hasRetryRules()).isTrue();

        assertThat(problemsOf(oom.replace("[OOMKilled]", "[OOMKilled, OutOfMemory, 137]")))
                .containsExactly(new Problem("spec.faultTolerance.retryOn.reasons[1]", "'OutOfMemory' is not one of OOMKilled"),
                        new Problem("spec.faultTolerance.retryOn.reasons[2]", "must be a string, not a number (quote it: \"137\")"));
    }

    @Test
    void asyncRunTypeIsReadAndWrittenBack() {
        String async = JOB.replace("  priority: 5", String.join("\n", "  priority: 5", "  faultTolerance:", "    runType: Async",
                "    retryOn: {exitCodes: [137]}"));
        JobSpec job = (JobSpec) read(async).get(0).spec();
        assertThat(job.faultTolerance().runType()).isEqualTo(FaultTolerance.RunType.Async);
    }

    @Test
    void writtenDocumentsReadBackEqual() {
        String all = JOB + """
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
                       withinQuota: LowerPriority, overcommit: true}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: borrower, workspace: team-b}
                spec:
                  quota: gpus
                  idleResources: Acceptable
                  preemptionGracePeriod: 90s
                  nodeGroups:
                    - {name: w, resources: {cpu: 1, memory: 1Gi}, limits: {memory: 3Gi}, command: [x]}
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
                    retryOn: {exitCodes: [137, "200-255"], errorPatterns: ["NCCL error", "CUDA error: an illegal memory access"],
                              reasons: [OOMKilled]}
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
        for (Document<?> document : read(all)) {
            byte[] json = SpecWriter.write(document).toString().getBytes(StandardCharsets.UTF_8);
            try {
                assertThat(Documents.readAll(json)).containsExactly(document);
            } catch (InvalidInputException e) {
                throw new AssertionError(new String(json, StandardCharsets.UTF_8) + " -> " + e.problems());
            }
        }
    }

    /** Found by fuzzing: the schema validator's minimum converts a number to long, and threw on 4.4e23. */
    @Test
    void aNumberBeyondSixtyFourBitsIsAProblemOfItsFieldNotACrash() {
        List<Problem> problems = problemsOf("""
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: gpus, workspace: team-a}
                spec: {type: General, min: {gpu: 8}, max: {gpu: 444444444444444444444441.16, cpu: 1e400}}
                """);
        assertThat(problems).extracting(Problem::field).contains("spec.max.gpu", "spec.max.cpu");
        assertThat(problems).filteredOn(p -> p.field().equals("spec.max.gpu")).extracting(Problem::message)
                .containsExactly("is out of range: numbers here are at most 9223372036854775807 in size");
    }

    @Test
    void reportsEveryProblemAtOnceWithItsPath() {
        List<Problem> problems = problemsOf("""
                apiVersion: slipstream/v2
                kind: Job
                metadata: {name: Bad_Name, workspace: team-a}
                spec:
                  priorty: 1
                  nodeGroups:
                    - name: worker
                      replicas: -3
                      resources: {cpu: -1, memory: lots}
                      command: [python, 3]
                      env: {1BAD: x, GOOD: 0.1, SLIPSTREAM_RANK: "7"}
                      workingDir: ../../etc
                """);
        assertThat(problems).extracting(Problem::field).containsExactlyInAnyOrder(
                "apiVersion",
                "metadata.name",
                "spec.priorty",
                "spec.nodeGroups[0].replicas",
                "spec.nodeGroups[0].resources.cpu",
                "spec.nodeGroups[0].resources.memory",
                "spec.nodeGroups[0].command[1]",
                "spec.nodeGroups[0].env.1BAD",
                "spec.nodeGroups[0].env.GOOD",
                "spec.nodeGroups[0].env.SLIPSTREAM_RANK",
                "spec.nodeGroups[0].workingDir");
        assertThat(problems).filteredOn(p -> p.field().equals("spec.priorty"))
                .extracting(Problem::message).containsExactly("unknown field (did you mean 'priority'?)");
    }

    static Stream<Arguments> badJobs() {
        return Stream.of(
                Arguments.of("missing command", "replicas: 1\n    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].command", "is required"),
                Arguments.of("empty command", "command: []\n    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].command", "must name the program"),
                Arguments.of("both shape and resources", "command: [x]\n    shape: s\n    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].resources", "not both"),
                Arguments.of("neither shape nor resources", "command: [x]", "spec.nodeGroups[0].shape", "is required"),
                Arguments.of("absurd gpu count", "command: [x]\n    resources: {cpu: 1, memory: 1Gi, gpu: 100000}", "spec.nodeGroups[0].resources.gpu", "between"),
                Arguments.of("absurd memory", "command: [x]\n    resources: {cpu: 1, memory: 1Ei}", "spec.nodeGroups[0].resources.memory", "at most 64Ti"),
                Arguments.of("zero cpu", "command: [x]\n    resources: {cpu: 0, memory: 1Gi}", "spec.nodeGroups[0].resources.cpu", "greater than zero"),
                Arguments.of("replicas as string", "command: [x]\n    replicas: \"2\"\n    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].replicas", "whole number"),
                Arguments.of("fractional replicas", "command: [x]\n    replicas: 1.5\n    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].replicas", "whole number"),
                Arguments.of("absolute workingDir", "command: [x]\n    workingDir: /etc\n    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].workingDir", "relative"),
                Arguments.of("env not a map", "command: [x]\n    env: [A]\n    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].env", "must be a map"),
                Arguments.of("image with spaces", "command: [x]\n    image: \"a b\"\n    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].image", "without spaces"),
                Arguments.of("more successes than replicas", "command: [x]\n    replicas: 2\n    minSuccessReplicas: 3\n    resources: {cpu: 1, memory: 1Gi}",
                        "spec.nodeGroups[0].minSuccessReplicas", "at most replicas (2)"),
                Arguments.of("an elastic minimum of none", "command: [x]\n    replicas: 4\n    minReplicas: 0\n    resources: {cpu: 1, memory: 1Gi}",
                        "spec.nodeGroups[0].minReplicas", "between"),
                Arguments.of("an elastic minimum above the replicas", "command: [x]\n    replicas: 4\n    minReplicas: 5\n    resources: {cpu: 1, memory: 1Gi}",
                        "spec.nodeGroups[0].minReplicas", "at most replicas (4)"),
                Arguments.of("an elastic minimum not a number", "command: [x]\n    replicas: 4\n    minReplicas: half\n    resources: {cpu: 1, memory: 1Gi}",
                        "spec.nodeGroups[0].minReplicas", "whole number"),
                Arguments.of("an elastic group started InOrder", "command: [x]\n    replicas: 4\n    minReplicas: 2\n    resources: {cpu: 1, memory: 1Gi}\n"
                        + "  startupOrder: InOrder", "spec.nodeGroups[0].minReplicas", "cannot be started InOrder"),
                Arguments.of("an elastic group with a placement", "command: [x]\n    replicas: 4\n    minReplicas: 2\n    resources: {cpu: 1, memory: 1Gi}\n"
                        + "    placement: {level: rack}", "spec.nodeGroups[0].minReplicas", "cannot have a placement"),
                Arguments.of("an elastic group with successes to count", "command: [x]\n    replicas: 4\n    minReplicas: 2\n    minSuccessReplicas: 1\n"
                        + "    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].minReplicas", "cannot have minSuccessReplicas"),
                Arguments.of("an elastic group beside a group with successes to count", "command: [x]\n    replicas: 4\n    minReplicas: 2\n"
                        + "    resources: {cpu: 1, memory: 1Gi}\n  - name: ps\n    command: [x]\n    minSuccessReplicas: 0\n    resources: {cpu: 1, memory: 1Gi}",
                        "spec.nodeGroups[1].minSuccessReplicas", "cannot be combined"),
                Arguments.of("an elastic minimum above replicas written as a float", "command: [x]\n    replicas: 4.0\n    minReplicas: 5\n"
                        + "    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].minReplicas", "at most replicas (4)"),
                Arguments.of("an elastic run restarted one rank at a time", "command: [x]\n    replicas: 4\n    minReplicas: 2\n    resources: {cpu: 1, memory: 1Gi}\n"
                        + "  faultTolerance: {runType: Async}", "spec.nodeGroups[0].minReplicas", "cannot be runType Async"),
                Arguments.of("an elastic minimum written 5.0, above the replicas", "command: [x]\n    replicas: 4\n    minReplicas: 5.0\n"
                        + "    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].minReplicas", "at most replicas (4)"),
                Arguments.of("an elastic minimum written 2.0, started InOrder", "command: [x]\n    replicas: 4\n    minReplicas: 2.0\n"
                        + "    resources: {cpu: 1, memory: 1Gi}\n  startupOrder: InOrder", "spec.nodeGroups[0].minReplicas", "cannot be started InOrder"),
                Arguments.of("an elastic minimum written 2.0, with a placement", "command: [x]\n    replicas: 4\n    minReplicas: 2.0\n"
                        + "    resources: {cpu: 1, memory: 1Gi}\n    placement: {level: rack}", "spec.nodeGroups[0].minReplicas", "cannot have a placement"),
                Arguments.of("an elastic minimum written 1e0, with successes to count", "command: [x]\n    replicas: 4\n    minReplicas: 1e0\n"
                        + "    minSuccessReplicas: 1\n    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].minReplicas", "cannot have minSuccessReplicas"),
                Arguments.of("an elastic minimum written 2.0, runType Async", "command: [x]\n    replicas: 4\n    minReplicas: 2.0\n"
                        + "    resources: {cpu: 1, memory: 1Gi}\n  faultTolerance: {runType: Async}", "spec.nodeGroups[0].minReplicas", "cannot be runType Async"),
                Arguments.of("a slice that does not divide the group", "command: [x]\n    replicas: 6\n    resources: {cpu: 1, memory: 1Gi}\n"
                        + "    placement: {level: rack, sliceSize: 4, sliceLevel: host}", "spec.nodeGroups[0].placement.sliceSize", "must divide replicas (6)"),
                Arguments.of("a slice size without its level", "command: [x]\n    replicas: 4\n    resources: {cpu: 1, memory: 1Gi}\n"
                        + "    placement: {level: rack, sliceSize: 2}", "spec.nodeGroups[0].placement", "sliceLevel"),
                Arguments.of("a slice of none", "command: [x]\n    replicas: 4\n    resources: {cpu: 1, memory: 1Gi}\n"
                        + "    placement: {level: rack, sliceSize: 0, sliceLevel: host}", "spec.nodeGroups[0].placement.sliceSize", "between"),
                Arguments.of("nothing must succeed", "command: [x]\n    minSuccessReplicas: 0\n    resources: {cpu: 1, memory: 1Gi}",
                        "spec.nodeGroups", "at least one node group"),
                Arguments.of("probe without command", "command: [x]\n    startupProbe: {periodSeconds: 5}\n    resources: {cpu: 1, memory: 1Gi}",
                        "spec.nodeGroups[0].startupProbe.command", "is required"),
                Arguments.of("probe period zero", "command: [x]\n    startupProbe: {command: [t], periodSeconds: 0}\n    resources: {cpu: 1, memory: 1Gi}",
                        "spec.nodeGroups[0].startupProbe.periodSeconds", "between"),
                Arguments.of("no ports", "command: [x]\n    ports: 0\n    resources: {cpu: 1, memory: 1Gi}", "spec.nodeGroups[0].ports", "between"),
                Arguments.of("memory limit below the request", "command: [x]\n    resources: {cpu: 1, memory: 1Gi}\n    limits: {memory: 512Mi}",
                        "spec.nodeGroups[0].limits.memory", "must be at least the memory request (1Gi)"),
                Arguments.of("memory limit below a request in bytes", "command: [x]\n    resources: {cpu: 1, memory: 1073741825}\n    limits: {memory: 1Gi}",
                        "spec.nodeGroups[0].limits.memory", "must be at least the memory request (1073741825)"),
                Arguments.of("memory limit not a quantity", "command: [x]\n    resources: {cpu: 1, memory: 1Gi}\n    limits: {memory: lots}",
                        "spec.nodeGroups[0].limits.memory", "not a memory quantity"),
                Arguments.of("memory limit a boolean", "command: [x]\n    resources: {cpu: 1, memory: 1Gi}\n    limits: {memory: true}",
                        "spec.nodeGroups[0].limits.memory", "must be a memory quantity"),
                Arguments.of("memory limit beyond 64Ti", "command: [x]\n    resources: {cpu: 1, memory: 1Gi}\n    limits: {memory: 1Ei}",
                        "spec.nodeGroups[0].limits.memory", "at most 64Ti"),
                Arguments.of("unknown limit", "command: [x]\n    resources: {cpu: 1, memory: 1Gi}\n    limits: {memory: 2Gi, cpu: 2}",
                        "spec.nodeGroups[0].limits.cpu", "unknown field"),
                Arguments.of("misspelt limit", "command: [x]\n    resources: {cpu: 1, memory: 1Gi}\n    limits: {memroy: 2Gi}",
                        "spec.nodeGroups[0].limits.memroy", "unknown field (did you mean 'memory'?)"),
                Arguments.of("limits not an object", "command: [x]\n    resources: {cpu: 1, memory: 1Gi}\n    limits: 2Gi",
                        "spec.nodeGroups[0].limits", "must be"));
    }

    static Stream<Arguments> badStorage() {
        return Stream.of(
                Arguments.of("{name: d, scope: run, subPath: ../other-workspace}", "spec.storage[0].subPath", "'..'"),
                Arguments.of("{name: d, scope: run, subPath: a/../../b}", "spec.storage[0].subPath", "'..'"),
                Arguments.of("{name: d, scope: job, subPath: /etc}", "spec.storage[0].subPath", "relative"),
                Arguments.of("{name: d, scope: job, subPath: ~root}", "spec.storage[0].subPath", "relative"),
                Arguments.of("{name: d, scope: job, mountPath: data}", "spec.storage[0].mountPath", "absolute"),
                Arguments.of("{name: d, scope: job, mountPath: /mnt/../etc}", "spec.storage[0].mountPath", "'..'"),
                Arguments.of("{name: d, scope: job, mountPath: /}", "spec.storage[0].mountPath", "root"),
                Arguments.of("{name: d, scope: forever}", "spec.storage[0].scope", "run, job, workspace"),
                Arguments.of("{name: Bad_Name, scope: run}", "spec.storage[0].name", ""),
                Arguments.of("{scope: run}", "spec.storage[0].name", "is required"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badStorage")
    void rejectsStorageThatCouldLeaveItsWorkspace(String storage, String field, String message) {
        String yaml = """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: j, workspace: w}
                spec:
                  storage: [%s]
                  nodeGroups:
                  - {name: g, command: [x], resources: {cpu: 1, memory: 1Gi}}
                """.formatted(storage);
        assertThat(problemsOf(yaml)).anySatisfy(p -> {
            assertThat(p.field()).isEqualTo(field);
            assertThat(p.message()).contains(message);
        });
    }

    private static String jobWithIdentity(String identity) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: j, workspace: w}
                spec:
                  identity: %s
                  nodeGroups:
                  - {name: g, command: [x], resources: {cpu: 1, memory: 1Gi}}
                """.formatted(identity);
    }

    @Test
    void readsAnIdentityWithItsDefaultLifetime() {
        JobSpec job = (JobSpec) read(jobWithIdentity("{audiences: [vault, 'https://minio.example.com']}")).get(0).spec();
        assertThat(job.identity().audiences()).containsExactly("vault", "https://minio.example.com");
        assertThat(job.identity().ttl()).isEqualTo(java.time.Duration.ofHours(1));
        JobSpec shorter = (JobSpec) read(jobWithIdentity("{audiences: [sts.amazonaws.com], ttl: 5m}")).get(0).spec();
        assertThat(shorter.identity().ttl()).isEqualTo(java.time.Duration.ofMinutes(5));
        assertThat(((JobSpec) read(JOB).get(0).spec()).identity()).isNull();
    }

    static Stream<Arguments> badIdentities() {
        return Stream.of(
                Arguments.of("{audiences: [vault, 42]}", "spec.identity.audiences[1]", "string"),
                Arguments.of("{audiences: [{a: b}]}", "spec.identity.audiences[0]", "string"),
                Arguments.of("{audiences: ['']}", "spec.identity.audiences[0]", ""),
                Arguments.of("{audiences: ['two words']}", "spec.identity.audiences[0]", "printable ASCII without spaces"),
                Arguments.of("{audiences: [\"a\\nb\"]}", "spec.identity.audiences[0]", "character 2"),
                Arguments.of("{audiences: [a, a]}", "spec.identity.audiences", "unique"),
                Arguments.of("{audiences: []}", "spec.identity.audiences", ""),
                Arguments.of("{audiences: [a, b, c, d, e, f, g, h, i]}", "spec.identity.audiences", ""),
                Arguments.of("{audiences: vault}", "spec.identity.audiences", "must be a list"),
                Arguments.of("{ttl: 1h}", "spec.identity.audiences", "is required"),
                Arguments.of("{audiences: [vault], ttl: 2d}", "spec.identity.ttl", "between 5m and 1d"),
                Arguments.of("{audiences: [vault], ttl: 1m}", "spec.identity.ttl", "between 5m and 1d"),
                Arguments.of("{audiences: [vault], ttl: soon}", "spec.identity.ttl", ""),
                Arguments.of("{audiences: [vault], tll: 1h}", "spec.identity.tll", "unknown field"),
                Arguments.of("vault", "spec.identity", ""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badIdentities")
    void rejectsBadIdentities(String identity, String field, String message) {
        assertThat(problemsOf(jobWithIdentity(identity))).anySatisfy(p -> {
            assertThat(p.field()).isEqualTo(field);
            assertThat(p.message()).contains(message);
        });
    }

    @Test
    void storageNamesAndMountPathsAreUnique() {
        assertThat(problemsOf("""
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: j, workspace: w}
                spec:
                  storage: [{name: a, scope: run, mountPath: /data}, {name: a, scope: job, mountPath: /data/}]
                  nodeGroups:
                  - {name: g, command: [x], resources: {cpu: 1, memory: 1Gi}}
                """)).extracting(Problem::field).containsExactlyInAnyOrder("spec.storage[1].name", "spec.storage[1].mountPath");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badJobs")
    void rejectsBadNodeGroups(String description, String groupFields, String field, String message) {
        String yaml = """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: j, workspace: w}
                spec:
                  nodeGroups:
                  - name: g
                    %s
                """.formatted(groupFields);
        assertThat(problemsOf(yaml)).anySatisfy(p -> {
            assertThat(p.field()).isEqualTo(field);
            assertThat(p.message()).contains(message);
        });
    }

    @Test
    void anElasticGroupIsReadWithItsMinimumAndARigidOneWithout() {
        String yaml = """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: j, workspace: w}
                spec:
                  nodeGroups:
                  - {name: elastic, command: [x], replicas: 4, minReplicas: 1, resources: {cpu: 1, memory: 1Gi}}
                  - {name: whole, command: [x], replicas: 2, minReplicas: 2, resources: {cpu: 1, memory: 1Gi}}
                  - {name: plain, command: [x], replicas: 2, resources: {cpu: 1, memory: 1Gi}}
                """;
        JobSpec job = (JobSpec) read(yaml).get(0).spec();
        assertThat(job.nodeGroups()).extracting(NodeGroupSpec::elastic).containsExactly(true, false, false);
        assertThat(job.nodeGroups()).extracting(NodeGroupSpec::minimum).containsExactly(1, 2, 2);
    }

    @Test
    void jobsDefaultToTheirGuaranteeWithAQuotaAndToIdleCapacityWithout() {
        JobSpec withQuota = (JobSpec) read(JOB.replace("priority: 5", "priority: 5\n  quota: gpus")).get(0).spec();
        assertThat(withQuota.idleResources()).isEqualTo(IdleMode.Disabled);
        assertThat(((JobSpec) read(JOB).get(0).spec()).idleResources()).isEqualTo(IdleMode.OnlyIdle);
        assertThat(problemsOf(JOB.replace("priority: 5", "priority: 5\n  idleResources: Sometimes\n  preemptionGracePeriod: 2d")))
                .extracting(Problem::field).containsExactlyInAnyOrder("spec.idleResources", "spec.preemptionGracePeriod");
        assertThat(problemsOf("""
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: q, workspace: w}
                spec: {min: {gpu: 1}, parent: a/b/c, withinQuota: Always}
                """)).extracting(Problem::field).containsExactlyInAnyOrder("spec.parent", "spec.withinQuota");
    }

    @Test
    void rejectsDuplicateNodeGroupNamesAndTooManyInstances() {
        List<Problem> problems = problemsOf("""
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: j, workspace: w}
                spec:
                  nodeGroups:
                  - {name: a, replicas: 10000, command: [x], resources: {cpu: 1, memory: 1Gi}}
                  - {name: a, replicas: 1, command: [x], resources: {cpu: 1, memory: 1Gi}}
                """);
        assertThat(problems).extracting(Problem::field).contains("spec.nodeGroups[1].name");
    }

    @Test
    void workspaceKindsMustNotNameAWorkspaceAndWorkspacedKindsMust() {
        assertThat(problemsOf("""
                apiVersion: slipstream/v1
                kind: Shape
                metadata: {name: small, workspace: team-a}
                spec: {cpu: 1, memory: 1Gi}
                """)).extracting(Problem::field).containsExactly("metadata.workspace");
        assertThat(problemsOf("""
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: q}
                spec: {min: {gpu: 1}}
                """)).extracting(Problem::field).containsExactly("metadata.workspace");
    }

    @Test
    void quotaMaxBelowMinIsRejected() {
        assertThat(problemsOf("""
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: q, workspace: w}
                spec: {min: {gpu: 8}, max: {gpu: 4}, type: Dedicated}
                """)).extracting(Problem::field).containsExactlyInAnyOrder("spec.max.gpu", "spec.gpuModel");
    }

    @Test
    void aFairSharingWeightIsANumberFromZeroAndOnlyWhereItDividesAPool() {
        String quota = """
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: q, workspace: w}
                spec: {min: {gpu: 8}, parent: root, fairSharing: WEIGHT}
                """;
        assertThat(((QuotaSpec) read(quota.replace("WEIGHT", "{weight: 0.5}")).get(0).spec()).fairSharing().weight()).isEqualTo(0.5);
        assertThat(((QuotaSpec) read(quota.replace("WEIGHT", "{weight: 0}")).get(0).spec()).fairSharing().weight()).isZero();
        assertThat(((QuotaSpec) read(quota.replace("WEIGHT", "{}")).get(0).spec()).fairSharing().weight()).isEqualTo(1.0);
        assertThat(problemsOf(quota.replace("WEIGHT", "{weight: -0.5}")))
                .containsExactly(new Problem("spec.fairSharing.weight", "must not be negative (is -0.5)"));
        assertThat(problemsOf(quota.replace("WEIGHT", "{weight: -2}")))
                .containsExactly(new Problem("spec.fairSharing.weight", "must not be negative (is -2)"));
        assertThat(problemsOf(quota.replace("WEIGHT", "{weight: \"3\"}")))
                .containsExactly(new Problem("spec.fairSharing.weight", "must be a number, not a string"));
        assertThat(problemsOf(quota.replace("WEIGHT", "{weight: 2000000.5}"))).extracting(Problem::field).containsExactly("spec.fairSharing.weight");
        assertThat(problemsOf(quota.replace("WEIGHT", "{wieght: 2}"))).extracting(Problem::field).containsExactly("spec.fairSharing.wieght");
        // A weight so small that a share overflows would read as weight 0's; one not finite is no weight; -0 is 0.
        assertThat(problemsOf(quota.replace("WEIGHT", "{weight: 5e-324}"))).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("spec.fairSharing.weight");
            assertThat(p.message()).startsWith("must be 0 or at least 0.000001");
        });
        assertThat(problemsOf(quota.replace("WEIGHT", "{weight: .nan}"))).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("spec.fairSharing.weight");
            assertThat(p.message()).isEqualTo("must be a finite number (is NaN)");
        });
        assertThat(problemsOf(quota.replace("WEIGHT", "{weight: .inf}"))).extracting(Problem::message).containsExactly("must be a finite number (is Infinity)");
        assertThat(((QuotaSpec) read(quota.replace("WEIGHT", "{weight: -0.0}")).get(0).spec()).fairSharing().weight()).isEqualTo(0.0).isNotNegative();
        assertThat(Double.doubleToRawLongBits(((QuotaSpec) read(quota.replace("WEIGHT", "{weight: -0.0}")).get(0).spec()).fairSharing().weight()))
                .isZero();
        // A General quota without a parent is its pool's root: a weight there would do nothing.
        assertThat(problemsOf(quota.replace("parent: root, ", "").replace("WEIGHT", "{weight: 2}")))
                .singleElement().satisfies(p -> {
                    assertThat(p.field()).isEqualTo("spec.fairSharing.weight");
                    assertThat(p.message()).contains("without a parent");
                });
        // Dedicated quotas share by GPU model, across the tenant: their weights count.
        assertThat(((QuotaSpec) read(quota.replace("parent: root, ", "type: Dedicated, gpuModel: h100, ").replace("WEIGHT", "{weight: 2}")).get(0).spec())
                .fairSharing().weight()).isEqualTo(2.0);
    }

    @Test
    void multiDocumentProblemsNameTheirDocument() {
        assertThatThrownBy(() -> read("""
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: ok}
                ---
                apiVersion: slipstream/v1
                kind: Widget
                metadata: {name: nope}
                spec: {}
                """))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems())
                        .containsExactly(new Problem("documents[1].kind", "'Widget' is not one of Workspace, Shape, Quota, Job, Secret, Topology")));
    }

    @Test
    void nonObjectDocumentIsRejected() {
        assertThat(problemsOf("- just\n- a list\n")).isNotEmpty();
        assertThat(problemsOf("42")).extracting(Problem::message).allMatch(m -> m.contains("must be an object"));
    }
}
