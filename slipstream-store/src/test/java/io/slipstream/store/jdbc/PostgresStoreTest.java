package io.slipstream.store.jdbc;

import io.slipstream.store.BaseStoreContractTest;
import io.slipstream.store.Store;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The same contract against a real PostgreSQL server (started once for the class; a fresh database per test). */
class PostgresStoreTest extends BaseStoreContractTest {
    private static EmbeddedPostgres postgres;
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static final String TEMPLATE = "contract_template";

    @BeforeAll
    static void startPostgres() throws Exception {
        // Each test makes a database of its own, and CREATE DATABASE checkpoints: without fsync that costs no disk
        // flushes. Durability across a crash is not what the contract holds (PostgresOutageTest's server keeps it).
        postgres = EmbeddedPostgres.builder().setLocaleConfig("locale", "C").setServerConfig("fsync", "off").setServerConfig("full_page_writes", "off").start();
        // Migrated once: each test's database is a copy of this one, which Flyway finds current, instead of every
        // migration run again for each of the contract's tests (most of this class's time).
        try (Connection connection = postgres.getPostgresDatabase().getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + TEMPLATE);
        }
        open(TEMPLATE).close();
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        postgres.close();
    }

    private String database;

    @Override
    protected java.sql.Connection connection() throws Exception {
        return postgres.getDatabase("postgres", database).getConnection();
    }

    @Override
    protected Store createStore() throws Exception {
        database = "contract_" + DATABASES.incrementAndGet();
        try (Connection connection = postgres.getPostgresDatabase().getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + database + " TEMPLATE " + TEMPLATE);
        }
        return open(database);
    }

    /** The server cancels a statement after 3 s, as the store's own 10 s timeout would (57014 either way): the two contract tests that wait out a lock wait 3 s, not 10. */
    private static Store open(String database) {
        String url = postgres.getJdbcUrl("postgres", database);
        return JdbcStore.open(url + (url.contains("?") ? "&" : "?") + "options=-c%20statement_timeout%3D3000", "postgres", "");
    }
}
