package io.slipstream.server;

import io.slipstream.store.Store;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Makes sure a data directory is served with the store it was used with. A store gets an identity when it is
 * created; the data directory records it ({@value #FILE}) beside what the store's runs left there (instances,
 * storage, the admin token). A store that is missing, new, or another one where the data directory has history
 * would silently begin a new history beside the old one (its runs stranded, a new admin token, old tokens refused):
 * the server refuses to start instead, and says what to do.
 */
public final class StoreIdentity {
    /** The file in the data directory that names the store it belongs to. */
    public static final String FILE = "store.id";
    /** Under which the store keeps its identity (with the ids of the server's keys). */
    static final String PURPOSE = "store-identity";
    private static final Pattern WELL_FORMED = Pattern.compile("[0-9a-f-]{36}");

    private StoreIdentity() {
    }

    /** Thrown when the store is not the data directory's; the message says which, why, and what to do. */
    public static final class Mismatch extends RuntimeException {
        Mismatch(String message) {
            super(message);
        }
    }

    /** The store's identity, if it has one. */
    static Optional<String> of(Store store) {
        return store.credentials().serverKeyId(PURPOSE);
    }

    /**
     * Checks the store against the data directory, before anything is written to either: gives a new store its
     * identity, and records it in a data directory that has none yet (a first start, or one from before identities).
     *
     * @throws Mismatch if the data directory belongs to another store, or has history the store does not know
     */
    public static String check(Store store, Path dataDir, Clock clock) {
        return check(store, dataDir, clock, true);
    }

    /** As {@link #check(Store, Path, Clock)}; with {@code write} false it only refuses, and writes nothing (a store opened to read). */
    static String check(Store store, Path dataDir, Clock clock, boolean write) {
        Path file = dataDir.resolve(FILE);
        Optional<String> recorded = recorded(file);
        Optional<String> own = store.credentials().serverKeyId(PURPOSE);
        String what = "the data directory " + dataDir;
        if (recorded.isPresent()) {
            if (own.isEmpty()) {
                throw new Mismatch(what + " belongs to the store " + recorded.get() + " (" + file + "), but the store this server opened"
                        + " has no identity: it is new, or it was emptied. Starting would begin a new history beside the runs of this data"
                        + " directory. Restore the store from its backup, or point the server at the right one (store.url); to start"
                        + " afresh on purpose, move the data directory away.");
            }
            if (!own.get().equals(recorded.get())) {
                throw new Mismatch(what + " belongs to the store " + recorded.get() + " (" + file + "), but the store this server opened is "
                        + own.get() + ". Point the server at the data directory of that store, or at the store of this one.");
            }
            return own.get();
        }
        String identity = own.orElse(null);
        if (identity == null) {
            if (hasHistory(dataDir) && store.credentials().tokens().isEmpty()) {
                throw new Mismatch(what + " holds what a store's runs left (instances, an admin token), but the store this server opened is"
                        + " new. Restore the store from its backup, or point the server at the right one (store.url); to start afresh on"
                        + " purpose, move the data directory away.");
            }
            if (!write) {
                return null;
            }
            String created = UUID.randomUUID().toString();
            store.commit(tx -> tx.registerServerKey(PURPOSE, created, clock.instant()));
            identity = created;
        }
        if (write) {
            record(file, identity);
        }
        return identity;
    }

    private static Optional<String> recorded(Path file) {
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8).strip();
            if (!WELL_FORMED.matcher(text).matches()) {
                throw new Mismatch(file + " does not name a store (it holds '" + text.substring(0, Math.min(text.length(), 40))
                        + "'): restore it from the backup of this data directory, or remove it if the store is the right one.");
            }
            return Optional.of(text);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /** Whether runs of a store were here: instance directories, or the admin token of a first start. */
    static boolean hasHistory(Path dataDir) {
        if (Files.exists(dataDir.resolve(SlipstreamServer.ADMIN_TOKEN_FILE), LinkOption.NOFOLLOW_LINKS)) {
            return true;
        }
        Path instances = dataDir.resolve("instances");
        if (!Files.isDirectory(instances, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (DirectoryStream<Path> runs = Files.newDirectoryStream(instances, entry -> !entry.getFileName().toString().startsWith("."))) {
            return runs.iterator().hasNext();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + instances, e);
        }
    }

    private static void record(Path file, String identity) {
        try {
            Path temporary = file.resolveSibling(FILE + ".new");
            Files.deleteIfExists(temporary);
            Files.writeString(temporary, identity + "\n", StandardCharsets.UTF_8);
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record the store's identity in " + file, e);
        }
    }
}
