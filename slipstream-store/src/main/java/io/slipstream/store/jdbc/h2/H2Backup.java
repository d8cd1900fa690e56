package io.slipstream.store.jdbc.h2;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;

/**
 * The embedded store's backup ({@code slipstream store backup}) and its restore: a zip that holds the database file
 * alone, as H2's {@code BACKUP TO} writes it, taken while the store serves.
 */
final class H2Backup {
    /** A backup holds one file, the database; a larger entry than this is not one of ours. */
    private static final long MAX_STORE_BYTES = 64L * 1024 * 1024 * 1024;

    private H2Backup() {
    }

    /**
     * A transactionally consistent copy of the open store in {@code storeDir}, taken while it serves (a zip holding the
     * database file, as H2's {@code BACKUP TO} writes it), written to {@code target}. Not {@code BACKUP TO}: it writes a
     * chunk first, on this thread, while a write transaction may be half done, which {@link OneWriterAtATime} is there
     * to prevent (and waiting for the writer would stop every write for as long as the copy takes). Nothing needs
     * writing first: each commit is in the file before it is acknowledged ({@link H2GroupCommit}). The file is copied as H2's
     * backup does, with H2 writing new chunks at its end meanwhile; a chunk it is writing as the copy ends is cut
     * short in the copy, which then opens at the commit before it.
     */
    static void backup(Path storeDir, Path target) {
        try (Connection connection = DriverManager.getConnection(EmbeddedH2.url(storeDir) + ";IFEXISTS=TRUE", "sa", "");
             OutputStream out = Files.newOutputStream(target);
             ZipOutputStream zip = new ZipOutputStream(out)) {
            SessionLocal session = (SessionLocal) connection.unwrap(JdbcConnection.class).getSession();
            session.getDatabase().getStore().getMvStore().getFileStore().backup(zip);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot back up the store " + EmbeddedH2.file(storeDir) + ": " + EmbeddedH2.firstLine(e), e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot back up the store " + EmbeddedH2.file(storeDir) + " to " + target, e);
        }
    }

    /**
     * Writes the database of a backup ({@link #backup}) into {@code storeDir}, which must not hold one.
     *
     * @throws IllegalArgumentException if {@code backup} is not a backup of this store
     */
    static void extract(Path backup, Path storeDir) {
        Path target = EmbeddedH2.file(storeDir);
        Path partial = storeDir.resolve(EmbeddedH2.FILE + ".part");
        boolean found = false;
        try (InputStream in = Files.newInputStream(backup); ZipInputStream zip = new ZipInputStream(in)) {
            for (ZipEntry entry = zip.getNextEntry(); entry != null; entry = zip.getNextEntry()) {
                if (!entry.getName().equals(EmbeddedH2.FILE) || found) {
                    throw new IllegalArgumentException(backup + " is not a backup of a Slipstream store: it holds " + entry.getName()
                            + (found ? " besides " + EmbeddedH2.FILE : "") + " (a backup holds " + EmbeddedH2.FILE + " alone)");
                }
                found = true;
                Files.createDirectories(storeDir);
                try (OutputStream out = Files.newOutputStream(partial)) {
                    copyAtMost(zip, out, MAX_STORE_BYTES);
                }
            }
            if (!found) {
                throw new IllegalArgumentException(backup + " is not a backup of a Slipstream store: it holds no " + EmbeddedH2.FILE);
            }
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                throw new IllegalStateException(target + " exists");
            }
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (java.util.zip.ZipException e) {
            throw new IllegalArgumentException(backup + " is not a backup of a Slipstream store (not a zip file: " + e.getMessage() + ")");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot restore " + backup + " into " + storeDir, e);
        } finally {
            try {
                Files.deleteIfExists(partial);
            } catch (IOException ignored) {
                // what is left is named .part and read by nothing
            }
        }
    }

    private static void copyAtMost(InputStream in, OutputStream out, long max) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        long total = 0;
        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
            total += n;
            if (total > max) {
                throw new IllegalArgumentException("the backup's " + EmbeddedH2.FILE + " is larger than " + max + " bytes");
            }
            out.write(buffer, 0, n);
        }
    }
}
