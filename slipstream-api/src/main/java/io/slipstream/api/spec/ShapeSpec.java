package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** A named instance size from the admin's catalogue. */
public record ShapeSpec(@JsonValue Resources resources) implements Spec {
    /** A shape's spec is its resources, written flat: {@code {cpu, memory, gpu, gpuModel}}. */
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    public static ShapeSpec of(Resources resources) {
        return new ShapeSpec(resources);
    }

    public ShapeSpec {
        requireNonNull(resources, "resources is null");
    }

    @Override
    public Kind kind() {
        return Kind.Shape;
    }
}
