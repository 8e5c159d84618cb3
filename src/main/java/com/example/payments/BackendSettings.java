package com.example.payments;

import java.time.Duration;
import java.util.Optional;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;
import com.example.payments.database.DatabaseSettings;
import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.idempotency.IdempotencySettings.StoreBounds;
import com.example.payments.redis.RedisSettings;

/**
 * The shared stores' own settings, each read by its adapter ({@link RedisSettings#create},
 * {@link DatabaseSettings#create}) for the store {@code idempotency.store} selects; kept in the top-level package,
 * beside {@code AppSettings}, so that the idempotency package never imports its adapters.
 *
 * @param redis    {@code idempotency.redis.*}, present when the store is {@code redis}
 * @param database {@code database.*}, present when the store is {@code postgres} or {@code redis} (required with
 *                 both: the resource store, the system of record, is PostgreSQL; with {@code redis} Redis is only the
 *                 idempotency registry in front of it)
 */
record BackendSettings(Optional<RedisSettings> redis, Optional<DatabaseSettings> database) {

    /**
     * Reads and validates the adapters' settings. {@code idempotency.redis.*} and {@code database.*} are read whatever
     * the store, so that a mistake there fails now, not when the store is switched.
     *
     * @param values config reader
     * @param store  {@code idempotency.store}
     * @return settings
     * @throws ConfigurationException naming the key when a value is missing, unparsable or out of range
     */
    static BackendSettings create(ConfigValues values, IdempotencySettings.Store store) {
        RedisSettings redis = RedisSettings.create(values, store == IdempotencySettings.Store.REDIS);
        boolean databaseRequired = store != IdempotencySettings.Store.IN_MEMORY;
        return new BackendSettings(store == IdempotencySettings.Store.REDIS ? Optional.of(redis) : Optional.empty(),
                                   DatabaseSettings.create(values, databaseRequired).filter(d -> databaseRequired));
    }

    /**
     * The idempotency store's worst case for one request. In memory: nothing remote, zero. Redis: each call is bounded
     * by {@code command-timeout}; with {@code min-replicas-ack} above 0 the claim and the recording are replicated
     * writes, each bounded by waiting for a pooled connection (command timeout), opening it (connect timeout), the
     * script (command timeout) and {@code WAIT} (command timeout + 100 ms). The recording may be followed by a fallback
     * write of the decision alone (command timeout). PostgreSQL: the claim and the recording are one call each, each
     * bounded by {@link DatabaseSettings#worstCall()} (pool wait + statement timeout + 250 ms).
     *
     * @return the bounds, in ms precision
     */
    StoreBounds bounds() {
        if (redis.isPresent()) {
            RedisSettings r = redis.get();
            Duration command = r.commandTimeout();
            Duration write = r.minReplicasAck() == 0 ? command
                    : command.multipliedBy(3).plus(r.connectTimeout()).plusMillis(100);
            return new StoreBounds(write, write.plus(command));
        }
        return database.map(d -> new StoreBounds(d.worstCall(), d.worstCall()))
                .orElse(new StoreBounds(Duration.ZERO, Duration.ZERO));
    }
}
