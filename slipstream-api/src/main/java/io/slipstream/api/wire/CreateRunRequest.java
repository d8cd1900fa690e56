package io.slipstream.api.wire;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.Overrides;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * Body of {@code POST /api/v1/runs}: either {@code workspace} + {@code job} (run a job applied earlier) or
 * {@code jobDocument} (apply that Job document and run it, in one step; {@code documents}: other documents to apply with
 * it in the same transaction, such as its workspace and quota, so that a refused run leaves nothing behind), with
 * optional {@code overrides} for this run
 * only (path to value, see {@link Overrides}), and {@code labels} of this run (on top of its job's; Kubernetes' rules,
 * each problem at {@code labels.<key>}). The job document itself is validated where it is applied.
 *
 * @param overrides path to value; values other than strings (numbers, lists, maps) kept as JSON, which is YAML
 */
public record CreateRunRequest(String workspace, String job, JsonNode jobDocument, List<JsonNode> documents, Map<String, String> overrides,
                               Map<String, String> labels) {
    /** The most overrides one run may have. */
    public static final int MAX_OVERRIDES = 100;

    /** The most other documents one request may apply with its job. */
    public static final int MAX_DOCUMENTS = 100;

    public CreateRunRequest {
        documents = documents == null ? List.of() : List.copyOf(documents);
        overrides = overrides == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(overrides));
        labels = io.slipstream.api.label.Labels.sorted(labels);
    }

    public CreateRunRequest(String workspace, String job, JsonNode jobDocument, Map<String, String> overrides) {
        this(workspace, job, jobDocument, List.of(), overrides, Map.of());
    }

    /** Reads a request body; throws with every problem, each with its field. */
    public static CreateRunRequest read(JsonNode tree) {
        FieldReader body = FieldReader.of(tree, "", new Problems());
        String workspace = body.string("workspace", false, 63);
        String job = body.string("job", false, 63);
        JsonNode jobDocument = body.get("jobDocument");
        List<JsonNode> documents = body.array("documents", false, MAX_DOCUMENTS);
        Map<String, String> overrides = overrides(body);
        Map<String, String> labels = labels(body);
        body.finish();
        if (jobDocument != null && (workspace != null || job != null)) {
            body.problems().add("jobDocument", "give either jobDocument, or workspace and job, not both");
        }
        if (jobDocument == null && (workspace == null || job == null)) {
            body.problems().add(workspace == null ? "workspace" : "job", "is required (or give a jobDocument)");
        }
        if (documents != null && jobDocument == null) {
            body.problems().add("documents", "go with a jobDocument (they are applied with it)");
        }
        body.problems().throwIfAny("the run request is invalid");
        return new CreateRunRequest(workspace, job, jobDocument, documents, overrides, labels);
    }

    /** Labels are strings (as in Kubernetes, a number is refused, not converted), each checked by Kubernetes' rules. */
    private static Map<String, String> labels(FieldReader body) {
        List<Map.Entry<String, JsonNode>> entries = body.entries("labels", false, io.slipstream.api.label.Labels.MAX_LABELS);
        Map<String, String> labels = new LinkedHashMap<>();
        if (entries != null) {
            for (Map.Entry<String, JsonNode> entry : entries) {
                if (!entry.getValue().isString()) {
                    body.problems().add("labels." + entry.getKey(), "must be a string, not " + FieldReader.describe(entry.getValue()));
                } else {
                    labels.put(entry.getKey(), entry.getValue().asString());
                }
            }
            io.slipstream.api.label.Labels.problems("labels", labels).forEach(p -> body.problems().add(p.field(), p.message()));
        }
        return labels;
    }

    /** An env value is text: a number or true/false is taken as written, a list or a map is refused. */
    private static Map<String, String> overrides(FieldReader body) {
        List<Map.Entry<String, JsonNode>> entries = body.entries("overrides", false, MAX_OVERRIDES);
        Map<String, String> overrides = new LinkedHashMap<>();
        if (entries != null) {
            for (Map.Entry<String, JsonNode> entry : entries) {
                JsonNode value = entry.getValue();
                if (value.isNull()) {
                    body.problems().add("overrides." + entry.getKey(), "must be a value, not null");
                } else if (Overrides.isEnvValue(entry.getKey()) && value.isContainer()) {
                    body.problems().add("overrides." + entry.getKey(), "must be a string, not " + FieldReader.describe(value));
                } else {
                    overrides.put(entry.getKey(), value.isString() ? value.asString() : value.toString());
                }
            }
        }
        return overrides;
    }
}
