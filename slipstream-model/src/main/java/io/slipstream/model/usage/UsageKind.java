package io.slipstream.model.usage;

/** What a stretch of a run's (or a quota's) time is accounted as. Stored by name. */
public enum UsageKind {
    /** The run waited in its queue; what it asked for counts as queued demand. */
    QUEUED,
    /** The run held resources on its quota's guarantee. */
    IN_QUOTA,
    /** The run held resources borrowed from idle capacity (NotInQuota). */
    BORROWED,
    /** A quota's unused guarantee was held by borrowers of its sharing pool (no run: the quota's own record). */
    LENT
}
