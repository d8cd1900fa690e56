package io.slipstream.store;

import java.nio.file.Path;

/**
 * A store that is files in the data directory (the embedded H2 store), as files: what the server checks before it
 * opens them, and how they are backed up and restored. A store elsewhere (PostgreSQL) has none: its own tools back it
 * up ({@link StoreFactory#files}).
 */
public interface StoreFiles {
    /** The directory in the data directory that holds every file of the store, and nothing else. */
    Path directory();

    /** The store's main file: where it is missing or empty the database would make a new, empty store. */
    Path file();

    /**
     * Opens the store as it is, to read only, and reads it whole: what the server checks before it serves a store is
     * checked on this, so that a store it refuses is left exactly as it was found (opened to write, H2 rewrites a
     * file it fell back to an older state of). Empty when there is nothing to check yet: no file, or a schema older
     * than this version's (the store is checked once migrated).
     *
     * @throws StoreDamagedException if the file cannot be read, or it is not whole
     */
    java.util.Optional<Store> openToCheck();

    /** Whether a process has the store open (its lock), as far as this process can tell. */
    boolean inUse();

    /**
     * Writes a transactionally consistent copy of the open store to {@code target}, while it serves.
     *
     * @throws IllegalStateException if it cannot, saying why
     */
    void backup(Path target);

    /**
     * Writes the store of a backup ({@link #backup}) into {@link #directory()}, which must not hold a store; opening it
     * then checks it.
     *
     * @throws IllegalArgumentException if {@code backup} is not a backup of this kind of store
     */
    void extract(Path backup);
}
