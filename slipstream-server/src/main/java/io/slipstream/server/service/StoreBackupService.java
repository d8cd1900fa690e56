package io.slipstream.server.service;

import io.slipstream.server.api.ApiException;
import io.slipstream.server.auth.Principal;
import io.slipstream.store.StoreFiles;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.Semaphore;

/**
 * Online backups of the store, for admins: a consistent copy of the embedded H2 store, taken while the server serves
 * ({@link StoreFiles#backup}) into a temporary file beside the store, then streamed. Other stores are backed up with
 * their own tools ({@code pg_dump} for PostgreSQL): the answer says so.
 */
public final class StoreBackupService {
    /** What the backup's answer is: a zip holding the store's database file. */
    public static final String CONTENT_TYPE = "application/zip";

    private final StoreFiles files;
    private final String unsupported;
    /** One backup at a time: each is a full copy of the store on disk. */
    private final Semaphore running = new Semaphore(1);

    private StoreBackupService(StoreFiles files, String unsupported) {
        this.files = files;
        this.unsupported = unsupported;
    }

    /** Backups of a store that is files in the data directory (the embedded H2 store). */
    public static StoreBackupService of(StoreFiles files) {
        return new StoreBackupService(files, null);
    }

    /** No backups through the API: the store, named by {@code store} (e.g. {@code postgresql}), has its own tools. */
    public static StoreBackupService unsupported(String store) {
        String how = store.equals("postgresql")
                ? "back up a PostgreSQL store with pg_dump --format=custom and restore it with pg_restore (docs/operations.md, \"Backup and restore\")"
                : "back it up with its own tools (docs/operations.md, \"Backup and restore\")";
        return new StoreBackupService(null, "this server's store (" + store + ") is not backed up through the API: " + how);
    }

    /** No backups through the API (a server wired without them). */
    public static StoreBackupService none() {
        return new StoreBackupService(null, "this server was started without backups of its store through the API");
    }

    /** Checks that the caller may back up the store and that this store can be; call before answering. */
    public void check(Principal caller) {
        if (!caller.admin() || caller.run() != null) {
            throw ApiException.forbidden("only admins can back up the store");
        }
        if (unsupported != null) {
            throw new ApiException(501, "NOT_SUPPORTED", unsupported);
        }
    }

    /** Where a backup goes, once it is taken: opened with its size, so that a copy cut short is seen as such. */
    @FunctionalInterface
    public interface Destination {
        OutputStream open(long size) throws IOException;
    }

    /** Takes a consistent copy of the store, then writes it to the destination; an error before that is answered as one. */
    public void backUp(Principal caller, Destination destination) throws IOException {
        check(caller);
        if (!running.tryAcquire()) {
            throw ApiException.conflict("a backup of the store is being taken; try again when it is done");
        }
        Path copy = files.directory().resolve("backup-" + UUID.randomUUID() + ".zip.tmp");
        try {
            files.backup(copy);
            OutputStream out = destination.open(Files.size(copy));
            Files.copy(copy, out);
            out.flush();
        } finally {
            Files.deleteIfExists(copy);
            running.release();
        }
    }
}
