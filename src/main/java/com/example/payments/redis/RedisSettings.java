package com.example.payments.redis;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;
import com.example.payments.idempotency.StableNames;

import io.lettuce.core.RedisURI;

/**
 * Validated {@code idempotency.redis.*} configuration: the Redis adapter's own settings, read by {@link #create}.
 *
 * @param uri            {@code idempotency.redis.uri}: {@code redis://} or {@code rediss://} (TLS), optionally
 *                       with ACL user and password ({@code rediss://user:password@host:6380/0})
 * @param keyPrefix      {@code idempotency.redis.key-prefix}, default {@value StableNames#DEFAULT_KEY_PREFIX}
 * @param connectTimeout {@code idempotency.redis.connect-timeout}, default PT1S
 * @param commandTimeout {@code idempotency.redis.command-timeout}, default PT0.5S
 * @param minReplicasAck {@code idempotency.redis.min-replicas-ack}, default 0: replicas that must confirm a claim
 *                       or completion (Redis {@code WAIT}) within the command timeout, else 503
 */
public record RedisSettings(URI uri, String keyPrefix, Duration connectTimeout, Duration commandTimeout,
                            int minReplicasAck) {

    /**
     * Reads and validates {@code idempotency.redis.*}, whatever the store (so that a mistake there fails at startup,
     * not when the store is switched); with another store the caller drops the result.
     *
     * @param values   config reader
     * @param required whether {@code idempotency.redis.uri} must be set ({@code idempotency.store} is {@code redis});
     *                 when not required and unset, the uri is {@code null}
     * @return settings
     * @throws ConfigurationException naming the key when a value is missing, unparsable or out of range
     */
    public static RedisSettings create(ConfigValues values, boolean required) {
        return new RedisSettings(redisUri(values, required),
                values.string("idempotency.redis.key-prefix", "a key prefix such as payments-authorization:")
                        .orElse(StableNames.DEFAULT_KEY_PREFIX),
                values.positiveDuration("idempotency.redis.connect-timeout", Duration.ofSeconds(1)),
                values.positiveDuration("idempotency.redis.command-timeout", Duration.ofMillis(500)),
                (int) values.longInRange("idempotency.redis.min-replicas-ack", 0, 0, 16));
    }

    // The value is never echoed: it may carry a password. Lettuce parses it once more when connecting, so what it would
    // refuse (a database that is not a number, a port out of range) must be refused here, with the key named.
    private static URI redisUri(ConfigValues values, boolean required) {
        String key = "idempotency.redis.uri";
        String range = "redis://[user:password@]host[:port][/database] or rediss://... (TLS), database a number from "
                       + "0, port from 1 to 65535, no query";
        String allowed = "allowed: " + range;
        Optional<String> configured = values.string(key, range);
        if (configured.isEmpty() && !required) {
            return null;
        }
        String raw = configured.orElseThrow(() -> new ConfigurationException(key,
                "missing; " + allowed + ", when idempotency.store is redis"));
        URI uri;
        try {
            uri = new URI(raw.trim());
        } catch (URISyntaxException e) {
            throw new ConfigurationException(key, "not a URI; " + allowed);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw new ConfigurationException(key, "the scheme is not redis or rediss; " + allowed);
        }
        if (uri.getHost() == null || uri.getHost().isBlank()) {
            throw new ConfigurationException(key, "no host (or a host name Java cannot parse); " + allowed);
        }
        if (uri.getPort() == 0 || uri.getPort() > 65535) {
            throw new ConfigurationException(key, "port " + uri.getPort() + " is out of range; " + allowed);
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        if (!path.isEmpty() && !path.equals("/") && !path.matches("/[0-9]{1,9}")) {
            throw new ConfigurationException(key, "the database after the host is not a number; " + allowed);
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new ConfigurationException(key, "a query or fragment is not accepted; " + allowed);
        }
        try {
            RedisURI.create(uri);
        } catch (RuntimeException e) {
            throw new ConfigurationException(key, "not a Redis URI the client accepts; " + allowed);
        }
        return uri;
    }

    @Override
    public String toString() {
        // The URI may carry a password.
        return "RedisSettings[" + uri.getScheme() + "://" + uri.getHost() + ":" + uri.getPort() + ", keyPrefix="
               + keyPrefix + ", connectTimeout=" + connectTimeout + ", commandTimeout=" + commandTimeout
               + ", minReplicasAck=" + minReplicasAck + "]";
    }
}
