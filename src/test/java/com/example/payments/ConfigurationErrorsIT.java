package com.example.payments;

import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.example.payments.testing.Http;
import com.example.payments.testing.BuiltJar;
import com.example.payments.testing.EnvironmentFiles;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The packaged service refuses a bad configuration: exit status 2 and one line naming the key and the range.
 * {@link #aMalformedValueExitsWith2AndOneLineNamingTheKey} walks a table of malformed values from
 * system properties, environment variables and the {@code APP_CONFIG_FILE}; {@code MalformedConfigurationTest} walks
 * every key in-process.
 */
class ConfigurationErrorsIT {

    /** prod's files as its pods read them: {@code config/base/base.yaml,config/prod/config.yaml}. */
    private static final String PROD = EnvironmentFiles.appConfigFile("prod");

    @Test
    void anUnknownStoreStopsStartupWithOneLineNamingTheKey() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of("idempotency.store", "memcached"), Map.of());
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: idempotency.store: 'memcached' is not allowed; "
                                            + "allowed: in-memory | redis | postgres"));
        assertThat(exited.output().stream().anyMatch(line -> line.contains("Exception")), is(false));
    }

    @Test
    void redisWithoutTheDatabaseBehindItStopsStartupEvenInDev() throws Exception {
        // Redis is the registry only: the authorizations live in PostgreSQL, in every environment (dev included).
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of("idempotency.store", "redis",
                "idempotency.redis.uri", "redis://127.0.0.1:6379", "idempotency.fingerprint-secret",
                "it-test-fingerprint-secret"), Map.of());
        assertThat(String.join("\n", exited.output()), exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: database.url: missing; allowed: "
                + "jdbc:postgresql://host[:port]/database[?driver parameters], port from 1 to 65535, when "
                + "idempotency.store is postgres or redis (the authorizations live in PostgreSQL, Redis is only the "
                + "registry in front of it; from the Secret: DATABASE_URL)"));
        assertThat(exited.output().stream().anyMatch(line -> line.contains("Exception") || line.startsWith("\tat ")),
                   is(false));
    }

    @Test
    void aMerchantQuotaThatCouldFillTheStoreAloneStopsStartupNamingBothKeys() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(
                Map.of("idempotency.max-keys", "1000", "idempotency.merchant-quota.max-records", "5000"), Map.of());
        assertThat(String.join("\n", exited.output()), exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: idempotency.merchant-quota.max-records: '5000' is "
                                            + "not allowed with idempotency.store in-memory and idempotency.max-keys "
                                            + "1000; allowed: an integer from 1 to idempotency.max-keys / 2 = 500 "
                                            + "(raise idempotency.max-keys to at least twice max-records), so that one "
                                            + "merchant cannot fill the store and leave every other merchant 503"));
        assertThat(exited.output().stream().anyMatch(line -> line.contains("Exception") || line.startsWith("\tat ")),
                   is(false));
    }

    @Test
    void anEnvironmentVariableCannotLowerProdToDev(@TempDir Path dir) throws Exception {
        // The input: prod's files with every Secret mounted, and APP_ENVIRONMENT=dev on top.
        Path apiKeys = dir.resolve("api-keys");
        Files.writeString(apiKeys, "sha256:" + "3c".repeat(32) + " m_123\n");
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of(), Map.of(
                "APP_CONFIG_FILE", PROD, "APP_ENVIRONMENT", "dev",
                "AUTH_API_KEYS_FILE", apiKeys.toString(),
                "IDEMPOTENCY_FINGERPRINT_SECRET", "stand-in-for-a-real-secret-of-32-chars",
                "DATABASE_URL", "jdbc:postgresql://127.0.0.1:1/payments", "DATABASE_USERNAME", "payments",
                "DATABASE_PASSWORD", "not-a-real-password"));
        assertThat(String.join("\n", exited.output()), exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: app.environment: 'dev' from an environment "
                                            + "variable (APP_ENVIRONMENT) is below prod, which APP_CONFIG_FILE "
                                            + "(" + PROD + ") declares; allowed: prod (an override may "
                                            + "raise the environment, never lower it: a lower one would drop the "
                                            + "file's refusal of development keys and secrets and of the test "
                                            + "authorizer)"));
        assertThat(exited.output().stream().anyMatch(line -> line.contains("Exception") || line.startsWith("\tat ")),
                   is(false));
    }

    @Test
    void aSystemPropertyCannotLowerProdToStaging() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of("app.environment", "staging"),
                                                                Map.of("APP_CONFIG_FILE", PROD));
        assertThat(String.join("\n", exited.output()), exited.status(), is(2));
        assertThat(exited.output().stream().filter(line -> line.startsWith("Invalid configuration: ")).toList(),
                   is(List.of("Invalid configuration: app.environment: 'staging' from the system property "
                              + "app.environment is below prod, which APP_CONFIG_FILE (" + PROD + ") "
                              + "declares; allowed: prod (an override may raise the environment, never lower it: a "
                              + "lower one would drop the file's refusal of development keys and secrets and of the "
                              + "test authorizer)")));
    }

    @Test
    void aMistypedKeyAsASystemPropertyStopsStartupNamingTheClosestKnownKey() throws Exception {
        // The input: warm-up has no "enabled" key; warm-up.requests=0 turns it off.
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of("warm-up.enabled", "false"), Map.of());
        assertThat(String.join("\n", exited.output()), exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: warm-up.enabled: not a key of this service (set by "
                                            + "a system property); the closest known key is warm-up.requests; allowed: "
                                            + "the keys of docs/configuration.md (under server and health-server, "
                                            + "Helidon's listener options)"));
        assertThat(exited.output().stream().anyMatch(line -> line.contains("Exception") || line.startsWith("\tat ")),
                   is(false));
    }

    @Test
    void aMistypedKeyInTheConfigFileStopsStartupNamingTheClosestKnownKey(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, "shutdown:\n  drain-timout: PT20S\n");
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of(), Map.of("APP_CONFIG_FILE", file.toString()));
        assertThat(String.join("\n", exited.output()), exited.status(), is(2));
        // The temporary directory's long digit run is masked like a card number: match around the path.
        List<String> errors = exited.output().stream().filter(line -> line.startsWith("Invalid configuration: "))
                .toList();
        assertThat(errors.toString(), errors.size(), is(1));
        assertThat(errors.getFirst(), errors.getFirst().startsWith("Invalid configuration: shutdown.drain-timout: not a "
                                                                   + "key of this service (set by APP_CONFIG_FILE (/"),
                   is(true));
        assertThat(errors.getFirst(), errors.getFirst().endsWith("config.yaml)); the closest known key is "
                                                                 + "shutdown.drain-timeout; allowed: the keys of "
                                                                 + "docs/configuration.md (under server and "
                                                                 + "health-server, Helidon's listener options)"),
                   is(true));
    }

    @Test
    void aMistypedKeyOnlyAnEnvironmentVariableSetsIsWarnedAboutAndHelidonsListenerKeysStillWork() throws Exception {
        try (ServiceProcess service = ServiceProcess.start(Map.of("server.max-payload-size", "20000"),
                                                           Map.of("WARM_UP_ENABLED", "false"))) {
            service.awaitReady(Duration.ofSeconds(30));
            assertThat(service.output().stream().anyMatch(line -> line.contains(
                    "Environment variable WARM_UP_ENABLED sets no key of this service and is ignored; the closest "
                    + "known key is warm-up.requests (WARM_UP_REQUESTS)")), is(true));
        }
    }

    @Test
    void stagingRefusesADatabasePasswordWrittenInItsConfigFile(@TempDir Path dir) throws Exception {
        Path keys = dir.resolve("api-keys");
        Files.writeString(keys, "sha256:" + "5e".repeat(32) + " m_123\n");
        for (String database : List.of("  password: written-in-the-configmap",
                                       "  url: jdbc:postgresql://127.0.0.1:1/payments?password=in-the-url")) {
            Path file = dir.resolve("config.yaml");
            Files.writeString(file, """
                    app:
                      environment: staging
                    authorizer:
                      type: http
                      http:
                        uri: https://issuer.example.com
                    idempotency:
                      store: postgres
                    auth:
                      api-keys-file: %s
                    database:
                      url: jdbc:postgresql://127.0.0.1:1/payments
                    %s
                    """.formatted(keys, database).replace("  url: jdbc:postgresql://127.0.0.1:1/payments\n  url:",
                                                          "  url:"));
            ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of(), Map.of(
                    "APP_CONFIG_FILE", file.toString(),
                    "IDEMPOTENCY_FINGERPRINT_SECRET", "stand-in-for-a-real-secret-of-32-chars"));
            String key = database.contains("url") ? "database.url" : "database.password";
            assertThat(String.join("\n", exited.output()), exited.status(), is(2));
            assertThat(exited.output(), hasItem("Invalid configuration: " + key + ": a password (" + key
                                                + " in APP_CONFIG_FILE) is refused with app.environment staging; "
                                                + "allowed: the password only from the Secret, as the environment "
                                                + "variable DATABASE_PASSWORD (or in DATABASE_URL)"));
        }
    }

    @Test
    void anAuthorizerTimeoutAsLongAsTheDrainStopsStartup() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(
                Map.of("authorizer.timeout", "PT20S", "shutdown.drain-timeout", "PT20S",
                       "shutdown.hard-deadline", "PT40S"), Map.of());
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: authorizer.timeout: 'PT20S' is not allowed; "
                                            + "allowed: a duration > PT0S and < shutdown.drain-timeout (PT20S), so no "
                                            + "request outlives the drain"));
    }

    @Test
    void aLeaseThatDoesNotOutlastTheAuthorizerAndTheStoreStopsStartupNamingBothKeys() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(
                Map.of("authorizer.timeout", "PT2S", "idempotency.in-flight-lease", "PT2S"), Map.of());
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: idempotency.in-flight-lease: 'PT2S' is not allowed; "
                                            + "allowed: a duration > authorizer.timeout (PT2S) + the idempotency store's "
                                            + "worst case (PT0S) = PT2S, so that the lease outlasts the issuer call and "
                                            + "the recording of its decision even when no renewal gets through"));
    }

    @Test
    void theHttpAuthorizerWithoutAnIssuerUriStopsStartupWithOneLineNamingTheKey() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of("authorizer.type", "http"), Map.of());
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: authorizer.http.uri: missing; allowed: an "
                                            + "absolute http:// or https:// URI with a host and no query, e.g. "
                                            + "http://issuer.internal:8090, when authorizer.type is http"));
    }

    @Test
    void anUnknownAuthorizerTypeStopsStartup() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of(), Map.of("AUTHORIZER_TYPE", "soap"));
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: authorizer.type: 'soap' is not allowed; allowed: "
                                            + "rule-based | http"));
    }

    @Test
    void prodRefusesTheTestAuthorizerWithOneLine() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of("app.environment", "prod"), Map.of());
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: authorizer.type: 'rule-based' is refused with "
                                            + "app.environment prod (it approves test cards in-process); allowed: "
                                            + "http, with authorizer.http.uri naming the issuer"));
    }

    @Test
    void stagingRefusesTheDevelopmentKeyOfConfigDevWithOneLine() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(
                Map.of("app.environment", "staging", "authorizer.type", "http",
                       "authorizer.http.uri", "https://issuer.example.com"),
                Map.of("APP_CONFIG_FILE", "config/dev/config.yaml",
                       "IDEMPOTENCY_FINGERPRINT_SECRET", "stand-in-for-a-real-secret-of-32-chars"));
        assertThat(exited.status(), is(2));
        assertThat(exited.output().stream().filter(line -> line.startsWith("Invalid configuration: ")).toList(),
                   is(java.util.List.of("Invalid configuration: auth.api-keys: holds an API key published in this "
                                        + "repository (the development or a test key), refused with app.environment "
                                        + "staging; allowed: hashes of keys generated for this environment only")));
    }

    @Test
    void prodWithoutItsFingerprintSecretRefusesToStartNamingTheKey(@TempDir Path dir) throws Exception {
        // The prod config files with every Secret mounted but the fingerprint secret (application.yaml has none).
        Path apiKeys = dir.resolve("api-keys");
        Files.writeString(apiKeys, "sha256:" + "3c".repeat(32) + " m_123\n");
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of(), Map.of(
                "APP_CONFIG_FILE", PROD, "AUTH_API_KEYS_FILE", apiKeys.toString(),
                "DATABASE_URL", "jdbc:postgresql://127.0.0.1:1/payments", "DATABASE_USERNAME", "payments",
                "DATABASE_PASSWORD", "not-a-real-password"));
        assertThat(exited.output().toString(), exited.status(), is(2));
        assertThat(exited.output().stream().filter(line -> line.startsWith("Invalid configuration: ")).toList(),
                   is(List.of("Invalid configuration: idempotency.fingerprint-secret: missing with app.environment "
                              + "prod, idempotency.store postgres and authorizer.type http; allowed: a secret of at least "
                              + "16 characters, the same on every replica (the Secret payments-authorization-secrets "
                              + "as IDEMPOTENCY_FINGERPRINT_SECRET; config/dev/config.yaml for dev). Only dev with the "
                              + "in-memory store and the rule-based authorizer runs without one")));
    }

    @Test
    void theJarWithoutAConfigFileRunsTheEmbeddedDefaultsOnARandomSecretAndSaysSo() throws Exception {
        // README's quick start, exactly: java -jar target/payments-authorization.jar (ports 0 here), no test settings.
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                       "-Dserver.port=0", "-Dhealth-server.port=0", "-jar",
                                       BuiltJar.path().toString());
        try (ServiceProcess service = ServiceProcess.launch(command, Map.of(), Duration.ofSeconds(30))) {
            service.awaitReady(Duration.ofSeconds(30));
            assertThat(service.output().stream().anyMatch(line -> line.contains(
                    "No idempotency.fingerprint-secret configured: request identities use a random secret of this "
                    + "process")), is(true));
            HttpResponse<String> created = Http.post(
                    "http://127.0.0.1:" + service.businessPort() + "/v1/authorizations", "order-1",
                    Http.VALID_BODY);
            assertThat("no API key on the embedded defaults", created.statusCode(), is(401));
        }
    }

    @Test
    void aConfigFileThatIsNotValidYamlStopsStartupWithOneLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, "server:\n  port: [oops\n");
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of(), Map.of("APP_CONFIG_FILE", file.toString()));
        assertThat(exited.status(), is(2));
        assertThat(exited.output().stream().filter(line -> line.startsWith("Invalid configuration: ")).count(), is(1L));
        assertThat(exited.output().stream().anyMatch(line -> line.contains("Exception") || line.startsWith("\tat ")),
                   is(false));
    }

    @Test
    void aPortInUseStopsStartupInsteadOfServingHalfTheListeners() throws Exception {
        try (ServerSocket taken = new ServerSocket(0)) {
            ServiceProcess.Exited exited = ServiceProcess.runToExit(
                    Map.of("server.port", "0", "health-server.port", String.valueOf(taken.getLocalPort())), Map.of());
            assertThat(exited.status(), is(2));
            assertThat(exited.output(), hasItem("Invalid configuration: health-server.port: cannot listen on port "
                                                + taken.getLocalPort() + " (in use, or not permitted); allowed: a "
                                                + "free port from 0 to 65535"));
        }
    }

    @Test
    void environmentVariablesOverrideTheDefaults() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(
                Map.of(), Map.of("HEALTH_CIRCUIT_BREAKER_THRESHOLD", "-5"));
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: health.circuit-breaker.threshold: '-5' is out of "
                                            + "range; allowed: an integer from 0 to 2147483647"));
        assertThat(exited.output(), not(hasItem("")));
    }

    static Stream<Arguments> malformedValues() {
        String secret = "idempotency.fingerprint-secret";
        return Stream.of(
                // The input: Lettuce's NumberFormatException used to end the JVM with exit 1.
                Arguments.of("idempotency.redis.uri", Map.of("idempotency.store", "redis", secret, "s3cr3t-0123456789",
                        "idempotency.redis.uri", "redis://user:pa55word@127.0.0.1:6379/x"), Map.of(), null),
                Arguments.of("idempotency.redis.uri", Map.of("idempotency.redis.uri", "redis://127.0.0.1:99999"),
                             Map.of(), null),
                Arguments.of("authorizer.http.uri", Map.of("authorizer.type", "http",
                        "authorizer.http.uri", "http://127.0.0.1:0"), Map.of(), null),
                Arguments.of("health.prober.interval", Map.of(), Map.of("HEALTH_PROBER_INTERVAL", ""), null),
                Arguments.of("health.prober.interval", Map.of("health.prober.interval", "PT0.0001S"), Map.of(), null),
                Arguments.of("shutdown.hard-deadline", Map.of("shutdown.hard-deadline", "PT99999999999999H"),
                             Map.of(), null),
                Arguments.of("idempotency.max-keys", Map.of("idempotency.max-keys", "1e5"), Map.of(), null),
                Arguments.of("logging.format", Map.of("logging.format", "yaml"), Map.of(), null),
                Arguments.of("server.host", Map.of("server.host", "999.1.1.1"), Map.of(), null),
                Arguments.of("server.max-concurrent-requests", Map.of("server.max-concurrent-requests", "lots"),
                             Map.of(), null),
                Arguments.of("server.idle-connection-timeout", Map.of("server.idle-connection-timeout", "65s"),
                             Map.of(), null),
                Arguments.of("server.max-tcp-connections", Map.of("server.max-tcp-connections", "1e3"), Map.of(),
                             null),
                Arguments.of("http.header-timeout", Map.of(), Map.of("HTTP_HEADER_TIMEOUT", "5s"), null),
                Arguments.of("http.body-timeout", Map.of(), Map.of(), "http:\n  body-timeout: [PT10S]\n"),
                Arguments.of("authorizer.timeout", Map.of(), Map.of(), "authorizer:\n  timeout: [PT5S, PT6S]\n"),
                Arguments.of("health.prober", Map.of(), Map.of(), "health:\n  prober: PT1S\n"),
                Arguments.of("shutdown.drain-timeout", Map.of(), Map.of(), "shutdown:\n  drain-timeout: {s: 10}\n"),
                Arguments.of("health-server.port", Map.of(), Map.of(), "health-server:\n  port:\n"),
                // Unknown keys, Helidon's listener options included: refused naming the closest one.
                Arguments.of("server.max-tcp-conections", Map.of("server.max-tcp-conections", "100"), Map.of(), null),
                Arguments.of("tracing.enable", Map.of(), Map.of(), "tracing:\n  enable: true\n"));
    }

    @ParameterizedTest(name = "{0}: {1} {2} {3}")
    @MethodSource("malformedValues")
    void aMalformedValueExitsWith2AndOneLineNamingTheKey(String key, Map<String, String> properties,
                                                         Map<String, String> env, String yaml, @TempDir Path dir)
            throws Exception {
        Map<String, String> environment = new java.util.HashMap<>(env);
        if (yaml != null) {
            Path file = dir.resolve("config.yaml");
            Files.writeString(file, yaml);
            environment.put("APP_CONFIG_FILE", file.toString());
        }
        ServiceProcess.Exited exited = ServiceProcess.runToExit(properties, environment);
        assertThat(exited.output().toString(), exited.status(), is(2));
        List<String> errors = exited.output().stream().filter(line -> line.startsWith("Invalid configuration: "))
                .toList();
        assertThat(exited.output().toString(), errors.size(), is(1));
        assertThat(errors.getFirst(), errors.getFirst().startsWith("Invalid configuration: " + key + ": "), is(true));
        assertThat(errors.getFirst(), errors.getFirst().contains("allowed"), is(true));
        assertThat(exited.output().stream().anyMatch(line -> line.contains("Exception") || line.startsWith("\tat ")
                                                             || line.contains("pa55word")), is(false));
    }
}
