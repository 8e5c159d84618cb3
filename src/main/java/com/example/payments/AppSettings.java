package com.example.payments;

import java.time.Duration;

import com.example.payments.authorization.AuthorizerSettings;
import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;
import com.example.payments.health.HealthSettings;
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
 * @param logFormat    {@code logging.format}: {@code text} (default) or {@code json}
 */
record AppSettings(int businessPort, int healthPort, HealthSettings health, ShutdownSettings shutdown,
                   IdempotencySettings idempotency, AuthorizerSettings authorizer, LogFormat logFormat) {

    /**
     * The longest the Redis calls of one authorization can take: claim, authorization save and completion, each
     * bounded by {@code idempotency.redis.command-timeout}. With {@code min-replicas-ack} above 0, claim and completion
     * are replicated writes, each bounded by waiting for a pooled connection (command timeout), opening it if needed
     * (connect timeout), the script (command timeout) and {@code WAIT} (command timeout + 100 ms).
     *
     * @param redis the Redis settings
     * @return the worst case
     */
    static Duration redisWorstCase(IdempotencySettings.RedisSettings redis) {
        Duration command = redis.commandTimeout();
        if (redis.minReplicasAck() == 0) {
            return command.multipliedBy(3);
        }
        Duration replicated = command.multipliedBy(3).plus(redis.connectTimeout()).plusMillis(100);
        return replicated.multipliedBy(2).plus(command);
    }

    /** {@code logging.format}. */
    enum LogFormat { TEXT, JSON }

    /**
     * Reads and validates everything.
     *
     * @param config the whole configuration
     * @return settings
     * @throws ConfigurationException naming the first key that is wrong and its allowed range
     */
    static AppSettings create(Config config) {
        ListenerConfigs.check(config);
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
                values.oneOf("logging.format", LogFormat.class, LogFormat.TEXT));
        Duration timeout = settings.authorizer().timeout();
        Duration drain = settings.shutdown().drainTimeout();
        if (timeout.compareTo(drain) >= 0) {
            throw new ConfigurationException("authorizer.timeout", "'" + timeout + "' is not allowed; allowed: a "
                    + "duration > PT0S and < shutdown.drain-timeout (" + drain + "), so no request outlives the drain");
        }
        settings.idempotency().redis().ifPresent(redis -> {
            Duration longest = timeout.plus(redisWorstCase(redis));
            if (longest.compareTo(drain) >= 0) {
                throw new ConfigurationException("shutdown.drain-timeout", "'" + drain + "' is not allowed with "
                        + "idempotency.store redis; allowed: a duration > authorizer.timeout + the Redis calls of one "
                        + "request (" + redisWorstCase(redis) + ") = " + longest + ", so no request outlives the drain");
            }
        });
        return settings;
    }
}
