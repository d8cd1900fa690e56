package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * A value from a Secret, in memory only. It never shows itself: {@link #toString()} and its JSON form are {@code ***},
 * so no record, log line or serialized object that holds one can print it. Code that needs the value calls
 * {@link #reveal()}, which keeps every such place easy to find.
 */
public final class SecretValue {
    /** What is shown instead of a secret value, everywhere. */
    public static final String MASK = "***";

    private final String value;

    private SecretValue(String value) {
        this.value = requireNonNull(value, "value is null");
    }

    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    public static SecretValue of(String value) {
        return new SecretValue(value);
    }

    /** The value itself: only for what puts it into an instance, or encrypts it. */
    public String reveal() {
        return value;
    }

    /** Its size in UTF-8 bytes (shown in place of the value where a size matters). */
    public int utf8Length() {
        return value.getBytes(StandardCharsets.UTF_8).length;
    }

    @JsonValue
    @Override
    public String toString() {
        return MASK;
    }

    /** Compares in constant time (for "unchanged" on apply). */
    @Override
    public boolean equals(Object other) {
        return other instanceof SecretValue that
                && MessageDigest.isEqual(value.getBytes(StandardCharsets.UTF_8), that.value.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public int hashCode() {
        return 0; // values are never keys; a constant keeps hashing from depending on the value
    }
}
