package com.example.payments;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import com.example.payments.config.ConfigurationException;
import com.example.payments.testing.TestCredentials;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code app.environment} staging and prod refuse every test-only setting at startup, one line naming the key,
 * whichever idempotency store is selected; dev accepts them. The merged configurations of the real environments are
 * checked in {@code deploy/} ({@code OverlayManifestsTest}, {@code PublishedKeysTest}).
 */
class EnvironmentRulesTest {

    /** A key generated for "this environment": in no file of the repository. */
    private static final String REAL_KEY_HASH = "sha256:" + "5e".repeat(32) + " m_123";

    @TempDir
    Path dir;

    private Map<String, String> secure(String environment, String store) throws IOException {
        Path keys = dir.resolve("api-keys");
        Files.writeString(keys, "# mounted from a Secret\n" + REAL_KEY_HASH + "\n");
        Map<String, String> values = new HashMap<>(Map.of(
                "app.environment", environment,
                "authorizer.type", "http",
                "authorizer.http.uri", "https://issuer.example.com",
                "idempotency.fingerprint-secret", "stand-in-for-a-real-secret-of-32-chars",
                "auth.api-keys-file", keys.toString(),
                "idempotency.store", store));
        if (store.equals("redis")) {
            values.put("idempotency.redis.uri", "rediss://user:password@redis.example.com:6380/0");
            values.put("idempotency.in-flight-lease", "PT12S");
            values.put("shutdown.drain-timeout", "PT15S");
            values.put("shutdown.hard-deadline", "PT35S");
        }
        // The system of record: with postgres alone, and behind redis.
        if (store.equals("postgres") || store.equals("redis")) {
            values.put("database.url", "jdbc:postgresql://postgres.example.com:5432/payments?sslmode=verify-full");
            values.put("database.username", "payments_authorization");
        }
        return values;
    }

    private static AppSettings settings(Map<String, String> values) {
        return AppSettings.create(Config.builder()
                                          .disableEnvironmentVariablesSource()
                                          .disableSystemPropertiesSource()
                                          .addSource(ConfigSources.create(values))
                                          .addSource(ConfigSources.classpath("application.yaml"))
                                          .build());
    }

    @ParameterizedTest
    @CsvSource({"staging,postgres", "staging,redis", "prod,postgres", "prod,redis"})
    void aProductionLikeEnvironmentStartsWithRealSettings(String environment, String store) throws IOException {
        assertThat(settings(secure(environment, store)).auth().apiKeys().size(), is(1));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "authorizer.type|rule-based|authorizer.type: 'rule-based' is refused with app.environment ENV",
            "idempotency.fingerprint-secret|local-development-only-fingerprint-secret|idempotency.fingerprint-secret: "
            + "the development value of config/dev/config.yaml is refused with app.environment ENV",
            "idempotency.fingerprint-secret-previous|local-development-only-fingerprint-secret|"
            + "idempotency.fingerprint-secret-previous: the development value of config/dev/config.yaml is refused",
            "auth.api-keys|DEV_KEY|auth.api-keys: holds an API key published in this repository",
            "auth.api-keys-file||auth.api-keys-file: no API key configured with app.environment ENV"})
    void stagingAndProdRefuseTestOnlySettingsWhicheverTheStore(String key, String value, String message)
            throws IOException {
        for (String environment : new String[] {"staging", "prod"}) {
            for (String store : new String[] {"postgres", "redis"}) {
                Map<String, String> values = secure(environment, store);
                if (value == null) {
                    values.remove(key);
                } else {
                    values.put(key, value.equals("DEV_KEY") ? TestCredentials.API_KEYS : value);
                }
                ConfigurationException refused = assertThrows(ConfigurationException.class, () -> settings(values),
                                                              () -> environment + " " + store + " " + key);
                assertThat(refused.getMessage(), startsWith(message.replace("ENV", environment)));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"staging", "prod"})
    void aSecretFileHoldingATestKeyIsRefused(String environment) throws IOException {
        Map<String, String> values = secure(environment, "postgres");
        Files.writeString(Path.of(values.get("auth.api-keys-file")), REAL_KEY_HASH + "\n"
                + TestCredentials.API_KEYS.split(",")[1] + "\n");
        ConfigurationException refused = assertThrows(ConfigurationException.class, () -> settings(values));
        assertThat(refused.getMessage(), startsWith("auth.api-keys-file: holds an API key published in this "
                                                    + "repository"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"in-memory", "redis", "postgres"})
    void devKeepsTheTestAuthorizerAndTheDevelopmentKeyAndSecret(String store) throws IOException {
        Map<String, String> values = secure("dev", store);
        values.putAll(Map.of("authorizer.type", "rule-based", "auth.api-keys", TestCredentials.API_KEYS,
                             "idempotency.fingerprint-secret", "local-development-only-fingerprint-secret"));
        assertThat(settings(values).auth().apiKeys().size(), is(3));
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "staging", "prod"})
    void everyEnvironmentRefusesRedisWithoutTheDatabaseBehindIt(String environment) throws IOException {
        Map<String, String> values = secure(environment, "redis");
        values.remove("database.url");
        ConfigurationException refused = assertThrows(ConfigurationException.class, () -> settings(values));
        assertThat(refused.getMessage(), startsWith("database.url: missing; allowed: jdbc:postgresql://"));
        assertThat(refused.getMessage(), containsString("when idempotency.store is postgres or redis"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"staging", "prod"})
    void stagingAndProdRefuseTheInMemoryStore(String environment) throws IOException {
        ConfigurationException refused = assertThrows(ConfigurationException.class,
                                                      () -> settings(secure(environment, "in-memory")));
        assertThat(refused.getMessage(), startsWith("idempotency.store: 'in-memory' is refused with app.environment "
                                                    + environment));
    }

    @Test
    void devAcceptsADatabasePasswordInItsConfig() throws IOException {
        Map<String, String> values = secure("dev", "postgres");
        values.put("database.password", "dev-only");
        assertThat(settings(values).backends().database().orElseThrow().password().orElseThrow(), is("dev-only"));
    }

    @ParameterizedTest(name = "{0} over a file declaring {1}")
    @CsvSource({"dev,prod,prod", "staging,prod,prod", "dev,staging,staging | prod"})
    void anOverrideBelowTheEnvironmentOfTheConfigFileIsRefusedNamingBoth(String override, String declared,
                                                                         String allowed) throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, "app:\n  environment: " + declared + "\n");
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> EnvironmentRules.checkFloor(
                merged(Map.of("app.environment", override), file), file.toString()));
        assertThat(e.getMessage(), is("app.environment: '" + override + "' from an environment variable "
                                      + "(APP_ENVIRONMENT) is below " + declared + ", which APP_CONFIG_FILE (" + file
                                      + ") declares; allowed: " + allowed + " (an override may raise the environment, "
                                      + "never lower it: a lower one would drop the file's refusal of development keys "
                                      + "and secrets and of the test authorizer)"));
    }

    @Test
    void anOverrideMayRaiseTheEnvironmentOfTheConfigFile() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, "app:\n  environment: staging\n");
        EnvironmentRules.checkFloor(merged(Map.of("app.environment", "prod"), file), file.toString());
        EnvironmentRules.checkFloor(merged(Map.of("app.environment", "STAGING"), file), file.toString());
        EnvironmentRules.checkFloor(merged(Map.of(), file), file.toString());
        EnvironmentRules.checkFloor(merged(Map.of("app.environment", "dev"), null), null);
    }

    private static Config merged(Map<String, String> overrides, Path file) {
        Config.Builder builder = Config.builder().disableEnvironmentVariablesSource().disableSystemPropertiesSource()
                .addSource(ConfigSources.create(overrides));
        if (file != null) {
            builder.addSource(ConfigSources.file(file));
        }
        return builder.addSource(ConfigSources.classpath("application.yaml")).build();
    }
}
