package io.slipstream.server;

import io.slipstream.store.StoreDamagedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Checks the file of a store in the data directory (the embedded H2 store) before it is opened: H2 makes a new, empty
 * database where the file is missing or empty, so a deleted or emptied store would be replaced by a fresh one before anything else could tell.
 */
final class EmbeddedStoreFile {
    private EmbeddedStoreFile() {
    }

    /** What is wrong with the store file of a data directory, decided; {@code null} if H2 may open it. */
    static String problem(Path file, boolean exists, long size, boolean history, Path dataDir) {
        if (!history || exists && size > 0) {
            return null;
        }
        return "the store " + file + " is " + (exists ? "empty (0 bytes)" : "missing") + ", but the data directory " + dataDir
                + " has history (store.id, an admin token or instance directories): it was " + (exists ? "truncated" : "deleted")
                + ". Nothing was created in its place. Restore it from a backup with: slipstream store restore FILE --data-dir " + dataDir
                + " (docs/operations.md, \"A damaged store\"); to start afresh on purpose, move the data directory away.";
    }

    /** @throws StoreDamagedException if the data directory has history and the store's file is missing or empty */
    static void check(Path file, Path dataDir) {
        boolean exists = Files.exists(file, LinkOption.NOFOLLOW_LINKS);
        long size;
        try {
            size = exists ? Files.size(file) : 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        boolean history = Files.exists(dataDir.resolve(StoreIdentity.FILE), LinkOption.NOFOLLOW_LINKS) || StoreIdentity.hasHistory(dataDir);
        String problem = problem(file, exists, size, history, dataDir);
        if (problem != null) {
            throw new StoreDamagedException(problem);
        }
    }
}
