package io.slipstream.api.run;

/**
 * The life of one instance (one replica of one node group in one attempt).
 * {@code PENDING}: placed on a node, not yet launched. {@code KILLED}: stopped by the platform (cancel, or a
 * sibling failed). {@code LOST}: its process is gone and its exit code could not be recovered.
 * {@code RESOURCE_PREEMPTED}: stopped because its run's resources were reclaimed; the run is queued again.
 * {@code NODE_LOST}: its node was lost (declared down, or stopped answering); the run is restarted elsewhere.
 */
public enum InstanceState {
    PENDING,
    RUNNING,
    SUCCEEDED,
    FAILED,
    KILLED,
    LOST,
    RESOURCE_PREEMPTED,
    NODE_LOST;

    public boolean isFinal() {
        return this != PENDING && this != RUNNING;
    }
}
