package io.slipstream.store;

/**
 * A store's settings, as its {@link StoreFactory} read them from the config file. Opaque to the server, which only
 * hands them back to the factory named by {@link #store()}. Their {@code toString()} must not show a password.
 */
public interface StoreSettings {
    /** The {@link StoreFactory#name()} of the factory that reads these and opens the store from them. */
    String store();
}
