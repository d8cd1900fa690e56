package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

/**
 * Where a node group's instances must be, or should be, relative to each other in the cluster's topology: all in one
 * domain of a level (a rack, a block), and optionally in slices: every {@code sliceSize} consecutive ranks of the
 * group in one domain of a narrower level (or the same). Levels index the topology's levels, broadest first ({@link
 * NodeState#domains}); the names are for messages.
 *
 * @param required  all instances of the group in one domain of the level, or the run waits; otherwise preferred: the
 *                  tightest domain of that level that holds them, else of the next broader level, and so on, else
 *                  anywhere
 * @param sliceSize instances per slice ({@code 0}: no slices); slices are always required, whatever {@code required}
 *                  says of the group (a slice is what a framework's inner group assumes, such as tensor parallelism)
 */
public record Locality(int level, String levelName, boolean required, int sliceSize, int sliceLevel, String sliceLevelName) {
    public Locality {
        requireNonNull(levelName, "levelName is null");
        if (level < 0) {
            throw new IllegalArgumentException("level is negative: " + level);
        }
        if (sliceSize < 0 || (sliceSize > 0 && (sliceLevel < level || sliceLevelName == null))) {
            throw new IllegalArgumentException("a slice needs a size and a level at or below the group's: " + sliceSize + " at " + sliceLevel);
        }
    }

    /** Without slices. */
    public Locality(int level, String levelName, boolean required) {
        this(level, levelName, required, 0, level, null);
    }

    boolean sliced() {
        return sliceSize > 0;
    }
}
