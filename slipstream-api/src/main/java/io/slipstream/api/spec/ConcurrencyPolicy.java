package io.slipstream.api.spec;

/** What a schedule does when a run it started is still active at the next due time. */
public enum ConcurrencyPolicy {
    /** Start another run anyway. */
    Allow,
    /** Skip this due time. */
    Forbid,
    /** Cancel the active run and start a new one. */
    Replace
}
