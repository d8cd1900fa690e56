package io.slipstream.store;

/**
 * A compare-and-set write found a different version than expected (someone else changed the object first), or
 * a create found the object already there. Nothing was written.
 */
public final class ConflictException extends RuntimeException {
    public ConflictException(String message) {
        super(message, null, false, false);
    }
}
