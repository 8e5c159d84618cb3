package com.example.payments;

import java.time.Duration;
import java.util.Locale;

import com.example.payments.authentication.AuthSettings;
import com.example.payments.authorization.AuthorizationSettings;
import com.example.payments.authorization.AuthorizerSettings;
import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;
import com.example.payments.health.HealthSettings;
import com.example.payments.http.HttpSettings;
import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.lifecycle.ShutdownSettings;
import com.example.payments.observability.AccessLogSettings;
import com.example.payments.observability.TracingSettings;

import io.helidon.config.Config;

/**
 * Every setting of the service, validated together at startup, including the rules that span two keys.
 *
 * @param businessPort {@code server.port}, default 8080 (0 picks a free port)
 * @param healthPort   {@code health-server.port}, default 8081 (0 picks a free port)
 * @param health       {@code health.*}
 * @param shutdown     {@code shutdown.*}
 * @param idempotency  {@code idempotency.*}
 * @param backends     {@code idempotency.redis.*} and {@code database.*}, as {@code idempotency.store} needs them
 * @param authorizer   {@code authorizer.*}
 * @param http         {@code http.*} and the connection limits of {@code server} and {@code health-server}
 * @param logFormat    {@code logging.format}: {@code text} (default) or {@code json}
 * @param environment  {@code app.environment}: {@code dev} (default), {@code staging} or {@code prod}; staging and
 *                     prod refuse test-only settings ({@link EnvironmentRules})
 * @param auth         {@code auth.*}: the API keys
 * @param accessLog    {@code access-log.*}: the business listener's access log
 * @param tracing      {@code tracing.*}: OpenTelemetry tracing, off by default
 * @param warmUp       {@code warm-up.*}: the synthetic requests sent before startup completes
 * @param lifecycle    {@code authorization.*}: validity and the in-memory resource store's bound
 */
record AppSettings(int businessPort, int healthPort, HealthSettings health, ShutdownSettings shutdown,
                   IdempotencySettings idempotency, BackendSettings backends, AuthorizerSettings authorizer, HttpSettings http,
                   LogFormat logFormat, Environment environment, AuthSettings auth,
                   AccessLogSettings accessLog, TracingSettings tracing, WarmUpSettings warmUp,
                   AuthorizationSettings lifecycle) {

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
     * Only the embedded defaults (dev, in-memory store, rule-based authorizer: a laptop running
     * {@code java -jar target/payments-authorization.jar}) run without {@code idempotency.fingerprint-secret}, on a
     * random secret of the process: there the store and the simulated issuer die with the process, so nothing needs a
     * request's identity after a restart. Everything else needs the same attempt id for a request on every replica and
     * after every restart (the issuer deduplicates on it): staging and prod take the secret from their Secret, a dev
     * setup from {@code config/dev/config.yaml}.
     */
    private static void checkFingerprintSecret(AppSettings settings) {
        if (!settings.idempotency().generatedSecret()) {
            return;
        }
        boolean embeddedDefaults = settings.environment() == Environment.DEV
                                   && settings.idempotency().store() == IdempotencySettings.Store.IN_MEMORY
                                   && settings.authorizer().type() == AuthorizerSettings.Type.RULE_BASED;
        if (!embeddedDefaults) {
            throw new ConfigurationException("idempotency.fingerprint-secret", "missing with app.environment "
                    + settings.environment().name().toLowerCase(Locale.ROOT) + ", idempotency.store "
                    + configName(settings.idempotency().store()) + " and authorizer.type "
                    + configName(settings.authorizer().type()) + "; allowed: a secret of at least "
                    + IdempotencySettings.MIN_SECRET_LENGTH + " characters, the same on every replica (the Secret "
                    + "payments-authorization-secrets as IDEMPOTENCY_FINGERPRINT_SECRET; config/dev/config.yaml for "
                    + "dev). Only dev with the in-memory store and the rule-based authorizer runs without one");
        }
    }

    /**
     * One merchant must not be able to fill a bounded store alone: with the in-memory store, whose
     * {@code idempotency.max-keys} is a hard cap (full: 503 for every merchant, readiness 503), one merchant's
     * {@code idempotency.merchant-quota.max-records} may take at most half of it. Redis and PostgreSQL have no cap of
     * this service's to share ({@code max-keys} bounds the in-memory store only).
     *
     * <p>Pairs looked at and left unchecked, because a per-merchant quota cannot protect them: the listener's
     * connection and concurrency caps ({@code server.max-tcp-connections}, {@code server.max-concurrent-requests})
     * are taken before a request is authenticated, and by every kind of request (reads, bodies still arriving);
     * {@code database.pool-size}: a connection is held per statement, a few ms, never across the issuer call, and a
     * wait for one is bounded by {@code database.connection-timeout}.
     */
    private static void checkMerchantShare(IdempotencySettings idempotency) {
        if (idempotency.store() != IdempotencySettings.Store.IN_MEMORY) {
            return;
        }
        int maxRecords = idempotency.merchantQuota().maxRecords();
        int half = idempotency.maxKeys() / 2;
        if (maxRecords > half) {
            throw new ConfigurationException("idempotency.merchant-quota.max-records", "'" + maxRecords + "' is not "
                    + "allowed with idempotency.store in-memory and idempotency.max-keys " + idempotency.maxKeys()
                    + "; allowed: an integer from 1 to idempotency.max-keys / 2 = " + half + " (raise "
                    + "idempotency.max-keys to at least twice max-records), so that one merchant cannot fill the store "
                    + "and leave every other merchant 503");
        }
    }

    private static String configName(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
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
        HealthSettings health = HealthSettings.create(values);
        ShutdownSettings shutdown = ShutdownSettings.create(values);
        IdempotencySettings idempotency = IdempotencySettings.create(values);
        AppSettings settings = new AppSettings(businessPort, healthPort, health, shutdown, idempotency,
                BackendSettings.create(values, idempotency.store()),
                AuthorizerSettings.create(values),
                HttpSettings.create(values),
                values.oneOf("logging.format", LogFormat.class, LogFormat.TEXT),
                values.oneOf("app.environment", Environment.class, Environment.DEV),
                AuthSettings.create(values),
                AccessLogSettings.create(values),
                TracingSettings.create(values, ConfigValues.configName(
                        values.oneOf("app.environment", Environment.class, Environment.DEV))),
                WarmUpSettings.create(values),
                AuthorizationSettings.create(values));
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
        Duration store = settings.backends().bounds().total();
        IdempotencySettings.Store backend = settings.idempotency().store();
        if (backend != IdempotencySettings.Store.IN_MEMORY) {
            Duration longest = timeout.plus(store);
            if (longest.compareTo(drain) >= 0) {
                String name = ConfigValues.configName(backend);
                String server = backend == IdempotencySettings.Store.REDIS ? "Redis" : "PostgreSQL";
                throw new ConfigurationException("shutdown.drain-timeout", "'" + drain + "' is not allowed with "
                        + "idempotency.store " + name + "; allowed: a duration > authorizer.timeout + the " + server
                        + " calls of one request (" + store + ") = " + longest + ", so no request outlives the drain");
            }
        }
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
        // The simulated issuer must still know an authorization when it is captured, voided or expired.
        Duration ledger = settings.authorizer().ruleBased().ledgerRetention();
        Duration validity = settings.lifecycle().validity();
        if (settings.authorizer().type() == AuthorizerSettings.Type.RULE_BASED && ledger.compareTo(validity) < 0) {
            throw new ConfigurationException("authorizer.ledger-retention", "'" + ledger + "' is not allowed with "
                    + "authorization.validity " + validity + "; allowed: a duration >= authorization.validity, so "
                    + "that the simulated issuer still knows an authorization when it is captured, voided or expired");
        }
        checkMerchantShare(settings.idempotency());
        checkFingerprintSecret(settings);
        EnvironmentRules.check(settings);
        return settings;
    }
}
