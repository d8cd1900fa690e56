package io.slipstream.scheduler;

/**
 * Whether a borrower of a quota below its fair share may preempt other quotas' borrowers ({@link FairPreemption}): the
 * server's {@code fairSharing.preemption}. Borrowers are admitted in share order either way.
 */
public enum FairSharingPreemption {
    /** Share order only: a borrower keeps what it holds until it ends or the quota that lent it takes it back. */
    Never,
    /**
     * Kueue's rule S2-a: a borrower preempts another quota's borrower only if its quota's share with it admitted is at
     * most the victim quota's share without the victim. Two quotas can then never preempt each other back and forth.
     */
    LessThanOrEqualToFinalShare;

    /** The server's default: the team that queues first does not keep all of the idle capacity (docs/quotas.md). */
    public static final FairSharingPreemption DEFAULT = LessThanOrEqualToFinalShare;
}
