package io.slipstream.store;

/**
 * A stored record this server cannot read: its stored form does not bind (a value renamed or retyped by hand or by a
 * bug), or it was written by a newer server. Only that record is affected; lists leave it out and say so in the log.
 */
public final class UnreadableRecordException extends RuntimeException {
    private final String record;
    private final String why;

    /** {@code record} names it ("run r-1", "Job team-a/train"); {@code why} says what could not be read. */
    public UnreadableRecordException(String record, String why, Throwable cause) {
        super(record + " is stored in a form this server cannot read: " + why, cause);
        this.record = record;
        this.why = why;
    }

    public String record() {
        return record;
    }

    public String why() {
        return why;
    }
}
