package io.slipstream.store;

/** What a usage report adds up by. */
public enum UsageGrouping {
    WORKSPACE,
    /** A workspace's quota; runs without one under a quota of {@code null}. */
    QUOTA,
    /** The submitter; a schedule's runs under a user of {@code null}. Lending is a quota's, so it has no user. */
    USER,
    /** A workspace's job. Lending is a quota's, so it has no job. */
    JOB;

    /** Whether lent time can be told apart in this grouping (it belongs to quotas, not to users or jobs). */
    public boolean countsLending() {
        return this == WORKSPACE || this == QUOTA;
    }
}
