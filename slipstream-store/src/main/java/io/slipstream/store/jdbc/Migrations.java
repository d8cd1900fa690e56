package io.slipstream.store.jdbc;

import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;

/** Brings a store's schema up to date with the Flyway migrations of the class path ({@code db/migration}). */
final class Migrations {
    private Migrations() {
    }

    /**
     * Migrates the database behind {@code pool} (at {@code url}), unless every migration is applied already (then Flyway
     * is not started: {@link AppliedMigrations}).
     */
    static void apply(DataSource pool, String url, String user, String password) {
        if (AppliedMigrations.allApplied(pool, Migrations.class.getClassLoader())) {
            return;
        }
        FluentConfiguration flyway = Flyway.configure();
        // On H2 through connections of their own, without the pool's statement timeout: a migration may copy a large
        // table (ALTER TABLE ... ADD COLUMN), which is not a stuck statement.
        (ConnectionPool.timeoutInSession(url) ? flyway.dataSource(url, user, password) : flyway.dataSource(pool))
                .locations("classpath:" + AppliedMigrations.LOCATION)
                .loggers("slf4j")
                .load()
                .migrate();
    }
}
