package io.slipstream.model;

/** What an entry of a run's history records. Stored and shown by name. */
public enum EventType {
    /** The run moved to another state (or, while stopping, changed why). */
    StateChanged,
    /** A cancel was accepted; the control loop carries it out. */
    CancelRequested,
    /** A queued run on idle capacity moved onto its quota's guarantee. */
    Promoted,
    /** A stopped attempt's work since its last checkpoint. */
    WorkLost,
    InstanceStarted,
    InstanceReady,
    InstanceProbeFailed,
    InstanceExited,
    InstanceLost,
    /** A failed instance was started again in place (runType Async); the message says which rank, why, and which restart. */
    InstanceRestarted,
    /**
     * An elastic run's world changed (docs/elastic.md): decided (it shrinks or grows, the message says from and to what
     * size and why), or started (every instance of the world before gone, its members start again in place).
     */
    WorldChanged
}
