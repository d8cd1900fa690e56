package io.slipstream.store;

import io.slipstream.api.spec.FieldReader;

/**
 * Makes one kind of {@link Store}, chosen by name in the server's config file: {@code store.type}, or the JDBC URL's
 * sub-protocol ({@code store.url: jdbc:postgresql://...} selects {@code postgresql}); without a {@code store:} block,
 * {@code h2}, the embedded store. Found with {@link java.util.ServiceLoader}: an implementation lists itself in
 * {@code META-INF/services/io.slipstream.store.StoreFactory} and has a public no-argument constructor.
 */
public interface StoreFactory {
    /** The name that selects this store: lower case, e.g. {@code h2}, {@code postgresql}. */
    String name();

    /**
     * Reads and checks this store's settings from the {@code store:} block.
     *
     * @param store the {@code store:} block (its {@code type}, read by the server, included), or an empty one when the
     *              config file has none: every problem goes to it with its field path
     * @return the settings; not used when a problem was recorded (it may then be {@code null})
     */
    StoreSettings read(FieldReader store);

    /**
     * Opens the store and brings its schema up to date.
     *
     * @param settings what {@link #read} of this factory returned, or settings of this factory's type made in code
     * @throws RuntimeException when it cannot; the message says why, for the operator
     */
    Store create(StoreSettings settings, StoreContext context);

    /**
     * The files of the store these settings name, if it is files in the data directory (checked before it is opened,
     * backed up and restored as files); empty for a store elsewhere.
     */
    default java.util.Optional<StoreFiles> files(StoreSettings settings, StoreContext context) {
        return java.util.Optional.empty();
    }
}
