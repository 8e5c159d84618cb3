package com.example.payments.database;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32;

/**
 * Whether the schema is already current, without Flyway: the versions and checksums of the SQL files in
 * {@code db/migration} ({@code V<version>__<description>.sql}) against the successful rows of Flyway's
 * {@code flyway_schema_history}. A replica whose every version is applied with the same checksum (and no failed one
 * recorded) skips Flyway altogether: its classes, its scan of the classpath and its lock, the bulk of a restart's
 * time in the migrations. Anything else (a fresh database, a version missing, a checksum that differs — an applied
 * migration edited since —, a repeatable migration, a failed row, a file name this class does not read) leaves the
 * decision to Flyway, whose validation refuses an edited migration.
 */
final class SchemaVersions {

    private static final String LOCATION = "db/migration";
    private static final Pattern VERSIONED = Pattern.compile("V(\\d+(?:[._]\\d+)*)__.+\\.sql");
    /** SQLSTATE of an undefined table: no {@code flyway_schema_history} yet. */
    static final String UNDEFINED_TABLE = "42P01";

    private SchemaVersions() {
    }

    /**
     * The versions of the migrations this build ships, each with its checksum as Flyway computes it for a versioned
     * SQL migration: CRC32 over the file's lines read as UTF-8 (line terminators excluded, a byte order mark removed
     * from the first line), as a signed 32-bit number.
     *
     * @return e.g. {@code {1=-1247781432, 2=…}}; empty when a file is not a versioned migration or cannot be read
     *         (Flyway decides then)
     */
    static Map<String, Integer> shipped() {
        Map<String, Integer> versions = new HashMap<>();
        try {
            Enumeration<URL> roots = SchemaVersions.class.getClassLoader().getResources(LOCATION);
            while (roots.hasMoreElements()) {
                URL root = roots.nextElement();
                for (String name : names(root)) {
                    Matcher versioned = VERSIONED.matcher(name);
                    if (!versioned.matches()) {
                        return Map.of();
                    }
                    URL file = SchemaVersions.class.getClassLoader().getResource(LOCATION + "/" + name);
                    if (file == null) {
                        return Map.of();
                    }
                    versions.put(versioned.group(1).replace('_', '.'), checksum(file));
                }
            }
        } catch (IOException | URISyntaxException | UncheckedIOException e) {
            return Map.of();
        }
        return versions;
    }

    /**
     * Flyway's checksum of a SQL migration (its {@code ChecksumCalculator}): CRC32 over the UTF-8 bytes of each line,
     * terminators excluded, the first line without a byte order mark.
     */
    static int checksum(URL file) throws IOException {
        CRC32 crc = new CRC32();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(file.openStream(),
                                                                              StandardCharsets.UTF_8))) {
            String line = lines.readLine();
            if (line != null && line.startsWith("\uFEFF")) {
                line = line.substring(1);
            }
            for (; line != null; line = lines.readLine()) {
                crc.update(line.getBytes(StandardCharsets.UTF_8));
            }
        }
        return (int) crc.getValue();
    }

    /**
     * Whether every shipped version is applied successfully with the shipped checksum, and no failed migration is
     * recorded.
     *
     * @param connection a connection to the service's database
     * @param shipped    {@link #shipped()}
     * @return {@code true} when Flyway would have nothing to do (and its validation nothing to refuse)
     * @throws SQLException when the database cannot answer; SQLSTATE {@value #UNDEFINED_TABLE} when there is no
     *                      history table yet
     */
    static boolean current(Connection connection, Map<String, Integer> shipped) throws SQLException {
        if (shipped.isEmpty()) {
            return false;
        }
        Set<String> applied = new HashSet<>();
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT version, success, checksum FROM flyway_schema_history")) {
            while (rows.next()) {
                if (!rows.getBoolean(2)) {
                    return false;
                }
                String version = rows.getString(1);
                if (version != null && shipped.containsKey(version)) {
                    int checksum = rows.getInt(3);
                    if (rows.wasNull() || checksum != shipped.get(version)) {
                        return false;
                    }
                    applied.add(version);
                }
            }
        }
        return applied.containsAll(shipped.keySet());
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
