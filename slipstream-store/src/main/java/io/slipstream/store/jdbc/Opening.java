package io.slipstream.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.slipstream.store.StoreFiles;
import io.slipstream.store.jdbc.h2.EmbeddedH2;
import io.slipstream.store.jdbc.h2.H2GroupCommit;
import io.slipstream.store.jdbc.h2.OneWriterAtATime;
import java.nio.file.Path;
import java.util.function.LongConsumer;

/** How a {@link JdbcStore} is opened: its pool, its schema brought up to date, and what an H2 file in this process needs. */
final class Opening {
    private Opening() {
    }

    /** The embedded store under {@code dataDir}: checked at open ({@link EmbeddedH2}), and its file locked by this process. */
    static JdbcStore embedded(Path dataDir) {
        // checked: a damaged file is refused (EmbeddedH2); locked: no other process can be leading over it
        return EmbeddedH2.open(EmbeddedH2.directory(dataDir), url -> open(url, "sa", "", true));
    }

    /** @param singleProcess only one process can open this store (the embedded H2 file is locked) */
    static JdbcStore open(String url, String user, String password, boolean singleProcess) {
        HikariDataSource dataSource = ConnectionPool.open(url, user, password);
        try {
            Migrations.apply(dataSource, url, user, password);
            // an H2 file in this process: each commit must be found again after a crash (H2NewestChunk), and so must
            // the indexes of what did not commit (OneWriterAtATime); commits are written in groups (H2GroupCommit)
            boolean h2File = singleProcess || url.startsWith("jdbc:h2:file:");
            OneWriterAtATime writer = h2File ? OneWriterAtATime.of(dataSource) : null;
            H2GroupCommit groupCommit = h2File ? H2GroupCommit.of(dataSource, writer) : null;
            LongConsumer afterCall = session -> { };
            if (groupCommit != null) {
                groupCommit.writeNow(); // the migrations' commits: the header pointed at their chunk
                afterCall = groupCommit::afterCall;
            }
            return new JdbcStore(dataSource, singleProcess, new Transactions(dataSource, afterCall, writer, !ConnectionPool.timeoutInSession(url)),
                    groupCommit);
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
    }

    /** The embedded store under {@code dataDir} as files: checked before it is opened (read as it is: no migration), backed up, restored. */
    static StoreFiles embeddedFiles(Path dataDir) {
        return EmbeddedH2.files(EmbeddedH2.directory(dataDir), url -> {
            HikariDataSource dataSource = ConnectionPool.readOnly(url, "sa", "");
            return new JdbcStore(dataSource, true, new Transactions(dataSource, session -> { }, null, true), null);
        });
    }
}
