package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

/** A named instance size from the admin's catalogue. */
public record ShapeSpec(Resources resources) implements Spec {
    public ShapeSpec {
        requireNonNull(resources, "resources is null");
    }

    @Override
    public Kind kind() {
        return Kind.Shape;
    }
}
