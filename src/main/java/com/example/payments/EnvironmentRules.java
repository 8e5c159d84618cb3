package com.example.payments;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

import com.example.payments.authentication.AuthSettings;
import com.example.payments.authorization.AuthorizerSettings;
import com.example.payments.config.AppConfigFiles;
import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;
import com.example.payments.database.DatabaseSettings;
import com.example.payments.idempotency.IdempotencySettings;

import io.helidon.config.Config;

/**
 * What {@code app.environment} staging and prod refuse at startup (exit 2, one line naming the key), whichever
 * idempotency store is selected: every setting that exists for tests, laptops or load tests, and every credential
 * published in this repository. Dev, the tests and multi-replica test setups keep all of them.
 *
 * <ul>
 *     <li>{@code authorizer.type: rule-based}: approves test cards against an issuer simulated in-process; staging
 *     and prod call an issuer API ({@code http}, {@code authorizer.http.uri}).</li>
 *     <li>The development fingerprint secret of {@code config/dev/config.yaml}, current or previous: with it,
 *     fingerprints and attempt ids are keyed by a value anyone can read here. (No secret at all is refused before,
 *     by {@code AppSettings}.)</li>
 *     <li>No API key at all (a missing or empty Secret), or a key published in this repository (the development key
 *     of {@code config/dev} and the README, the tests' keys).</li>
 *     <li>{@code idempotency.store: in-memory}: one replica's memory, forgotten at every restart; staging and prod run
 *     several replicas on a shared store, {@code postgres} (the system of record) or {@code redis}.</li>
 *     <li>A database password in the environment's config file or a system property, as {@code database.password}
 *     or in {@code database.url}: it must come from the Secret, as an environment variable
 *     ({@code DATABASE_PASSWORD}, or {@code DATABASE_URL} when the Secret holds the whole URL).</li>
 * </ul>
 *
 * <p>The environment itself has a floor ({@link #checkFloor}): the one the {@code APP_CONFIG_FILE} files declare. A
 * system property or an environment variable may raise it ({@code APP_ENVIRONMENT=prod} over the staging file), never
 * lower it: {@code APP_ENVIRONMENT=dev} over {@code config/prod/config.yaml} would drop every rule above.
 */
final class EnvironmentRules {

    private EnvironmentRules() {
    }

    /**
     * Refuses an {@code app.environment} below the one the environment's config file declares. The file is the
     * reviewed, versioned statement of what a deployment is; system properties and environment variables (which take
     * precedence over it) come from a pod spec, a shell or a {@code JAVA_TOOL_OPTIONS}, and must not be able to turn
     * prod's guards off.
     *
     * @param config        the merged configuration, as the service reads it
     * @param appConfigFile the {@code APP_CONFIG_FILE} value (one path or several, comma-separated; the last file that
     *                      sets {@code app.environment} declares it), or {@code null} / blank when none is given (then
     *                      the only lower source is {@code application.yaml}, which declares dev: no floor)
     * @throws ConfigurationException naming {@code app.environment}, where the lower value came from, the file and
     *                                its environment, and the values allowed
     */
    static void checkFloor(Config config, String appConfigFile) {
        AppConfigFiles files = AppConfigFiles.parse(appConfigFile);
        if (files.isEmpty()) {
            return;
        }
        Config file = files.filesOnly();
        AppSettings.Environment declared = ConfigValues.create(file)
                .oneOf("app.environment", AppSettings.Environment.class, AppSettings.Environment.DEV);
        AppSettings.Environment effective = ConfigValues.create(config)
                .oneOf("app.environment", AppSettings.Environment.class, AppSettings.Environment.DEV);
        if (effective.compareTo(declared) >= 0) {
            return;
        }
        String source = System.getProperty("app.environment") != null ? "the system property app.environment"
                : "an environment variable (APP_ENVIRONMENT)";
        String allowed = Arrays.stream(AppSettings.Environment.values()).filter(e -> e.compareTo(declared) >= 0)
                .map(ConfigValues::configName).collect(Collectors.joining(" | "));
        throw new ConfigurationException("app.environment", "'" + ConfigValues.configName(effective) + "' from "
                + source + " is below " + ConfigValues.configName(declared) + ", which APP_CONFIG_FILE ("
                + appConfigFile + ") declares; allowed: " + allowed + " (an override may raise the environment, never "
                + "lower it: a lower one would drop the file's refusal of development keys and secrets and of the test "
                + "authorizer)");
    }

    /**
     * Checks the settings against the rules of their environment.
     *
     * @param settings every other setting, already valid on its own
     * @throws ConfigurationException naming the first refused key and what the environment allows instead
     */
    static void check(AppSettings settings) {
        if (settings.environment() == AppSettings.Environment.DEV) {
            return;
        }
        String environment = "app.environment " + settings.environment().name().toLowerCase(Locale.ROOT);
        if (settings.authorizer().type() != AuthorizerSettings.Type.HTTP) {
            throw new ConfigurationException("authorizer.type", "'rule-based' is refused with " + environment
                    + " (it approves test cards in-process); allowed: http, with authorizer.http.uri naming the issuer");
        }
        IdempotencySettings idempotency = settings.idempotency();
        if (idempotency.fingerprintSecret().equals(IdempotencySettings.DEVELOPMENT_SECRET)) {
            throw new ConfigurationException("idempotency.fingerprint-secret", "the development value of "
                    + "config/dev/config.yaml is refused with " + environment + "; allowed: a secret of at least "
                    + IdempotencySettings.MIN_SECRET_LENGTH + " characters from the Secret payments-authorization-secrets "
                    + "(IDEMPOTENCY_FINGERPRINT_SECRET)");
        }
        if (idempotency.previousSecret().filter(IdempotencySettings.DEVELOPMENT_SECRET::equals).isPresent()) {
            throw new ConfigurationException("idempotency.fingerprint-secret-previous", "the development value of "
                    + "config/dev/config.yaml is refused with " + environment + "; allowed: unset, or the secret used "
                    + "before the current one");
        }
        AuthSettings auth = settings.auth();
        if (auth.apiKeys().size() == 0) {
            throw new ConfigurationException(AuthSettings.API_KEYS_FILE, "no API key configured with " + environment
                    + " (every request would be refused); allowed: a file of 'sha256:<hex> <merchant-id>' lines, the "
                    + "Secret payments-authorization-api-keys mounted read-only");
        }
        auth.apiKeys().publishedKeySource().ifPresent(source -> {
            throw new ConfigurationException(source, "holds an API key published in this repository (the development "
                    + "or a test key), refused with " + environment + "; allowed: hashes of keys generated for this "
                    + "environment only");
        });
        if (idempotency.store() == IdempotencySettings.Store.IN_MEMORY) {
            throw new ConfigurationException("idempotency.store", "'in-memory' is refused with " + environment
                    + " (each replica would keep its own keys, and a restart forgets every payment); allowed: postgres "
                    + "(the system of record) or redis");
        }
        settings.backends().database().flatMap(DatabaseSettings::passwordOutsideSecret).ifPresent(where -> {
            String key = where.startsWith("database.url") ? "database.url" : "database.password";
            throw new ConfigurationException(key, "a password (" + where + ") is refused with " + environment
                    + "; allowed: the password only from the Secret, as the environment variable "
                    + DatabaseSettings.PASSWORD_VARIABLE + " (or in DATABASE_URL)");
        });
    }
}
