package io.slipstream.store.jdbc.h2;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.h2.mvstore.FileStore;
import org.h2.mvstore.RandomAccessStore;

/**
 * Points the embedded H2 file's header at its newest chunk once a commit has written one, so that the commit survives a
 * {@code kill -9}. H2 (2.5.252, {@code RandomAccessStore.writeChunk}) writes its header, when it does, naming the chunk
 * <em>before</em> the one it is writing; a reopen after a crash follows each chunk's guess of where the next one goes
 * from there, and when H2 put a chunk elsewhere (reused space) that chunk, and the commits after it, are not found:
 * H2 opens an older state, silently (the last acknowledged commit, or more, missing). With the header naming the
 * newest chunk the reopen starts from it. H2 has no public way to write its header: its private
 * {@code writeStoreHeader} is called, under H2's own lock of chunk writing ({@code executeFileStoreOperation}).
 */
public final class H2NewestChunk {
    private final FileStore<?> file;
    private final Method writeStoreHeader;
    /** The version of the chunk the header was last pointed at here. */
    private volatile long pointedAt = -1;

    private H2NewestChunk(FileStore<?> file, Method writeStoreHeader) {
        this.file = file;
        this.writeStoreHeader = writeStoreHeader;
    }

    /**
     * The header writer of the embedded database behind {@code dataSource}.
     *
     * @throws IllegalStateException if this H2 is not one whose header can be written so (another version: the store
     *         does not open rather than lose acknowledged writes on a crash)
     */
    public static H2NewestChunk of(DataSource dataSource) {
        try (Connection connection = dataSource.getConnection()) {
            SessionLocal session = (SessionLocal) connection.unwrap(JdbcConnection.class).getSession();
            FileStore<?> file = session.getDatabase().getStore().getMvStore().getFileStore();
            if (!(file instanceof RandomAccessStore)) {
                throw new IllegalStateException("the embedded H2 store is not a single file (" + file.getClass().getName() + ")");
            }
            Method write = RandomAccessStore.class.getDeclaredMethod("writeStoreHeader");
            write.setAccessible(true);
            return new H2NewestChunk(file, write);
        } catch (SQLException | ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot make the embedded H2 store's commits survive a crash with this H2 (" + e
                    + "): its header writing changed; see H2NewestChunk", e);
        }
    }

    /** After a commit, before it is acknowledged: points the header at the newest chunk, if it is not there yet. */
    public void afterCommit() {
        if (file.lastChunkVersion() == pointedAt) {
            return; // nothing written since (a read), or another commit's call pointed it there
        }
        file.executeFileStoreOperation(() -> {
            long newest = file.lastChunkVersion();
            if (newest != pointedAt) {
                try {
                    writeStoreHeader.invoke(file);
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                } catch (InvocationTargetException e) {
                    throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
                }
                pointedAt = newest;
            }
        });
    }
}
