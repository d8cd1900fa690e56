package io.slipstream.store.jdbc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;
import javax.sql.DataSource;

/**
 * Whether a store's schema is current: every migration of the class path applied, successfully, with the checksum
 * Flyway records for it, and nothing else. Then opening the store need not start Flyway (its class loading and its
 * scan and validation take a good part of a server's start); anything else (a new store, a migration to apply, a
 * changed one, a failed one, a history this cannot read) is left to Flyway, which migrates or refuses as always.
 */
final class AppliedMigrations {
    static final String LOCATION = "db/migration";
    private static final Pattern NAME = Pattern.compile("V([0-9][0-9_.]*)__[^/]*\\.sql");

    private AppliedMigrations() {
    }

    /** True only when it is sure; {@code false} says nothing more than "ask Flyway". */
    static boolean allApplied(DataSource dataSource, ClassLoader loader) {
        Map<String, Integer> expected = onClassPath(loader);
        if (expected == null || expected.isEmpty()) {
            return false;
        }
        try (Connection connection = dataSource.getConnection()) {
            return expected.equals(applied(connection));
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    /** Version to checksum of the migrations Flyway recorded as applied; {@code null} if any failed. */
    static Map<String, Integer> applied(Connection connection) throws SQLException {
        Map<String, Integer> applied = new HashMap<>();
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT \"version\", \"checksum\", \"success\" FROM \"flyway_schema_history\""
                     + " WHERE \"version\" IS NOT NULL")) {
            while (rows.next()) {
                int checksum = rows.getInt(2);
                if (rows.wasNull() || !rows.getBoolean(3) || applied.put(rows.getString(1), checksum) != null) {
                    return null;
                }
            }
        }
        return applied;
    }

    /** Version to checksum of the migrations on the class path, or {@code null} where they cannot be listed. */
    static Map<String, Integer> onClassPath(ClassLoader loader) {
        URL location = loader.getResource(LOCATION);
        if (location == null) {
            return null;
        }
        try {
            Map<String, Integer> migrations = new HashMap<>();
            if (location.getProtocol().equals("file")) {
                try (DirectoryStream<Path> files = Files.newDirectoryStream(Path.of(location.toURI()))) {
                    for (Path file : files) {
                        if (!add(migrations, file.getFileName().toString(), () -> Files.newInputStream(file))) {
                            return null;
                        }
                    }
                }
            } else if (location.getProtocol().equals("jar")) {
                JarURLConnection connection = (JarURLConnection) location.openConnection();
                connection.setUseCaches(false);
                try (JarFile jar = connection.getJarFile()) {
                    String prefix = connection.getEntryName() + "/";
                    for (Enumeration<JarEntry> entries = jar.entries(); entries.hasMoreElements(); ) {
                        JarEntry entry = entries.nextElement();
                        String name = entry.getName();
                        if (name.startsWith(prefix) && !entry.isDirectory()
                                && !add(migrations, name.substring(prefix.length()), () -> jar.getInputStream(entry))) {
                            return null;
                        }
                    }
                }
            } else {
                return null;
            }
            return migrations;
        } catch (IOException | URISyntaxException | RuntimeException e) {
            return null;
        }
    }

    private interface Opener {
        InputStream open() throws IOException;
    }

    /** Adds a versioned migration; {@code false} for a file this cannot account for (Flyway then decides). */
    private static boolean add(Map<String, Integer> migrations, String name, Opener opener) throws IOException {
        if (name.contains("/")) {
            return false; // in a subdirectory: Flyway would find it too
        }
        Matcher matcher = NAME.matcher(name);
        if (!matcher.matches()) {
            return !name.endsWith(".sql") && !name.endsWith(".java") && !name.endsWith(".class");
        }
        String version = matcher.group(1).replace('_', '.');
        try (InputStream in = opener.open()) {
            return migrations.put(version, checksum(in)) == null;
        }
    }

    /** Flyway's checksum of a migration: the CRC-32 of its lines' UTF-8 bytes, without line ends or byte-order mark. */
    static int checksum(InputStream in) throws IOException {
        CRC32 crc = new CRC32();
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 4096);
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
            if (!line.isEmpty() && line.charAt(0) == '\uFEFF') {
                line = line.substring(1);
            }
            crc.update(line.getBytes(StandardCharsets.UTF_8));
        }
        return (int) crc.getValue();
    }
}
