package io.slipstream.store;

/**
 * The store cannot be served as it is: damaged, missing, rolled back, or not the data directory's. The message is for
 * the operator, on one line: which file, what is wrong, and what to do. It carries no cause on purpose: what starts the
 * server reports the deepest cause's message, and that must be this one, not the database's.
 */
public final class StoreDamagedException extends RuntimeException {
    public StoreDamagedException(String message) {
        super(message);
    }
}
