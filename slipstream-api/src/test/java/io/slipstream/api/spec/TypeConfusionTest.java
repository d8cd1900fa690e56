package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.problem.Problems;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Every field of every kind, given a value of the wrong kind (an object, a list, a number, a bool, a string, null), is
 * refused with that field's path and a message saying what it must be, never with another exception. The fields are
 * found by walking complete, valid documents, so a field added to them is covered without touching the table.
 */
class TypeConfusionTest {
    static final String WORKSPACE = """
            apiVersion: slipstream/v1
            kind: Workspace
            metadata: {name: team-a, version: 3}
            spec: {members: [alice, bob]}
            """;
    static final String SHAPE = """
            apiVersion: slipstream/v1
            kind: Shape
            metadata: {name: gpu.small}
            spec: {cpu: 4, memory: 16Gi, gpu: 1, gpuModel: h100}
            """;
    static final String QUOTA = """
            apiVersion: slipstream/v1
            kind: Quota
            metadata: {name: team-a-gpu, workspace: team-a}
            spec:
              type: General
              min: {cpu: 16, memory: 64Gi, gpu: 8}
              max: {cpu: "32", memory: 128Gi, gpu: 16}
              parent: root
              overcommit: true
              withinQuota: LowerPriority
              gpuModel: h100
              fairSharing: {weight: 2.5}
            """;
    static final String JOB = """
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: train, workspace: team-a, version: 2, labels: {team: nlp, tier: gold}}
            spec:
              quota: team-a-gpu
              priority: 5
              idleResources: Acceptable
              startupOrder: InOrder
              maxRuntime: 72h
              maxRuntimePerAttempt: true
              preemptionGracePeriod: 30s
              faultTolerance:
                runType: Sync
                maxRestarts: 3
                maxPreemptions: 10
                maxNodeLostRestarts: 2
                maxHangRestarts: 2
                backoff: {base: 10s, cap: 5m}
                retryOn: {exitCodes: [137, "128-255"], errorPatterns: ["NCCL error"], reasons: [OOMKilled]}
                otherFailures: Fail
                sameErrorLimit: 3
                hangTimeout: 30m
                exitHangTimeout: 5m
              storage:
                - {name: shared, scope: job, subPath: data/in, mountPath: /data}
              schedule: {cron: "0 2 * * *", timeZone: Europe/Berlin, concurrencyPolicy: Forbid, startingDeadline: 1h, suspend: false}
              nodeGroups:
                - name: coordinator
                  replicas: 1
                  resources: {cpu: 2, memory: 4Gi, gpu: 1, gpuModel: h100}
                  limits: {memory: 6Gi}
                  command: [python, train.py, --role, coordinator]
                  env: {LEARNING_RATE: "0.1", MODE: fast}
                  image: ghcr.io/team-a/train:1
                  workingDir: out/run
                  maxRuntime: 1h
                  minSuccessReplicas: 1
                  ports: 2
                  startupProbe: {command: [test, -f, ready], periodSeconds: 5, failureThreshold: 3, initialDelaySeconds: 1}
                - name: worker
                  replicas: 3
                  shape: gpu.small
                  command: [python, train.py]
            """;

    /** Fields that take either a number or a string (quantities, exit codes). */
    private static final Set<String> NUMBER_OR_STRING = Set.of("cpu", "memory", "exitCodes[0]", "exitCodes[1]");

    private static final List<JsonNode> WRONG_VALUES = List.of(
            json("{}"), json("{\"x\": 1}"), json("[]"), json("[\"x\"]"), json("[{}]"), json("5"), json("-1.5"),
            json("true"), json("\"text\""), json("null"));

    private static JsonNode json(String text) {
        return Json.mapper().readTree(text);
    }

    /** One attack: a document with the value at {@code path} replaced by {@code value}. */
    record Case(String kind, String path, JsonNode value, JsonNode original, JsonNode document) {
        @Override
        public String toString() {
            return kind + " " + path + " = " + value;
        }
    }

    static Stream<Case> cases() {
        List<Case> cases = new ArrayList<>();
        for (String yaml : List.of(WORKSPACE, SHAPE, QUOTA, JOB)) {
            ObjectNode document = (ObjectNode) Json.yaml().readTree(yaml);
            assertThat(read(document)).as("the base document is valid:\n" + yaml).isEmpty();
            List<String> paths = new ArrayList<>();
            walk(document, "", paths);
            for (String path : paths) {
                for (JsonNode value : WRONG_VALUES) {
                    ObjectNode copy = document.deepCopy();
                    JsonNode original = replace(copy, path, value);
                    cases.add(new Case(document.get("kind").asString(), path, value, original, copy));
                }
            }
        }
        return cases.stream();
    }

    private static void walk(JsonNode node, String path, List<String> paths) {
        if (!path.isEmpty()) {
            paths.add(path);
        }
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> entry : node.properties()) {
                walk(entry.getValue(), path.isEmpty() ? entry.getKey() : path + "." + entry.getKey(), paths);
            }
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                walk(node.get(i), path + "[" + i + "]", paths);
            }
        }
    }

    /** Replaces the value at a path like {@code spec.nodeGroups[0].command[1]}; returns what was there. */
    private static JsonNode replace(ObjectNode root, String path, JsonNode value) {
        List<Object> steps = new ArrayList<>();
        for (String part : path.split("\\.")) {
            int bracket = part.indexOf('[');
            steps.add(bracket < 0 ? part : part.substring(0, bracket));
            while (bracket >= 0) {
                int close = part.indexOf(']', bracket);
                steps.add(Integer.parseInt(part.substring(bracket + 1, close)));
                bracket = part.indexOf('[', close);
            }
        }
        JsonNode parent = root;
        for (int i = 0; i < steps.size() - 1; i++) {
            parent = steps.get(i) instanceof Integer index ? parent.get(index) : parent.get((String) steps.get(i));
        }
        Object last = steps.get(steps.size() - 1);
        if (last instanceof Integer index) {
            JsonNode original = parent.get(index);
            ((ArrayNode) parent).set(index, value.deepCopy());
            return original;
        }
        JsonNode original = parent.get((String) last);
        ((ObjectNode) parent).set((String) last, value.deepCopy());
        return original;
    }

    private static List<Problem> read(JsonNode document) {
        Problems problems = new Problems();
        SpecReader.read(document, SpecReader.Mode.USER, "", problems);
        return problems.list();
    }

    private static String kindOf(JsonNode node) {
        if (node.isNull()) {
            return "null";
        }
        if (node.isObject()) {
            return "object";
        }
        if (node.isArray()) {
            return "list";
        }
        if (node.isBoolean()) {
            return "bool";
        }
        return node.isNumber() ? "number" : "string";
    }

    private static boolean accepted(Case attack) {
        String expected = kindOf(attack.original());
        String given = kindOf(attack.value());
        if (expected.equals(given)) {
            return true;
        }
        String field = attack.path().substring(attack.path().lastIndexOf('.') + 1);
        return NUMBER_OR_STRING.contains(field) && Set.of("number", "string").containsAll(Set.of(expected, given));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void aValueOfTheWrongKindIsRefusedWithItsPath(Case attack) {
        List<Problem> problems = read(attack.document()); // throws nothing: problems are collected
        for (Problem problem : problems) {
            assertThat(problem.message()).as(attack + ": " + problem).doesNotContain("Exception").doesNotContain("tools.jackson");
        }
        boolean arrayItem = attack.path().endsWith("]");
        if (attack.value().isNull() && !arrayItem) {
            return; // null is "not given": refused only if the field is required, which other tests check
        }
        if (accepted(attack)) {
            return; // the right kind of value, maybe not the right value: other tests check those
        }
        if (attack.path().contains(".env.") && attack.value().isObject()) {
            // An object is an env value's other form, {secretRef: secret/key}: this one is refused field by field.
            assertThat(problems).as(attack.toString()).isNotEmpty().allSatisfy(problem -> assertThat(problem.field()).startsWith(attack.path()));
            return;
        }
        assertThat(problems).as(attack.toString()).anySatisfy(problem -> {
            assertThat(problem.field()).isEqualTo(attack.path());
            assertThat(problem.message()).startsWith("must").contains("not " + FieldReader.describe(attack.value()));
        });
    }

    @Test
    void everyFieldOfTheWrongKindIsReportedAtOnce() {
        ObjectNode job = (ObjectNode) Json.yaml().readTree(JOB);
        replace(job, "spec.nodeGroups[0].command[1]", json("{\"a\": 1}"));
        replace(job, "spec.nodeGroups[0].env.MODE", json("[1, 2]"));
        replace(job, "spec.nodeGroups[0].startupProbe.command[0]", json("{}"));
        replace(job, "spec.nodeGroups[1].replicas", json("\"three\""));
        replace(job, "spec.faultTolerance.retryOn.errorPatterns[0]", json("[]"));
        replace(job, "spec.storage[0].scope", json("true"));
        assertThat(read(job)).extracting(Problem::field).containsExactlyInAnyOrder("spec.nodeGroups[0].command[1]",
                "spec.nodeGroups[0].env.MODE", "spec.nodeGroups[0].startupProbe.command[0]", "spec.nodeGroups[1].replicas",
                "spec.faultTolerance.retryOn.errorPatterns[0]", "spec.storage[0].scope");
    }

    @Test
    void theDocumentItselfMustBeAnObject() {
        for (String body : List.of("[[1]]", "[5, \"x\", true, null]", "[{\"kind\": []}]")) {
            try {
                Documents.readAll(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                throw new AssertionError("accepted " + body);
            } catch (InvalidInputException e) {
                assertThat(e.problems()).isNotEmpty().allSatisfy(p -> assertThat(p.message()).doesNotContain("Exception"));
            }
        }
    }

    @Test
    void theSameAttacksInsideAJsonArrayOfDocumentsNameTheDocument() {
        String body = "[" + Json.mapper().writeValueAsString(Json.yaml().readTree(WORKSPACE)) + ","
                + Json.mapper().writeValueAsString(Json.yaml().readTree(JOB)).replace("\"MODE\":\"fast\"", "\"MODE\":[\"secret\"]") + "]";
        try {
            Documents.readAll(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            throw new AssertionError("accepted");
        } catch (InvalidInputException e) {
            assertThat(e.problems()).singleElement().satisfies(p -> {
                assertThat(p.field()).isEqualTo("documents[1].spec.nodeGroups[0].env.MODE");
                assertThat(p.message()).startsWith("must be a string").endsWith("not a list");
            });
        }
    }
}
