package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

/**
 * Where a node group's instances must be, or should be, relative to each other in the cluster's topology: all in one
 * domain of a level (a rack, a block). {@code level} indexes the topology's levels, broadest first ({@link
 * NodeState#domains}); {@code levelName} is for messages.
 *
 * @param required all instances of the group in one domain of the level, or the run waits; otherwise preferred: the
 *                 tightest domain of that level that holds them, else of the next broader level, and so on, else anywhere
 */
public record Locality(int level, String levelName, boolean required) {
    public Locality {
        requireNonNull(levelName, "levelName is null");
        if (level < 0) {
            throw new IllegalArgumentException("level is negative: " + level);
        }
    }
}
