package io.slipstream.store;

/**
 * What an administrator declared of a node, strongest first: a node has at most one of them, and the stronger
 * replaces the weaker ({@link NodeCondition#afterDown}, {@link NodeCondition#afterCordon}).
 */
public enum NodeMode {
    /** Out of service: nothing new is placed on it, and what runs there is stopped at once (NODE_LOST). */
    Down,
    /** Cordoned, and what runs there is moved off with the usual notice, as a preemption: it stays cordoned after. */
    Draining,
    /** Nothing new is placed on it; what runs there keeps running. */
    Cordoned;

    /**
     * A stored mode, read as data: none (a row written before modes existed) is {@code Down}; one this build does not
     * know (written by a newer one) is {@code Cordoned}, which keeps new work off the node and stops nothing.
     */
    public static NodeMode read(String stored) {
        if (stored == null) {
            return Down;
        }
        for (NodeMode mode : values()) {
            if (mode.name().equals(stored)) {
                return mode;
            }
        }
        return Cordoned;
    }

    /** Whether this mode keeps the node from new placements while it leaves what runs there running (a cordon or a drain). */
    public boolean isCordon() {
        return this != Down;
    }
}
