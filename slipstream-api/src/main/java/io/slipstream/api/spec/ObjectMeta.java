package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.slipstream.api.label.Labels;
import java.util.Map;

/**
 * Identity of an applied object. {@code workspace} is {@code null} for cluster-wide kinds (workspaces, shapes).
 * {@code version} is {@code null} on input unless the user asks for a compare-and-set update. {@code labels} are the
 * user's, as in Kubernetes (a Job's go to its runs, and selectors pick by them); sorted by key, left out when none.
 */
public record ObjectMeta(String name, String workspace, Long version,
                         @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> labels) {
    public ObjectMeta {
        requireNonNull(name, "name is null");
        labels = Labels.sorted(labels);
    }

    public ObjectMeta(String name, String workspace, Long version) {
        this(name, workspace, version, Map.of());
    }

    public static ObjectMeta of(String name, String workspace) {
        return new ObjectMeta(name, workspace, null);
    }

    public ObjectMeta withVersion(Long newVersion) {
        return new ObjectMeta(name, workspace, newVersion, labels);
    }
}
