package com.example.payments;

import java.util.Map;

import com.example.payments.config.ConfigurationException;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Configuration mistakes fail at startup with one line naming the key and the allowed range.
 */
class AppSettingsTest {

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
            "idempotency.store#memcached#idempotency.store: 'memcached' is not allowed; allowed: in-memory | redis",
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
            "shutdown.mode#abrupt#shutdown.mode: 'abrupt' is not allowed; allowed: graceful | naive",
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
                                            "redis://127.0.0.1:6379"));
        assertThat(redis.environment(), is(AppSettings.Environment.DEV));
    }

    @Test
    void withRedisTheDrainMustOutlastTheAuthorizerAndTheRedisCalls() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(Map.of(
                "idempotency.store", "redis", "idempotency.redis.uri", "redis://127.0.0.1:6379",
                "idempotency.fingerprint-secret", "a-real-secret-value", "authorizer.timeout", "PT8.5S")));
        assertThat(e.getMessage(), is("shutdown.drain-timeout: 'PT10S' is not allowed with idempotency.store redis; "
                                      + "allowed: a duration > authorizer.timeout + the Redis calls of one request "
                                      + "(PT1.5S) = PT10S, so no request outlives the drain"));
    }

    @Test
    void replicatedWritesCountTheirWaitForReplicasAgainstTheDrain() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(Map.of(
                "idempotency.store", "redis", "idempotency.redis.uri", "redis://127.0.0.1:6379",
                "idempotency.fingerprint-secret", "a-real-secret-value", "idempotency.redis.min-replicas-ack", "1")));
        assertThat(e.getMessage(), is("shutdown.drain-timeout: 'PT10S' is not allowed with idempotency.store redis; "
                                      + "allowed: a duration > authorizer.timeout + the Redis calls of one request "
                                      + "(PT5.7S) = PT10.7S, so no request outlives the drain"));
    }

    @Test
    void theLeaseMustOutlastTheAuthorizerAndTheRedisCallsOfOneRequest() {
        Map<String, String> redis = Map.of("idempotency.store", "redis", "idempotency.redis.uri",
                "redis://127.0.0.1:6379", "idempotency.fingerprint-secret", "a-real-secret-value",
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
                "idempotency.fingerprint-secret", "a-real-secret-value", "idempotency.redis.min-replicas-ack", "1",
                "shutdown.drain-timeout", "PT12S", "shutdown.hard-deadline", "PT20S")));
        assertThat(e.getMessage().startsWith("idempotency.in-flight-lease: 'PT10S' is not allowed; allowed: a "
                                             + "duration > authorizer.timeout (PT5S) + the idempotency store's worst "
                                             + "case (PT5.7S) = PT10.7S"), is(true));
    }

    @Test
    void thePreviousSecretMustDifferFromTheCurrentOne() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(Map.of(
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
}
