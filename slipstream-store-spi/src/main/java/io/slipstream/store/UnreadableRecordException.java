package io.slipstream.store;

/**
 * A stored record this server cannot read: its stored form does not bind (a value renamed or retyped by hand or by a
 * bug), or it was written by a newer server. Only that record is affected; lists leave it out and say so in the log.
 */
public final class UnreadableRecordException extends RuntimeException {
    private final String record;
    private final String workspace;
    private final String why;

    /**
     * {@code record} names it ("run r-1", "Job team-a/train"), {@code workspace} is where it lives ({@code null}:
     * cluster-wide, or not known), {@code why} says what could not be read.
     */
    public UnreadableRecordException(String record, String workspace, String why, Throwable cause) {
        super(record + " is stored in a form this server cannot read: " + why, cause);
        this.record = record;
        this.workspace = workspace;
        this.why = why;
    }

    /** Where the record lives, so that it is named only to those who may see it; {@code null} when cluster-wide. */
    public String workspace() {
        return workspace;
    }

    public String record() {
        return record;
    }

    public String why() {
        return why;
    }
}
