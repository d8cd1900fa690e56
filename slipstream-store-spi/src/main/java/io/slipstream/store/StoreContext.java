package io.slipstream.store;

import java.nio.file.Path;

/** What the server gives a store it opens ({@link StoreFactory#create}). */
public interface StoreContext {
    /** The server's data directory (absolute, exists, the server's own); {@code <dataDir>/store} is the store's. */
    Path dataDir();
}
