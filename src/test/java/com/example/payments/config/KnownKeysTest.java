package com.example.payments.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import com.example.payments.testing.EnvironmentFiles;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A key the service does not know, in its own sections, stops startup naming the closest known key (file, system
 * property) or is warned about (environment variable); Helidon's listener keys, the JVM's properties and a pod's other
 * variables are left alone.
 */
class KnownKeysTest {

    private static final KnownKeys KNOWN = KnownKeys.load();

    @TempDir
    Path dir;

    private static Properties properties(String... pairs) {
        Properties properties = new Properties();
        for (int i = 0; i < pairs.length; i += 2) {
            properties.setProperty(pairs[i], pairs[i + 1]);
        }
        return properties;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "warm-up.enabled|warm-up.requests",
            "warmup.requests|warm-up.requests",
            "idempotency.merchant-quota.max-record|idempotency.merchant-quota.max-records",
            "shutdown.drain-timout|shutdown.drain-timeout",
            "idempotency.redis.url|idempotency.redis.uri",
            "tracing.otlp.endpont|tracing.otlp.endpoint",
            "health-server.max-payload-siz|health-server.max-payload-size",
            "server.max-tcp-conections|server.max-tcp-connections"})
    void anUnknownKeyInTheConfigFileIsRefusedNamingTheClosestKnownKey(String key, String closest)
            throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, yaml(key));
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> KNOWN.checkFile(file.toString()));
        assertThat(e.getMessage(), is(key + ": not a key of this service (set by APP_CONFIG_FILE (" + file + ")); the "
                                      + "closest known key is " + closest + "; allowed: the keys of "
                                      + "docs/configuration.md (under server and health-server, Helidon's listener "
                                      + "options)"));
    }

    // a.b.c: x as nested YAML
    private static String yaml(String key) {
        String[] parts = key.split("\\.");
        StringBuilder yaml = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            yaml.append("  ".repeat(i)).append(parts[i]).append(i == parts.length - 1 ? ": x\n" : ":\n");
        }
        return yaml.toString();
    }

    @Test
    void aSystemPropertyTypoIsRefusedNamingTheClosestKnownKey() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> KNOWN.checkSystemProperties(
                properties("warm-up.enabled", "false", "java.home", "/opt/java")));
        assertThat(e.getMessage(), is("warm-up.enabled: not a key of this service (set by a system property); the "
                                      + "closest known key is warm-up.requests; allowed: the keys of "
                                      + "docs/configuration.md (under server and health-server, Helidon's listener "
                                      + "options)"));
    }

    @Test
    void aMistypedListenerOptionOfHelidonIsRefusedNamingTheOption() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> KNOWN.checkSystemProperties(
                properties("server.max-tcp-conections", "100")));
        assertThat(e.getMessage(), is("server.max-tcp-conections: not a key of this service (set by a system "
                                      + "property); the closest known key is server.max-tcp-connections; allowed: the "
                                      + "keys of docs/configuration.md (under server and health-server, Helidon's "
                                      + "listener options)"));
    }

    @Test
    void theJvmsPropertiesHelidonsListenerKeysAndKnownKeysPass() {
        KNOWN.checkSystemProperties(properties(
                "java.home", "/opt/java", "user.dir", "/", "http.proxyHost", "proxy", "http.nonProxyHosts", "localhost",
                "http.agent", "x", "http.auth.digest.validateServer", "true", "https.proxyHost", "proxy",
                "server.port", "0", "server.connection-config.read-timeout", "PT10S", "health-server.max-payload-size",
                "1024", "server.features.observe.enabled", "false", "server.shutdown-grace-period", "PT1S",
                "health-server.backlog", "64", "warm-up.requests", "0", "database.url", "jdbc:postgresql://db/payments",
                "idempotency.fingerprint-secret", "a-real-secret-value"));
    }

    @Test
    void theConfigFileMayHoldHelidonsListenerOptionsAndShapesTheValuesReport() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, """
                server:
                  connection-config:
                    read-timeout: PT10S
                  features:
                    observe:
                      enabled: false
                health-server:
                  max-payload-size: 1024
                health:
                  prober: PT1S
                authorizer:
                  timeout: [PT5S, PT6S]
                http:
                """);
        KNOWN.checkFile(file.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "staging", "prod"})
    void theEnvironmentFilesHoldOnlyKnownKeys(String environment) {
        EnvironmentFiles.files(environment).forEach(file -> KNOWN.checkFile(file.toString()));
    }

    @Test
    void anUnknownEnvironmentVariableInTheServicesSectionsIsWarnedAbout() {
        assertThat(KNOWN.environmentWarnings(Map.of("WARM_UP_ENABLED", "false", "PATH", "/bin")), is(List.of(
                "Environment variable WARM_UP_ENABLED sets no key of this service and is ignored; the closest known "
                + "key is warm-up.requests (WARM_UP_REQUESTS)")));
    }

    @Test
    void aPodsOwnVariablesAndTheKnownKeysAreNotWarnedAbout() {
        assertThat(KNOWN.environmentWarnings(Map.ofEntries(
                Map.entry("APP_CONFIG_FILE", "/etc/config.yaml"), Map.entry("HTTP_PROXY", "http://proxy:3128"),
                Map.entry("http_proxy", "http://proxy:3128"), Map.entry("HTTPS_PROXY", "http://proxy:3128"),
                Map.entry("HEALTH_SERVER_PORT", "8081"), Map.entry("SERVER_CONNECTION_CONFIG_READ_TIMEOUT", "PT1S"),
                Map.entry("KUBERNETES_SERVICE_HOST", "10.0.0.1"), Map.entry("JAVA_HOME", "/opt/java"),
                Map.entry("DATABASE_URL", "jdbc:postgresql://db/payments"), Map.entry("DATABASE_PASSWORD", "x"),
                Map.entry("IDEMPOTENCY_FINGERPRINT_SECRET", "x"), Map.entry("IDEMPOTENCY_REDIS_URI", "redis://r"),
                Map.entry("APP_ENVIRONMENT", "prod"), Map.entry("HEALTH_CIRCUIT_BREAKER_THRESHOLD", "150"),
                Map.entry("IDEMPOTENCY_MERCHANT_QUOTA_MAX_RECORDS", "10"), Map.entry("ACCESS_LOG_SAMPLE_RATIO", "1"))),
                   empty());
    }

    @Test
    void theClosestKeyPrefersTheSectionOfTheUnknownKey() {
        // Seven edits to each of these: the section decides, then the alphabet.
        assertThat(ClosestKey.distance("warm-up.enabled", "tracing.enabled"), is(7));
        assertThat(ClosestKey.distance("warm-up.enabled", "warm-up.requests"), is(7));
        assertThat(ClosestKey.closest("warm-up.enabled", KNOWN.keys(), '.'), is("warm-up.requests"));
        assertThat(ClosestKey.distance("kitten", "sitting"), is(3));
    }
}
