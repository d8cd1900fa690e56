package io.slipstream.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.slipstream.store.CredentialReads;
import io.slipstream.store.DocumentReads;
import io.slipstream.store.Leases;
import io.slipstream.store.RunReads;
import io.slipstream.store.Store;
import io.slipstream.store.StoreReads;
import io.slipstream.store.StoreTx;
import io.slipstream.store.UsageReads;
import io.slipstream.store.jdbc.h2.EmbeddedH2;
import io.slipstream.store.jdbc.h2.H2GroupCommit;
import java.nio.file.Path;
import java.util.function.Function;

/**
 * The {@link Store} on a JDBC database: H2 in file mode (the embedded default) or PostgreSQL. The schema comes from
 * versioned Flyway migrations that run unchanged on both. Each table's SQL is a {@code *Rows} class of static functions
 * over a JDBI handle ({@link RunRows}, {@link InstanceRows}, {@link LeadershipRows}, ...); the facets bind them: the
 * reads ({@link JdbcReads}) to a handle of their own per call, a transaction's reads and writes ({@link JdbcTx}) to its
 * handle, the leases ({@link JdbcLeases}) to a transaction each. {@link Transactions} opens and ends them; unreadable
 * rows become the SPI's answers in {@link UnreadableRows}. An H2 file in this process is hardened by
 * {@link io.slipstream.store.jdbc.h2}.
 */
public final class JdbcStore implements Store {
    private final HikariDataSource dataSource;
    private final Transactions transactions;
    private final UnreadableRows unreadable = new UnreadableRows();
    private final JdbcReads reads;
    private final JdbcLeases leases;
    /** The active runs, and the instances of those holding resources, kept between reads (wholly where this process alone writes). */
    private final ActiveRunRows activeRows;
    private final HeldInstances held;
    /** The embedded H2 file's commits, written in groups; null for other databases (each commit durable as it returns). */
    private final H2GroupCommit groupCommit;

    /**
     * @param singleProcess only one process can open this store (the embedded H2 file is locked): a previous leader cannot be alive
     * @param groupCommit how an H2 file in this process writes its commits, or null
     */
    JdbcStore(HikariDataSource dataSource, boolean singleProcess, Transactions transactions, H2GroupCommit groupCommit) {
        this.dataSource = dataSource;
        this.groupCommit = groupCommit;
        this.transactions = transactions;
        this.activeRows = new ActiveRunRows(singleProcess);
        this.held = singleProcess ? new HeldInstances() : null;
        this.reads = new JdbcReads(transactions::withHandle, unreadable, activeRows, held);
        this.leases = new JdbcLeases(transactions, singleProcess);
    }

    /** Opens the embedded H2 store under {@code dataDir} ({@link EmbeddedH2}: its settings, and the checks at open). */
    public static JdbcStore openH2(Path dataDir) {
        return Opening.embedded(dataDir);
    }

    /** The JDBC URL of the embedded H2 store under {@code dataDir} (user {@code sa}, no password). */
    public static String h2Url(Path dataDir) {
        return EmbeddedH2.url(EmbeddedH2.directory(dataDir));
    }

    /** Opens a store at a JDBC URL ({@code jdbc:h2:...} or {@code jdbc:postgresql://...}) and migrates its schema. */
    public static JdbcStore open(String url, String user, String password) {
        return Opening.open(url, user, password, false);
    }

    @Override
    public void close() {
        dataSource.close();
    }

    @Override
    public <T> T write(Function<StoreTx, T> work) {
        if (held == null) {
            return transactions.inTransaction(handle -> work.apply(new JdbcTx(handle, unreadable, null)));
        }
        JdbcTx.Written written = new JdbcTx.Written();
        try {
            return transactions.inTransaction(handle -> work.apply(new JdbcTx(handle, unreadable, written)));
        } finally { // after the commit: a read between the two reads those rows as they were
            activeRows.written(written.runs());
            held.written(written.instances());
        }
    }

    @Override
    public Deferral deferDurability() {
        return groupCommit == null ? Store.super.deferDurability() : groupCommit.defer();
    }

    @Override
    public void awaitDurable() {
        transactions.requireOutside(); // a group written in the middle of a transaction would hold half of it
        if (groupCommit != null) {
            groupCommit.awaitDurable();
        }
    }

    /** Tests that change rows behind the store's back (no other process can): every kept row is read again. */
    void forgetKeptRows() {
        activeRows.forgetAll();
        if (held != null) {
            held.forgetAll();
        }
    }

    @Override
    public <T> T read(Function<StoreReads, T> work) {
        return transactions.inTransaction(handle -> work.apply(new JdbcReads(handle, unreadable)));
    }

    @Override
    public RunReads runs() {
        return reads.runs();
    }

    @Override
    public DocumentReads documents() {
        return reads.documents();
    }

    @Override
    public CredentialReads credentials() {
        return reads.credentials();
    }

    @Override
    public UsageReads usage() {
        return reads.usage();
    }

    @Override
    public Leases leases() {
        return leases;
    }

    @Override
    public void ping() {
        transactions.withHandle(h -> h.createQuery("SELECT 1").mapTo(Integer.class).one());
    }

    /** The timeout, in seconds, that a statement made on a connection of this store's pool has before JDBI sets one. */
    int sessionStatementTimeoutSeconds() {
        return transactions.withHandle(h -> {
            try (java.sql.Statement statement = h.getConnection().createStatement()) {
                return statement.getQueryTimeout();
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }
}
