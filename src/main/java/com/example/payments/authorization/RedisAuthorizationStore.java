package com.example.payments.authorization;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;

import com.example.payments.http.Json;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.RedisConnection;

import io.lettuce.core.SetArgs;

/**
 * {@link AuthorizationStore} in Redis, so that {@code GET /v1/authorizations/{id}} answers on every replica. Each
 * authorization is one string under {@code <key-prefix>authorization:<id>}: the JSON body of the 201 (brand and last
 * four digits, never the PAN or CVC), kept for {@code idempotency.retention} (Redis TTL, default PT24H).
 *
 * <p>Redis is a cache-grade store for these records: an eviction (any {@code maxmemory-policy} but
 * {@code noeviction}) or a failover before replication loses them, and GET then answers 404 for an id the client was
 * given. A system of record belongs in a database behind this same interface.
 */
public final class RedisAuthorizationStore implements AuthorizationStore {

    private final RedisConnection redis;
    private final String prefix;
    private final Duration retention;

    private RedisAuthorizationStore(RedisConnection redis, Duration retention) {
        this.redis = redis;
        this.prefix = redis.keyPrefix() + "authorization:";
        this.retention = retention;
    }

    /**
     * Creates the store.
     *
     * @param redis     the shared client (closed by its owner, not by this store)
     * @param retention how long a record is kept ({@code idempotency.retention})
     * @return the store
     */
    public static RedisAuthorizationStore create(RedisConnection redis, Duration retention) {
        return new RedisAuthorizationStore(redis, retention);
    }

    @Override
    public void save(Authorization authorization) {
        byte[] json = Json.bytes(authorization);
        SetArgs expiry = SetArgs.Builder.px(Math.max(1, retention.toMillis()));
        try {
            redis.call("save authorization", commands -> commands.set(prefix + authorization.id(), json, expiry));
        } catch (IdempotencyStore.UnavailableException e) {
            throw new StoreUnavailableException(e.getMessage(), e);
        }
    }

    @Override
    public Optional<Authorization> find(String id) {
        byte[] json;
        try {
            json = redis.call("read authorization", commands -> commands.get(prefix + id));
        } catch (IdempotencyStore.UnavailableException e) {
            throw new StoreUnavailableException(e.getMessage(), e);
        }
        if (json == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Json.mapper().readValue(json, Authorization.class));
        } catch (IOException e) {
            throw new IllegalStateException("Unreadable authorization record " + prefix + id, e);
        }
    }
}
