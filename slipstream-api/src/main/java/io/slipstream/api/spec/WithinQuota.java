package io.slipstream.api.spec;

/** Whether a run may preempt lower-priority guaranteed runs of its own quota when the quota is full. */
public enum WithinQuota {
    Never,
    LowerPriority
}
