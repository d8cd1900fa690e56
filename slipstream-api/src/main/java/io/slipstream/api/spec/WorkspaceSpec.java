package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonCreator;
import java.util.List;

/** A team's space: the users who may see and change its objects. */
public record WorkspaceSpec(List<String> members) implements Spec {
    @JsonCreator(mode = JsonCreator.Mode.PROPERTIES)
    public WorkspaceSpec {
        members = members == null ? List.of() : List.copyOf(members);
    }

    @Override
    public Kind kind() {
        return Kind.Workspace;
    }
}
