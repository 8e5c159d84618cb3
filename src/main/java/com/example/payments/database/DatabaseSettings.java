package com.example.payments.database;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

import com.example.payments.config.AppConfigFiles;
import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;

import io.helidon.config.Config;

/**
 * Validated {@code database.*} configuration of the postgres backend ({@code idempotency.store: postgres}). Every
 * statement the service runs is bounded by these keys, so that a stuck database can hold neither a request past
 * {@code authorizer.timeout} nor the drain past its deadline (see {@link #worstCall()}).
 *
 * <p>Credentials come from a Kubernetes Secret as the environment variables {@code DATABASE_URL},
 * {@code DATABASE_USERNAME} and {@code DATABASE_PASSWORD} (Helidon reads them as the keys below); with
 * {@code app.environment} staging or prod a password written in the environment's config file
 * ({@code APP_CONFIG_FILE}, a ConfigMap anyone with read access to the namespace can see) or passed as a system
 * property (visible in the process list) is refused at startup, in {@code database.password} or in the URL.
 *
 * @param url                  {@code database.url}, no default: {@code jdbc:postgresql://host[:port]/database}
 *                             (query parameters of the PostgreSQL JDBC driver allowed, e.g. {@code sslmode=verify-full})
 * @param username             {@code database.username}, no default (the driver's default: the OS user)
 * @param password             {@code database.password}, no default; from the Secret ({@code DATABASE_PASSWORD})
 * @param poolSize             {@code database.pool-size}, default 10, 1 to 500: connections held open at most (each
 *                             request holds one for one statement at a time)
 * @param statementTimeout     {@code database.statement-timeout}, default PT1S: PostgreSQL {@code statement_timeout}
 *                             of every statement, and (plus 250 ms) the socket read timeout of every call, so that a
 *                             frozen server is given up on too
 * @param lockTimeout          {@code database.lock-timeout}, default PT0.5S, at most the statement timeout: PostgreSQL
 *                             {@code lock_timeout}, how long a statement waits for a row another one holds
 * @param connectionTimeout    {@code database.connection-timeout}, default PT0.5S, at least PT0.25S: how long a call
 *                             waits for a pooled connection (HikariCP {@code connectionTimeout}); past it, 503
 * @param passwordOutsideSecret where a password was found outside the environment variables (a Secret), e.g.
 *                             {@code database.password in APP_CONFIG_FILE}; empty when none was
 */
public record DatabaseSettings(String url, Optional<String> username, Optional<String> password, int poolSize,
                               Duration statementTimeout, Duration lockTimeout, Duration connectionTimeout,
                               Optional<String> passwordOutsideSecret) {

    /** The socket read timeout beyond {@code statement_timeout}: the server's own cancellation comes first. */
    static final Duration NETWORK_MARGIN = Duration.ofMillis(250);

    /** The environment variable of the password (a Kubernetes Secret). */
    public static final String PASSWORD_VARIABLE = "DATABASE_PASSWORD";

    private static final String URL_RANGE = "jdbc:postgresql://host[:port]/database[?driver parameters], port from 1 "
                                            + "to 65535";

    /**
     * Reads and validates the settings. Read whatever the store, so that a mistake under {@code database} fails now,
     * not when the store is switched.
     *
     * @param values   config reader
     * @param required {@code true} with {@code idempotency.store: postgres} or {@code redis}: {@code database.url}
     *                 must be set
     * @return the settings; empty when not required and no URL is set
     * @throws ConfigurationException naming the key when a value is missing, unparsable or out of range
     */
    public static Optional<DatabaseSettings> create(ConfigValues values, boolean required) {
        Optional<String> url = url(values, required);
        Optional<String> username = values.stringOrUnset("database.username", "a PostgreSQL role name");
        Optional<String> password = values.stringOrUnset("database.password", "the role's password, from the Secret "
                                                                              + "(" + PASSWORD_VARIABLE + ")");
        int poolSize = (int) values.longInRange("database.pool-size", 10, 1, 500);
        Duration statementTimeout = values.positiveDuration("database.statement-timeout", Duration.ofSeconds(1));
        Duration lockTimeout = values.positiveDuration("database.lock-timeout", Duration.ofMillis(500));
        if (lockTimeout.compareTo(statementTimeout) > 0) {
            throw new ConfigurationException("database.lock-timeout", "'" + lockTimeout + "' is not allowed; allowed: "
                    + "a duration > PT0S and <= database.statement-timeout (" + statementTimeout + ")");
        }
        Duration connectionTimeout = values.positiveDuration("database.connection-timeout", Duration.ofMillis(500));
        if (connectionTimeout.compareTo(Duration.ofMillis(250)) < 0) {
            throw new ConfigurationException("database.connection-timeout", "'" + connectionTimeout + "' is not "
                    + "allowed; allowed: a duration >= PT0.25S (HikariCP's floor)");
        }
        return url.map(u -> new DatabaseSettings(u, username, password, poolSize, statementTimeout, lockTimeout,
                                                 connectionTimeout, findPasswordOutsideSecret()));
    }

    /**
     * The longest one store call can take: waiting for a pooled connection, then the statement, bounded on the
     * socket by {@code statement-timeout} + 250 ms (a server that died or froze never answers its own timeout).
     * With the defaults: 0.5 + 1 + 0.25 = 1.75 s.
     *
     * @return the bound of one call
     */
    public Duration worstCall() {
        return connectionTimeout.plus(statementTimeout).plus(NETWORK_MARGIN);
    }

    /**
     * The socket read timeout of every call ({@code Connection.setNetworkTimeout}).
     *
     * @return {@code statement-timeout} + 250 ms
     */
    public Duration networkTimeout() {
        return statementTimeout.plus(NETWORK_MARGIN);
    }

    // A password in the environment's config files or in a system property, either as database.password or as the
    // URL's password parameter. Environment variables (the Secret) are fine, and so are tests' in-process sources.
    private static Optional<String> findPasswordOutsideSecret() {
        if (System.getProperty("database.password") != null) {
            return Optional.of("database.password as a system property");
        }
        if (carriesPassword(System.getProperty("database.url"))) {
            return Optional.of("database.url as a system property");
        }
        Config config = AppConfigFiles.parse(System.getenv(AppConfigFiles.VARIABLE)).filesOnly();
        if (config.get("database.password").exists()) {
            return Optional.of("database.password in APP_CONFIG_FILE");
        }
        if (carriesPassword(config.get("database.url").asString().orElse(null))) {
            return Optional.of("database.url in APP_CONFIG_FILE");
        }
        return Optional.empty();
    }

    private static boolean carriesPassword(String url) {
        return url != null && url.toLowerCase(Locale.ROOT).matches(".*[?&]password=.*");
    }

    // The value is never echoed: it may carry a password.
    private static Optional<String> url(ConfigValues values, boolean required) {
        String key = "database.url";
        String allowed = "allowed: " + URL_RANGE;
        Optional<String> configured = values.stringOrUnset(key, URL_RANGE);
        if (configured.isEmpty()) {
            if (required) {
                throw new ConfigurationException(key, "missing; " + allowed + ", when idempotency.store is postgres "
                                                      + "or redis (the authorizations live in PostgreSQL, Redis is "
                                                      + "only the registry in front of it; from the Secret: "
                                                      + "DATABASE_URL)");
            }
            return Optional.empty();
        }
        String raw = configured.get().trim();
        if (!raw.startsWith("jdbc:postgresql://")) {
            throw new ConfigurationException(key, "not a jdbc:postgresql:// URL; " + allowed);
        }
        URI uri;
        try {
            uri = new URI(raw.substring("jdbc:".length()));
        } catch (URISyntaxException e) {
            throw new ConfigurationException(key, "not a URL; " + allowed);
        }
        if (uri.getHost() == null || uri.getHost().isBlank()) {
            throw new ConfigurationException(key, "no host (or a host name Java cannot parse); " + allowed);
        }
        if (uri.getPort() == 0 || uri.getPort() > 65535) {
            throw new ConfigurationException(key, "port " + uri.getPort() + " is out of range; " + allowed);
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        if (!path.matches("/[^/]+")) {
            throw new ConfigurationException(key, "no database name after the host; " + allowed);
        }
        if (uri.getUserInfo() != null) {
            throw new ConfigurationException(key, "user information before the host is not read by the driver; "
                                                  + "allowed: database.username and database.password");
        }
        if (org.postgresql.Driver.parseURL(raw, null) == null) {
            throw new ConfigurationException(key, "not a URL the PostgreSQL driver accepts; " + allowed);
        }
        return Optional.of(raw);
    }

    @Override
    public String toString() {
        // Neither the URL's parameters nor the password: either may hold a secret.
        int query = url.indexOf('?');
        return "DatabaseSettings[" + (query < 0 ? url : url.substring(0, query)) + ", username=" + username.orElse("-")
               + ", password=" + (password.isPresent() ? "set" : "unset") + ", poolSize=" + poolSize
               + ", statementTimeout=" + statementTimeout + ", lockTimeout=" + lockTimeout + ", connectionTimeout="
               + connectionTimeout + "]";
    }
}
