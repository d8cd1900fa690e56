package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Where a node group's instances go relative to each other in the cluster's topology ({@link TopologySpec}): all in one
 * domain of {@code level} ({@code Required}: or the run waits), or preferably (the tightest domain that holds them,
 * climbing to broader levels, else anywhere); and optionally in slices: every {@code sliceSize} consecutive ranks of
 * the group in one domain of {@code sliceLevel}, always (Kueue's slice constraint, Slurm's {@code --segment}).
 *
 * @param sliceSize  instances per slice ({@code null}: no slices); divides the group's replicas
 * @param sliceLevel the level each slice shares a domain of: {@code level} or a narrower one; given with {@code sliceSize}
 */
public record PlacementSpec(String level, Mode mode, @JsonInclude(JsonInclude.Include.NON_NULL) Integer sliceSize,
        @JsonInclude(JsonInclude.Include.NON_NULL) String sliceLevel) {
    /** How strict the placement is. */
    public enum Mode {
        Required,
        Preferred
    }

    public PlacementSpec {
        requireNonNull(level, "level is null");
        requireNonNull(mode, "mode is null");
        if ((sliceSize == null) != (sliceLevel == null)) {
            throw new IllegalArgumentException("sliceSize and sliceLevel are given together");
        }
    }

    /** Without slices. */
    public PlacementSpec(String level, Mode mode) {
        this(level, mode, null, null);
    }

    /** The document form: {@code mode} defaults to {@code Required}, as a constraint that is written is meant. */
    @JsonCreator
    public static PlacementSpec of(@JsonProperty("level") String level, @JsonProperty("mode") Mode mode, @JsonProperty("sliceSize") Integer sliceSize,
            @JsonProperty("sliceLevel") String sliceLevel) {
        return new PlacementSpec(level, mode == null ? Mode.Required : mode, sliceSize, sliceLevel);
    }
}
