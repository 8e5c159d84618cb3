package com.example.payments.database;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Whether the schema is already current, without Flyway: the versions of the SQL files in
 * {@code db/migration} ({@code V<version>__<description>.sql}) against the successful rows of Flyway's
 * {@code flyway_schema_history}. A replica whose every version is applied (and no failed one recorded) skips Flyway
 * altogether: its classes, its scan of the classpath and its lock, the bulk of a restart's time in the migrations.
 * Anything else (a fresh database, a version missing, a repeatable migration, a failed row, a file name this class
 * does not read) leaves the decision to Flyway.
 */
final class SchemaVersions {

    private static final String LOCATION = "db/migration";
    private static final Pattern VERSIONED = Pattern.compile("V(\\d+(?:[._]\\d+)*)__.+\\.sql");
    /** SQLSTATE of an undefined table: no {@code flyway_schema_history} yet. */
    static final String UNDEFINED_TABLE = "42P01";

    private SchemaVersions() {
    }

    /**
     * The versions of the migrations this build ships.
     *
     * @return e.g. {@code [1, 2, 3]}; empty when a file is not a versioned migration (Flyway decides then)
     */
    static Set<String> shipped() {
        Set<String> versions = new HashSet<>();
        try {
            Enumeration<URL> roots = SchemaVersions.class.getClassLoader().getResources(LOCATION);
            while (roots.hasMoreElements()) {
                URL root = roots.nextElement();
                for (String name : names(root)) {
                    Matcher versioned = VERSIONED.matcher(name);
                    if (!versioned.matches()) {
                        return Set.of();
                    }
                    versions.add(versioned.group(1).replace('_', '.'));
                }
            }
        } catch (IOException | URISyntaxException | UncheckedIOException e) {
            return Set.of();
        }
        return versions;
    }

    /**
     * Whether every shipped version is applied successfully and no failed migration is recorded.
     *
     * @param connection a connection to the service's database
     * @param shipped    {@link #shipped()}
     * @return {@code true} when Flyway would have nothing to do
     * @throws SQLException when the database cannot answer; SQLSTATE {@value #UNDEFINED_TABLE} when there is no
     *                      history table yet
     */
    static boolean current(Connection connection, Set<String> shipped) throws SQLException {
        if (shipped.isEmpty()) {
            return false;
        }
        Set<String> applied = new HashSet<>();
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT version, success FROM flyway_schema_history")) {
            while (rows.next()) {
                if (!rows.getBoolean(2)) {
                    return false;
                }
                if (rows.getString(1) != null) {
                    applied.add(rows.getString(1));
                }
            }
        }
        return applied.containsAll(shipped);
    }

    private static Set<String> names(URL root) throws IOException, URISyntaxException {
        Set<String> names = new HashSet<>();
        if (root.getProtocol().equals("jar")) {
            JarURLConnection jar = (JarURLConnection) root.openConnection();
            jar.setUseCaches(false);
            try (JarFile file = jar.getJarFile()) {
                String prefix = jar.getEntryName() + "/";
                for (Enumeration<JarEntry> entries = file.entries(); entries.hasMoreElements(); ) {
                    String entry = entries.nextElement().getName();
                    if (entry.startsWith(prefix) && entry.length() > prefix.length()) {
                        names.add(entry.substring(prefix.length()));
                    }
                }
            }
        } else if (root.getProtocol().equals("file")) {
            try (Stream<Path> files = Files.list(Path.of(root.toURI()))) {
                files.forEach(file -> names.add(file.getFileName().toString()));
            }
        } else {
            throw new IOException("unreadable location " + root);
        }
        return names;
    }
}
