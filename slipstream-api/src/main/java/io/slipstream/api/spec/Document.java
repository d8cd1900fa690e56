package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

/** A validated document: {@code apiVersion: slipstream/v1}, kind, metadata and spec. */
public record Document<S extends Spec>(ObjectMeta metadata, S spec) {
    public static final String API_VERSION = "slipstream/v1";

    public Document {
        requireNonNull(metadata, "metadata is null");
        requireNonNull(spec, "spec is null");
    }

    public Kind kind() {
        return spec.kind();
    }

    public String name() {
        return metadata.name();
    }

    public String workspace() {
        return metadata.workspace();
    }

    /** A readable reference such as {@code Job team-a/bert}. */
    public String reference() {
        return kind() + " " + (workspace() == null ? "" : workspace() + "/") + name();
    }
}
