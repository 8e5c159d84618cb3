package com.example.payments;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.example.payments.authorization.AuthorizationStore;
import com.example.payments.authorization.InMemoryAuthorizationStore;
import com.example.payments.authorization.RedisAuthorizationStore;
import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.InMemoryIdempotencyStore;
import com.example.payments.idempotency.RedisConnection;
import com.example.payments.idempotency.RedisIdempotencyStore;
import com.example.payments.idempotency.RedisReadinessCheck;

import io.helidon.health.HealthCheck;

/**
 * The stores of the configured backend ({@code idempotency.store}) and what comes with them: the readiness
 * dependencies they add, the retention sweep (in-memory only: Redis expires records itself, so no sweeper runs and
 * liveness watches no sweeper heartbeat), and the resources the shutdown sequence closes.
 *
 * @param idempotency     idempotency records
 * @param authorizations  authorizations for GET
 * @param readinessChecks required dependencies ({@code idempotency-store} with redis; none in memory)
 * @param sweep           drops expired records, run by the {@code idempotency-sweeper} worker; empty with redis
 * @param resources       closed in the shutdown cleanup phase, by name
 */
record Backends(IdempotencyStore idempotency, AuthorizationStore authorizations, List<HealthCheck> readinessChecks,
                Optional<Runnable> sweep, Map<String, AutoCloseable> resources) {

    /**
     * Builds the stores; with redis, also connects (an unreachable Redis is logged, not fatal).
     *
     * @param settings     {@code idempotency.*}
     * @param checkTimeout {@code health.readiness.check-timeout}, bounds the Redis {@code PING}
     * @return the backends
     */
    static Backends create(IdempotencySettings settings, Duration checkTimeout) {
        return settings.redis()
                .map(redis -> redis(settings, redis, checkTimeout))
                .orElseGet(() -> inMemory(settings));
    }

    private static Backends inMemory(IdempotencySettings settings) {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(settings.maxKeys());
        InMemoryAuthorizationStore authorizations = InMemoryAuthorizationStore.create(settings.retention());
        Map<String, AutoCloseable> resources = new LinkedHashMap<>();
        resources.put("idempotency-store", store);
        resources.put("authorization-store", authorizations);
        Runnable sweep = () -> {
            store.sweep();
            authorizations.sweep();
        };
        return new Backends(store, authorizations, List.of(), Optional.of(sweep), resources);
    }

    private static Backends redis(IdempotencySettings settings, IdempotencySettings.RedisSettings redis,
                                  Duration checkTimeout) {
        RedisConnection connection = RedisConnection.create(redis);
        return new Backends(RedisIdempotencyStore.create(connection),
                            RedisAuthorizationStore.create(connection, settings.retention()),
                            List.of(RedisReadinessCheck.create(connection, checkTimeout)),
                            Optional.empty(),
                            Map.of("redis-client", connection));
    }
}
