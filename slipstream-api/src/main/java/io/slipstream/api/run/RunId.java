package io.slipstream.api.run;

import static java.util.Objects.requireNonNull;

import java.security.SecureRandom;
import java.util.regex.Pattern;

/** Identifies a run across the whole installation: the job's name and a random suffix, {@code train-k3x9q2mz}. */
public record RunId(String value) implements Comparable<RunId> {
    private static final Pattern FORMAT = Pattern.compile("[a-z0-9]([-a-z0-9]{0,70}[a-z0-9])?");
    private static final char[] ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    public RunId {
        requireNonNull(value, "value is null");
        if (!FORMAT.matcher(value).matches()) {
            throw new IllegalArgumentException("not a run id: " + value);
        }
    }

    /** Whether {@code text} could be a run id (used to answer 404 instead of 400 for garbage in a URL). */
    public static boolean isValid(String text) {
        return text != null && FORMAT.matcher(text).matches();
    }

    public static RunId newFor(String jobName) {
        StringBuilder id = new StringBuilder(jobName).append('-');
        for (int i = 0; i < 8; i++) {
            id.append(ALPHABET[RANDOM.nextInt(ALPHABET.length)]);
        }
        return new RunId(id.toString());
    }

    // Written out, not left to the record, as QuotaId's: run ids are map keys in every scheduling pass. The same values
    // as the record's own.
    @Override
    public boolean equals(Object other) {
        return other == this || other instanceof RunId id && value.equals(id.value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    @Override
    public int compareTo(RunId other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
