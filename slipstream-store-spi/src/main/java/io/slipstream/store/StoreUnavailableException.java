package io.slipstream.store;

/**
 * The store cannot be reached now (its server is down, the network to it is, or no connection came within the
 * pool's timeout), or cannot do this now (a row it needs stayed locked by another transaction past the lock timeout). Whether the work was done is known: it was not, unless it was a commit whose answer was lost
 * (then retrying with the same idempotency key is safe). Callers answer {@code 503} and try again later; it is never
 * a bug of the caller.
 */
public final class StoreUnavailableException extends RuntimeException {
    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
