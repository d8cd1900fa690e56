package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Where a node group's instances go relative to each other in the cluster's topology ({@link TopologySpec}): all in one
 * domain of {@code level} ({@code Required}: or the run waits), or preferably (the tightest domain that holds them,
 * climbing to broader levels, else anywhere).
 */
public record PlacementSpec(String level, Mode mode) {
    /** How strict the placement is. */
    public enum Mode {
        Required,
        Preferred
    }

    public PlacementSpec {
        requireNonNull(level, "level is null");
        requireNonNull(mode, "mode is null");
    }

    /** The document form: {@code mode} defaults to {@code Required}, as a constraint that is written is meant. */
    @JsonCreator
    public static PlacementSpec of(@JsonProperty("level") String level, @JsonProperty("mode") Mode mode) {
        return new PlacementSpec(level, mode == null ? Mode.Required : mode);
    }
}
