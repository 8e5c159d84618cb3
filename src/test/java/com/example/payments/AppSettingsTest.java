package com.example.payments;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import com.example.payments.authorization.AuthorizerSettings;
import com.example.payments.config.ConfigurationException;
import com.example.payments.idempotency.IdempotencySettings;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.startsWith;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Configuration mistakes fail at startup with one line naming the key and the allowed range.
 */
class AppSettingsTest {

    // Required with redis too (the system of record behind the registry); never connected to here.
    private static final String DATABASE = "jdbc:postgresql://127.0.0.1:5432/payments";

    private static AppSettings settings(Map<String, String> overrides) {
        return AppSettings.create(Config.builder()
                                          .disableEnvironmentVariablesSource()
                                          .disableSystemPropertiesSource()
                                          .addSource(ConfigSources.create(overrides))
                                          .addSource(ConfigSources.classpath("application.yaml"))
                                          .build());
    }

    @Test
    void theShippedDefaultsAreValid() {
        AppSettings defaults = settings(Map.of());
        assertThat(defaults.businessPort(), is(8080));
        assertThat(defaults.healthPort(), is(8081));
        assertThat(defaults.health().breakerThreshold(), is(60));
        assertThat(defaults.shutdown().drainTimeout().toSeconds(), is(10L));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '#', value = {
            "idempotency.store#memcached#idempotency.store: 'memcached' is not allowed; allowed: in-memory | redis | postgres",
            "health.prober.interval#PT0S#health.prober.interval: 'PT0S' is not allowed; allowed: a duration > PT0S",
            "health.prober.timeout#-PT1S#health.prober.timeout: 'PT-1S' is not allowed; allowed: a duration > PT0S",
            "health.prober.interval#500ms#health.prober.interval: '500ms' is not an ISO-8601 duration; allowed: a "
            + "duration > PT0S, e.g. PT5S",
            "shutdown.drain-timeout#PT0S#shutdown.drain-timeout: 'PT0S' is not allowed; allowed: a duration > PT0S",
            "shutdown.pre-drain-delay#-PT1S#shutdown.pre-drain-delay: 'PT-1S' is not allowed; allowed: a duration "
            + ">= PT0S",
            "authorizer.timeout#PT10S#authorizer.timeout: 'PT10S' is not allowed; allowed: a duration > PT0S and < "
            + "shutdown.drain-timeout (PT10S), so no request outlives the drain",
            "shutdown.hard-deadline#PT12S#shutdown.hard-deadline: 'PT12S' is not allowed; allowed: a duration > "
            + "pre-drain-delay + drain-timeout + cleanup-timeout + metrics-linger = PT13S",
            "health.circuit-breaker.threshold#-1#health.circuit-breaker.threshold: '-1' is out of range; allowed: "
            + "an integer from 0 to 2147483647",
            "health-server.port#8080#health-server.port: '8080' equals server.port; allowed: a port from 0 to 65535 "
            + "other than server.port (probes need their own listener)",
            "idempotency.fingerprint-secret#short#idempotency.fingerprint-secret: too short (5 characters); "
            + "allowed: at least 16",
            "idempotency.max-keys#0#idempotency.max-keys: '0' is out of range; allowed: an integer from 1 to "
            + "2147483647",
            "server.max-tcp-connections#-1#server.max-tcp-connections: '-1' is out of range; allowed: an integer "
            + "from 1 to 1000000",
            "health-server.max-tcp-connections#0#health-server.max-tcp-connections: '0' is out of range; allowed: "
            + "an integer from 1 to 1000000",
            "server.idle-connection-timeout#PT0S#server.idle-connection-timeout: 'PT0S' is not allowed; allowed: a "
            + "duration > PT0S",
            "http.header-timeout#PT0S#http.header-timeout: 'PT0S' is not allowed; allowed: a duration > PT0S",
            "http.body-timeout#10s#http.body-timeout: '10s' is not an ISO-8601 duration; allowed: a duration > PT0S, "
            + "e.g. PT5S",
            "health.liveness.progress-window#PT1S#health.liveness.progress-window: 'PT1S' is not allowed; allowed: "
            + "a duration > health.prober.interval + health.prober.timeout = PT1.5S",
            "health.liveness.progress-window#PT60S#health.liveness.progress-window: 'PT1M' is not allowed; "
            + "allowed: a duration > server.idle-connection-timeout + server.idle-connection-period = PT1M10S, so "
            + "that idle connections holding every connection slot until Helidon closes them cannot fail liveness",
            "idempotency.in-flight-lease#PT5S#idempotency.in-flight-lease: 'PT5S' is not allowed; allowed: a duration "
            + "> authorizer.timeout (PT5S) + the idempotency store's worst case (PT0S) = PT5S, so that the lease "
            + "outlasts the issuer call and the recording of its decision even when no renewal gets through",
            "idempotency.fingerprint-secret-previous#short#idempotency.fingerprint-secret-previous: not allowed (5 "
            + "characters); allowed: unset, or the secret used before the current one, at least 16 characters",
            "app.environment#production#app.environment: 'production' is not allowed; allowed: dev | staging | prod",
            "idempotency.merchant-quota.max-records#0#idempotency.merchant-quota.max-records: '0' is out of range; "
            + "allowed: an integer from 1 to 2147483647",
            "idempotency.merchant-quota.max-in-flight#10001#idempotency.merchant-quota.max-in-flight: '10001' is out of "
            + "range; allowed: an integer from 1 to 10000",
            "auth.api-keys#sha256:abc m_1#auth.api-keys: entry 1 is malformed; allowed: one 'sha256:<64 hex digits> "
            + "<merchant-id>' per line, the merchant id 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', '-'",
            "warm-up.requests#-1#warm-up.requests: '-1' is out of range; allowed: an integer from 0 to 100000",
            "warm-up.timeout#PT0S#warm-up.timeout: 'PT0S' is not allowed; allowed: a duration > PT0S",
            "auth.api-keys-file#/nonexistent/api-keys#auth.api-keys-file: '/nonexistent/api-keys' cannot be read "
            + "(NoSuchFileException); allowed: a readable file of API key hashes, e.g. the Secret "
            + "payments-authorization-api-keys mounted at /etc/payments-authorization-api-keys"})
    void aWrongValueFailsNamingTheKeyAndTheAllowedRange(String key, String value, String message) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(Map.of(key, value)));
        assertThat(e.getMessage(), is(message));
    }

    @Test
    void devAcceptsTheDevelopmentFingerprintSecretWithEveryStore() {
        AppSettings redis = settings(Map.of("idempotency.store", "redis", "idempotency.redis.uri",
                                            "redis://127.0.0.1:6379", "database.url", DATABASE,
                                            "idempotency.fingerprint-secret", IdempotencySettings.DEVELOPMENT_SECRET));
        assertThat(redis.environment(), is(AppSettings.Environment.DEV));
    }

    @Test
    void theShippedDefaultsHoldNoSecretAndRunOnARandomOneOfTheProcess() {
        AppSettings first = settings(Map.of());
        AppSettings second = settings(Map.of());

        assertThat(first.idempotency().generatedSecret(), is(true));
        assertThat(first.idempotency().fingerprintSecret().length() >= IdempotencySettings.MIN_SECRET_LENGTH,
                   is(true));
        assertThat("never the published development secret", first.idempotency().fingerprintSecret(),
                   is(not(IdempotencySettings.DEVELOPMENT_SECRET)));
        assertThat(second.idempotency().fingerprintSecret(), is(not(first.idempotency().fingerprintSecret())));
        assertThat(settings(Map.of("idempotency.fingerprint-secret", "a-real-secret-value")).idempotency()
                           .generatedSecret(), is(false));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "idempotency.store=redis,idempotency.redis.uri=redis://127.0.0.1:6379,database.url=jdbc:postgresql://h/p"
            + "|dev, idempotency.store redis and "
            + "authorizer.type rule-based",
            "authorizer.type=http,authorizer.http.uri=http://127.0.0.1:8090|dev, idempotency.store in-memory and "
            + "authorizer.type http",
            "app.environment=prod,authorizer.type=http,authorizer.http.uri=http://127.0.0.1:8090|prod, "
            + "idempotency.store in-memory and authorizer.type http"})
    void withoutAFingerprintSecretOnlyTheEmbeddedDefaultsStart(String overrides, String named) {
        Map<String, String> config = new HashMap<>();
        for (String pair : overrides.split(",")) {
            config.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
        }
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(config));
        assertThat(e.getMessage(), startsWith("idempotency.fingerprint-secret: missing with app.environment " + named
                                              + "; allowed: a secret of at least 16 characters"));
    }

    @Test
    void withRedisTheDrainMustOutlastTheAuthorizerAndTheRedisCalls() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(Map.of(
                "idempotency.store", "redis", "idempotency.redis.uri", "redis://127.0.0.1:6379",
                "database.url", DATABASE,
                "idempotency.fingerprint-secret", "a-real-secret-value", "authorizer.timeout", "PT8.5S")));
        assertThat(e.getMessage(), is("shutdown.drain-timeout: 'PT10S' is not allowed with idempotency.store redis; "
                                      + "allowed: a duration > authorizer.timeout + the Redis calls of one request "
                                      + "(PT1.5S) = PT10S, so no request outlives the drain"));
    }

    @Test
    void replicatedWritesCountTheirWaitForReplicasAgainstTheDrain() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(Map.of(
                "idempotency.store", "redis", "idempotency.redis.uri", "redis://127.0.0.1:6379",
                "database.url", DATABASE,
                "idempotency.fingerprint-secret", "a-real-secret-value", "idempotency.redis.min-replicas-ack", "1")));
        assertThat(e.getMessage(), is("shutdown.drain-timeout: 'PT10S' is not allowed with idempotency.store redis; "
                                      + "allowed: a duration > authorizer.timeout + the Redis calls of one request "
                                      + "(PT5.7S) = PT10.7S, so no request outlives the drain"));
    }

    @Test
    void withPostgresTheDrainAndTheLeaseCountTheDatabasesWorstCase() {
        Map<String, String> postgres = new java.util.HashMap<>(Map.of("idempotency.store", "postgres", "database.url",
                "jdbc:postgresql://127.0.0.1:5432/payments", "authorizer.timeout", "PT7S",
                "idempotency.in-flight-lease", "PT20S"));
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(postgres));
        // Per call: pool wait 0.5 s + statement 1 s + socket margin 0.25 s; a claim and a recording per request.
        assertThat(e.getMessage(), is("shutdown.drain-timeout: 'PT10S' is not allowed with idempotency.store postgres; "
                                      + "allowed: a duration > authorizer.timeout + the PostgreSQL calls of one "
                                      + "request (PT3.5S) = PT10.5S, so no request outlives the drain"));
        postgres.putAll(Map.of("authorizer.timeout", "PT5S", "idempotency.in-flight-lease", "PT8S",
                               "database.statement-timeout", "PT2S", "shutdown.drain-timeout", "PT15S",
                               "shutdown.hard-deadline", "PT40S"));
        e = assertThrows(ConfigurationException.class, () -> settings(postgres));
        assertThat(e.getMessage(), startsWith("idempotency.in-flight-lease: 'PT8S' is not allowed; allowed: a duration "
                                              + "> authorizer.timeout (PT5S) + the idempotency store's worst case "
                                              + "(PT5.5S) = PT10.5S"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "database.url|postgresql://db/payments|database.url: not a jdbc:postgresql:// URL",
            "database.url|jdbc:postgresql://db:70000/payments|database.url: port 70000 is out of range",
            "database.url|jdbc:postgresql://db:5432/|database.url: no database name after the host",
            "database.pool-size|0|database.pool-size: '0' is out of range; allowed: an integer from 1 to 500",
            "database.statement-timeout|PT0S|database.statement-timeout: 'PT0S' is not allowed",
            "database.lock-timeout|PT2S|database.lock-timeout: 'PT2S' is not allowed; allowed: a duration > PT0S and "
            + "<= database.statement-timeout (PT1S)",
            "database.connection-timeout|PT0.1S|database.connection-timeout: 'PT0.1S' is not allowed; allowed: a "
            + "duration >= PT0.25S"})
    void databaseMistakesFailAtStartupNamingTheKey(String key, String value, String message) {
        Map<String, String> postgres = new java.util.HashMap<>(Map.of("idempotency.store", "postgres", "database.url",
                "jdbc:postgresql://127.0.0.1:5432/payments"));
        postgres.put(key, value);
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(postgres));
        assertThat(e.getMessage(), startsWith(message));
    }

    @Test
    void postgresNeedsADatabaseUrl() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                                                () -> settings(Map.of("idempotency.store", "postgres")));
        assertThat(e.getMessage(), startsWith("database.url: missing; allowed: jdbc:postgresql://"));
    }

    @Test
    void theBuiltInIssuerRemembersAnApprovalAtLeastAsLongAsItCanBeCaptured() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(Map.of(
                "authorization.validity", "P7D", "authorizer.ledger-retention", "PT24H")));
        assertThat(e.getMessage(), is("authorizer.ledger-retention: 'PT24H' is not allowed with authorization.validity "
                                      + "PT168H; allowed: a duration >= authorization.validity, so that the simulated "
                                      + "issuer still knows an authorization when it is captured, voided or expired"));
        assertThat(settings(Map.of("authorization.validity", "PT1H", "authorizer.ledger-retention", "PT1H"))
                           .authorizer().ruleBased().ledgerRetention(), is(Duration.ofHours(1)));
        assertThat("the http authorizer's issuer keeps its own ledger", settings(Map.of("authorizer.type", "http",
                "authorizer.http.uri", "http://127.0.0.1:8090", "authorizer.ledger-retention", "PT24H",
                "idempotency.fingerprint-secret", "a-real-secret-value")).authorizer().type(),
                   is(AuthorizerSettings.Type.HTTP));
    }

    @Test
    void theLeaseMustOutlastTheAuthorizerAndTheRedisCallsOfOneRequest() {
        Map<String, String> redis = Map.of("idempotency.store", "redis", "idempotency.redis.uri",
                "redis://127.0.0.1:6379",
                "database.url", DATABASE, "idempotency.fingerprint-secret", "a-real-secret-value",
                "authorizer.timeout", "PT1S", "idempotency.in-flight-lease", "PT2.5S");
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(redis));
        assertThat(e.getMessage(), is("idempotency.in-flight-lease: 'PT2.5S' is not allowed; allowed: a duration > "
                                      + "authorizer.timeout (PT1S) + the idempotency store's worst case (PT1.5S) = "
                                      + "PT2.5S, so that the lease outlasts the issuer call and the recording of its "
                                      + "decision even when no renewal gets through"));
        Map<String, String> valid = new java.util.HashMap<>(redis);
        valid.put("idempotency.in-flight-lease", "PT2.6S");
        assertThat(settings(valid).idempotency().inFlightLease().toMillis(), is(2600L));
    }

    @Test
    void withMinReplicasAckTheLeaseMustAlsoCoverTheWaitForReplicas() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(Map.of(
                "idempotency.store", "redis", "idempotency.redis.uri", "redis://127.0.0.1:6379",
                "database.url", DATABASE,
                "idempotency.fingerprint-secret", "a-real-secret-value", "idempotency.redis.min-replicas-ack", "1",
                "shutdown.drain-timeout", "PT12S", "shutdown.hard-deadline", "PT20S")));
        assertThat(e.getMessage().startsWith("idempotency.in-flight-lease: 'PT10S' is not allowed; allowed: a "
                                             + "duration > authorizer.timeout (PT5S) + the idempotency store's worst "
                                             + "case (PT5.7S) = PT10.7S"), is(true));
    }

    @Test
    void thePreviousSecretMustDifferFromTheCurrentOne() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(Map.of(
                "idempotency.fingerprint-secret", "local-development-only-fingerprint-secret",
                "idempotency.fingerprint-secret-previous", "local-development-only-fingerprint-secret")));
        assertThat(e.getMessage().startsWith("idempotency.fingerprint-secret-previous: not allowed (41 characters, "
                                             + "equal to idempotency.fingerprint-secret)"), is(true));
    }

    @Test
    void theRedisStoreNeedsAUri() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                                                () -> settings(Map.of("idempotency.store", "redis",
                                                        "idempotency.fingerprint-secret", "a-real-secret-value")));
        assertThat(e.getMessage().startsWith("idempotency.redis.uri: missing; allowed: redis://"), is(true));
    }

    @Test
    void oneMerchantMayHoldAtMostHalfOfTheInMemoryStore() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(Map.of(
                "idempotency.max-keys", "100000", "idempotency.merchant-quota.max-records", "150000")));
        assertThat(e.getMessage(), is("idempotency.merchant-quota.max-records: '150000' is not allowed with "
                                      + "idempotency.store in-memory and idempotency.max-keys 100000; allowed: an "
                                      + "integer from 1 to idempotency.max-keys / 2 = 50000 (raise "
                                      + "idempotency.max-keys to at least twice max-records), so that one merchant "
                                      + "cannot fill the store and leave every other merchant 503"));
        assertThat(settings(Map.of("idempotency.max-keys", "100000", "idempotency.merchant-quota.max-records",
                                   "50000")).idempotency().merchantQuota().maxRecords(), is(50000));
        assertThat("max-keys bounds the in-memory store only", settings(Map.of(
                "idempotency.store", "redis", "idempotency.redis.uri", "redis://127.0.0.1:6379",
                "database.url", DATABASE,
                "idempotency.fingerprint-secret", "a-real-secret-value",
                "idempotency.merchant-quota.max-records", "500000")).idempotency().merchantQuota().maxRecords(),
                   is(500000));
    }
}
