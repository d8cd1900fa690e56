package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

/**
 * Identity of an applied object. {@code workspace} is {@code null} for cluster-wide kinds (workspaces, shapes).
 * {@code version} is {@code null} on input unless the user asks for a compare-and-set update.
 */
public record ObjectMeta(String name, String workspace, Long version) {
    public ObjectMeta {
        requireNonNull(name, "name is null");
    }

    public static ObjectMeta of(String name, String workspace) {
        return new ObjectMeta(name, workspace, null);
    }
}
