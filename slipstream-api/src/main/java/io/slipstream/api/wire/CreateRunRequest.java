package io.slipstream.api.wire;

import tools.jackson.databind.JsonNode;

/**
 * Body of {@code POST /api/v1/runs}: either {@code workspace} + {@code job} (run a job applied earlier) or
 * {@code jobDocument} (apply that Job document and run it, in one step).
 */
public record CreateRunRequest(String workspace, String job, JsonNode jobDocument) {
}
