package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import java.time.Instant;

/**
 * A node's condition as an administrator declared it: {@link NodeMode Down, Draining or Cordoned}, why, and since when.
 * A node without one is Ready. The rules that change it are here, pure, so that every store keeps them alike: down
 * wins (a cordon or drain becomes Down; a node down stays down when cordoned or drained, and only {@code up} lifts
 * it), a drain makes a cordon a drain, and otherwise the first declaration is kept.
 */
public record NodeCondition(String node, NodeMode mode, String reason, Instant since) {
    public NodeCondition {
        requireNonNull(node, "node is null");
        requireNonNull(mode, "mode is null");
        requireNonNull(reason, "reason is null");
        requireNonNull(since, "since is null");
    }

    /** The condition of a node declared down. */
    public static NodeCondition of(NodeDown down) {
        return new NodeCondition(down.node(), NodeMode.Down, down.reason(), down.since());
    }

    /** This condition as a declaration of down ({@link NodeMode#Down} only). */
    public NodeDown asDown() {
        if (mode != NodeMode.Down) {
            throw new IllegalStateException("node " + node + " is " + mode + ", not Down");
        }
        return new NodeDown(node, reason, since);
    }

    /** After {@code down} is declared over {@code current} ({@code null}: Ready): down wins; a node already down keeps its first declaration. */
    public static NodeCondition afterDown(NodeCondition current, NodeDown down) {
        return current != null && current.mode == NodeMode.Down ? current : of(down);
    }

    /** After {@code up} over {@code current}: a down node is Ready ({@code null}); a cordon or drain stays (uncordon lifts it). */
    public static NodeCondition afterUp(NodeCondition current) {
        return current == null || current.mode == NodeMode.Down ? null : current;
    }

    /**
     * After a cordon or a drain ({@code cordon.mode()} Cordoned or Draining) over {@code current}: a Ready node takes
     * it; a cordoned node that is drained is Draining (with the drain's reason and time); anything else stays as it is
     * (down wins, a drain goes on, a second cordon keeps the first).
     */
    public static NodeCondition afterCordon(NodeCondition current, NodeCondition cordon) {
        if (!cordon.mode.isCordon()) {
            throw new IllegalArgumentException("not a cordon: " + cordon.mode);
        }
        if (current == null || current.mode == NodeMode.Cordoned && cordon.mode == NodeMode.Draining) {
            return cordon;
        }
        return current;
    }

    /** After {@code uncordon} over {@code current}: a cordoned or draining node is Ready ({@code null}); a down node stays down. */
    public static NodeCondition afterUncordon(NodeCondition current) {
        return current == null || current.mode.isCordon() ? null : current;
    }
}
