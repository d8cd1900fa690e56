package io.slipstream.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The shortcut that opens a current store without Flyway must agree with Flyway, and step aside whenever in doubt. */
class AppliedMigrationsTest {
    @TempDir
    Path dataDir;

    private final ClassLoader loader = JdbcStore.class.getClassLoader();

    private JdbcDataSource dataSource() {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:file:" + dataDir.resolve("store").resolve("slipstream") + ";MODE=PostgreSQL;DATABASE_TO_LOWER=TRUE");
        dataSource.setUser("sa");
        return dataSource;
    }

    private void execute(String sql) throws Exception {
        try (Connection connection = dataSource().getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    @Test
    void aStoreFlywayMigratedIsCurrentWithTheChecksumsFlywayRecorded() {
        JdbcStore.openH2(dataDir).close();
        assertThat(AppliedMigrations.allApplied(dataSource(), loader)).isTrue();
        JdbcStore.openH2(dataDir).close(); // and opens again, without Flyway
    }

    @Test
    void everyMigrationFileIsFound() throws Exception {
        try (Stream<Path> files = Files.list(Path.of("src/main/resources/db/migration"))) {
            assertThat(AppliedMigrations.onClassPath(loader)).hasSize((int) files.filter(f -> f.toString().endsWith(".sql")).count());
        }
    }

    @Test
    void aNewStoreIsLeftToFlyway() {
        assertThat(AppliedMigrations.allApplied(dataSource(), loader)).isFalse();
    }

    @Test
    void aMigrationNotYetAppliedIsLeftToFlywayWhichAppliesIt() throws Exception {
        JdbcStore.openH2(dataDir).close();
        String last = AppliedMigrations.onClassPath(loader).keySet().stream().max(java.util.Comparator.comparing(Integer::valueOf)).orElseThrow();
        execute("DELETE FROM \"flyway_schema_history\" WHERE \"version\" = '" + last + "'");
        assertThat(AppliedMigrations.allApplied(dataSource(), loader)).isFalse();
    }

    @Test
    void aChangedMigrationIsLeftToFlywayWhichRefusesIt() throws Exception {
        JdbcStore.openH2(dataDir).close();
        execute("UPDATE \"flyway_schema_history\" SET \"checksum\" = \"checksum\" + 1 WHERE \"version\" = '1'");
        assertThat(AppliedMigrations.allApplied(dataSource(), loader)).isFalse();
        assertThatThrownBy(() -> JdbcStore.openH2(dataDir)).hasMessageContaining("checksum");
    }

    @Test
    void aFailedMigrationIsLeftToFlyway() throws Exception {
        JdbcStore.openH2(dataDir).close();
        execute("UPDATE \"flyway_schema_history\" SET \"success\" = FALSE WHERE \"version\" = '1'");
        assertThat(AppliedMigrations.allApplied(dataSource(), loader)).isFalse();
    }

    /** The server runs from one jar: its migrations are listed from it. */
    @Test
    void migrationsAreListedFromAJar() throws Exception {
        Path jar = dataDir.resolve("m.jar");
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream entries = new JarOutputStream(out)) {
            for (String directory : new String[] {"db/", "db/migration/"}) {
                entries.putNextEntry(new JarEntry(directory)); // as the build's jar has them
            }
            for (String name : new String[] {"db/migration/V1__a.sql", "db/migration/V2_1__b.sql"}) {
                entries.putNextEntry(new JarEntry(name));
                entries.write(("-- " + name + "\nCREATE TABLE t (x INT);\n").getBytes(StandardCharsets.UTF_8));
            }
        }
        try (URLClassLoader jarLoader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null)) {
            assertThat(AppliedMigrations.onClassPath(jarLoader)).isEqualTo(Map.of(
                    "1", AppliedMigrations.checksum(new ByteArrayInputStream("-- db/migration/V1__a.sql\nCREATE TABLE t (x INT);\n".getBytes(StandardCharsets.UTF_8))),
                    "2.1", AppliedMigrations.checksum(new ByteArrayInputStream("-- db/migration/V2_1__b.sql\nCREATE TABLE t (x INT);\n".getBytes(StandardCharsets.UTF_8)))));
        }
    }

    @Test
    void checksumsIgnoreLineEndsAndAByteOrderMark() throws Exception {
        int unix = AppliedMigrations.checksum(new ByteArrayInputStream("a\nb\n".getBytes(StandardCharsets.UTF_8)));
        assertThat(AppliedMigrations.checksum(new ByteArrayInputStream("\uFEFFa\r\nb".getBytes(StandardCharsets.UTF_8)))).isEqualTo(unix);
    }
}
