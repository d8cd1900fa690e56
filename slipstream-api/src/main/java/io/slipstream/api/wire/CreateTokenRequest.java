package io.slipstream.api.wire;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import tools.jackson.databind.JsonNode;

/** Body of {@code POST /api/v1/tokens}. {@code expiresInDays} is optional (no expiry when absent). */
public record CreateTokenRequest(String user, boolean admin, String description, Integer expiresInDays) {
    /** Reads a request body; throws with every problem, each with its field. */
    public static CreateTokenRequest read(JsonNode tree) {
        FieldReader body = FieldReader.of(tree, "", new Problems());
        String user = body.string("user", true, 128);
        Boolean admin = body.bool("admin", false);
        String description = body.string("description", false, 256);
        Long days = body.integer("expiresInDays", false, 1, 3650);
        body.finish();
        body.problems().throwIfAny("the token request is invalid");
        return new CreateTokenRequest(user, admin != null && admin, description, days == null ? null : days.intValue());
    }
}
