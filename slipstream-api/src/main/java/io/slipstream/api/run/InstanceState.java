package io.slipstream.api.run;

/**
 * The life of one instance (one replica of one node group in one attempt).
 * {@code PENDING}: placed on a node, not yet launched. {@code KILLED}: stopped by the platform (cancel, or a
 * sibling failed). {@code LOST}: its process is gone and its exit code could not be recovered.
 */
public enum InstanceState {
    PENDING,
    RUNNING,
    SUCCEEDED,
    FAILED,
    KILLED,
    LOST;

    public boolean isFinal() {
        return this == SUCCEEDED || this == FAILED || this == KILLED || this == LOST;
    }
}
