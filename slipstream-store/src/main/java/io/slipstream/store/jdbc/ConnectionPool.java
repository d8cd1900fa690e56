package io.slipstream.store.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.Locale;

/**
 * The pool of connections a {@link JdbcStore} works through, set so that a database that is away is noticed within
 * moments (an outage answers 503 at once, not after Hikari's default 30 s wait for a connection).
 */
final class ConnectionPool {
    /** How long a caller waits for a connection before the store counts as unavailable. */
    static final long CONNECTION_TIMEOUT_MS = 1_500;
    private static final long VALIDATION_TIMEOUT_MS = 1_000;
    /**
     * Connections to an H2 database in this process: sessions in memory, not a server's processes. Writers there take
     * turns ({@link io.slipstream.store.jdbc.h2.OneWriterAtATime}), each queued one holding a connection; with eight,
     * requests queued for the writer took every one and the control loop's launches waited for a connection, not for
     * the writer (most of a cycle at 200 runs a second).
     */
    static final int IN_PROCESS_POOL = 64;
    /** Connections to a database server: each one of its processes (PostgreSQL's default limit is 100 in all). */
    static final int SERVER_POOL = 8;
    /** No statement of Slipstream's takes seconds; one that does is stuck behind a lock or a sick server. */
    static final long STATEMENT_TIMEOUT_S = 10;

    private ConnectionPool() {
    }

    /**
     * Whether the database's sessions get the statement timeout once, at connect, instead of each statement: H2 runs a
     * {@code SET QUERY_TIMEOUT} before every statement given a timeout (44 of a trivial run's 100 statements).
     */
    static boolean timeoutInSession(String url) {
        return url.startsWith("jdbc:h2:");
    }

    static HikariDataSource open(String url, String user, String password) {
        HikariConfig config = new HikariConfig();
        // a URL that sets its own timeout keeps it, even 0: none
        config.setJdbcUrl(timeoutInSession(url) && !url.toUpperCase(Locale.ROOT).contains(";QUERY_TIMEOUT=")
                ? url + ";QUERY_TIMEOUT=" + STATEMENT_TIMEOUT_S * 1000 : url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(url.startsWith("jdbc:h2:file:") || url.startsWith("jdbc:h2:mem:") ? IN_PROCESS_POOL : SERVER_POOL);
        config.setMinimumIdle(2);
        config.setPoolName("slipstream-store");
        config.setInitializationFailTimeout(10_000);
        config.setConnectionTimeout(CONNECTION_TIMEOUT_MS);
        config.setValidationTimeout(VALIDATION_TIMEOUT_MS);
        if (url.startsWith("jdbc:postgresql:")) {
            // A server that vanished without closing its sockets (host down, network cut) is noticed too.
            config.addDataSourceProperty("connectTimeout", "2");
            config.addDataSourceProperty("socketTimeout", Long.toString(STATEMENT_TIMEOUT_S + 5));
            config.addDataSourceProperty("tcpKeepAlive", "true");
        }
        return new HikariDataSource(config);
    }

    /** A small pool that only reads, for checks that must not change the store. */
    static HikariDataSource readOnly(String url, String user, String password) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setReadOnly(true);
        config.setMaximumPoolSize(2);
        config.setMinimumIdle(1);
        config.setPoolName("slipstream-store-check");
        return new HikariDataSource(config);
    }
}
