package com.example.payments;

import java.time.Duration;

import com.example.payments.authentication.AuthSettings;
import com.example.payments.authorization.AuthorizerSettings;
import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;
import com.example.payments.health.HealthSettings;
import com.example.payments.http.HttpSettings;
import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.lifecycle.ShutdownSettings;

import io.helidon.config.Config;

/**
 * Every setting of the service, validated together at startup, including the rules that span two keys.
 *
 * @param businessPort {@code server.port}, default 8080 (0 picks a free port)
 * @param healthPort   {@code health-server.port}, default 8081 (0 picks a free port)
 * @param health       {@code health.*}
 * @param shutdown     {@code shutdown.*}
 * @param idempotency  {@code idempotency.*}
 * @param authorizer   {@code authorizer.*}
 * @param http         {@code http.*} and the connection limits of {@code server} and {@code health-server}
 * @param logFormat    {@code logging.format}: {@code text} (default) or {@code json}
 * @param environment  {@code app.environment}: {@code dev} (default), {@code staging} or {@code prod}; staging and
 *                     prod refuse test-only settings ({@link EnvironmentRules})
 * @param auth         {@code auth.*}: the API keys
 * @param warmUp       {@code warm-up.*}: the synthetic requests sent before startup completes
 */
record AppSettings(int businessPort, int healthPort, HealthSettings health, ShutdownSettings shutdown,
                   IdempotencySettings idempotency, AuthorizerSettings authorizer, HttpSettings http,
                   LogFormat logFormat, Environment environment, AuthSettings auth, WarmUpSettings warmUp) {

    /** {@code logging.format}. */
    enum LogFormat { TEXT, JSON }

    /** {@code app.environment}: set by each environment's {@code config/<env>/config.yaml}. */
    enum Environment {
        /** A laptop, the dev cluster, the tests: test authorizer, development keys and secrets allowed. */
        DEV,
        /** Rehearses prod, with prod's rules. */
        STAGING,
        /** Real payments. */
        PROD
    }

    /**
     * Reads and validates everything.
     *
     * @param config the whole configuration
     * @return settings
     * @throws ConfigurationException naming the first key that is wrong and its allowed range
     */
    static AppSettings create(Config config) {
        ConfigValues values = ConfigValues.create(config);
        int businessPort = (int) values.longInRange("server.port", 8080, 0, 65535);
        int healthPort = (int) values.longInRange("health-server.port", 8081, 0, 65535);
        if (businessPort != 0 && businessPort == healthPort) {
            throw new ConfigurationException("health-server.port", "'" + healthPort + "' equals server.port; allowed: "
                    + "a port from 0 to 65535 other than server.port (probes need their own listener)");
        }
        AppSettings settings = new AppSettings(businessPort, healthPort,
                HealthSettings.create(values),
                ShutdownSettings.create(values),
                IdempotencySettings.create(values),
                AuthorizerSettings.create(values),
                HttpSettings.create(values),
                values.oneOf("logging.format", LogFormat.class, LogFormat.TEXT),
                values.oneOf("app.environment", Environment.class, Environment.DEV),
                AuthSettings.create(values),
                WarmUpSettings.create(values));
        // After the listener keys this service reads itself (port, connection caps, idle timeouts), so that their
        // mistakes are reported with their own allowed ranges rather than Helidon's.
        ListenerConfigs.check(config);
        Duration idle = settings.http().business().longestIdle();
        if (settings.health().progressWindow().compareTo(idle) <= 0) {
            throw new ConfigurationException("health.liveness.progress-window", "'"
                    + settings.health().progressWindow() + "' is not allowed; allowed: a duration > "
                    + "server.idle-connection-timeout + server.idle-connection-period = " + idle + ", so that idle "
                    + "connections holding every connection slot until Helidon closes them cannot fail liveness");
        }
        Duration timeout = settings.authorizer().timeout();
        Duration drain = settings.shutdown().drainTimeout();
        if (timeout.compareTo(drain) >= 0) {
            throw new ConfigurationException("authorizer.timeout", "'" + timeout + "' is not allowed; allowed: a "
                    + "duration > PT0S and < shutdown.drain-timeout (" + drain + "), so no request outlives the drain");
        }
        Duration store = settings.idempotency().bounds().total();
        settings.idempotency().redis().ifPresent(redis -> {
            Duration longest = timeout.plus(store);
            if (longest.compareTo(drain) >= 0) {
                throw new ConfigurationException("shutdown.drain-timeout", "'" + drain + "' is not allowed with "
                        + "idempotency.store redis; allowed: a duration > authorizer.timeout + the Redis calls of one "
                        + "request (" + store + ") = " + longest + ", so no request outlives the drain");
            }
        });
        // The lease floor: a lease that lapses during the issuer call, with no renewal getting through, would let
        // another replica claim the key and call the issuer a second time.
        Duration lease = settings.idempotency().inFlightLease();
        Duration floor = timeout.plus(store);
        if (lease.compareTo(floor) <= 0) {
            throw new ConfigurationException("idempotency.in-flight-lease", "'" + lease + "' is not allowed; "
                    + "allowed: a duration > authorizer.timeout (" + timeout + ") + the idempotency store's worst case "
                    + "(" + store + ") = " + floor + ", so that the lease outlasts the issuer call and the recording "
                    + "of its decision even when no renewal gets through");
        }
        EnvironmentRules.check(settings);
        return settings;
    }
}
