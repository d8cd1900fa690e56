package io.slipstream.api.spec;

import java.util.List;

/** A team's space: the users who may see and change its objects. */
public record WorkspaceSpec(List<String> members) implements Spec {
    public WorkspaceSpec {
        members = List.copyOf(members);
    }

    @Override
    public Kind kind() {
        return Kind.Workspace;
    }
}
