package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Bounds on moving guaranteed runs to defragment the cluster (only runs of quotas with {@code allowMoves}): at most
 * {@code maxMovesPerCycle} moves in one cycle, and never a run moved less than {@code moveCooldown} ago.
 */
public record Defragmentation(int maxMovesPerCycle, Duration moveCooldown) {
    /** 8 moves a cycle (one 8-GPU node's worth of 1-GPU runs), a run at most once every 30 minutes. */
    public static final Defragmentation DEFAULT = new Defragmentation(8, Duration.ofMinutes(30));

    public Defragmentation {
        requireNonNull(moveCooldown, "moveCooldown is null");
        if (maxMovesPerCycle < 0) {
            throw new IllegalArgumentException("maxMovesPerCycle must be at least 0, is " + maxMovesPerCycle);
        }
        if (moveCooldown.isNegative()) {
            throw new IllegalArgumentException("moveCooldown must not be negative, is " + moveCooldown);
        }
    }
}
