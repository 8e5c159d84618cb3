package com.example.payments;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.InMemoryIdempotencyStore;
import com.example.payments.idempotency.RedisConnection;
import com.example.payments.idempotency.RedisIdempotencyStore;
import com.example.payments.idempotency.RedisReadinessCheck;

import io.helidon.health.HealthCheck;

/**
 * The store of the configured backend ({@code idempotency.store}: idempotency keys and the recorded decisions, which
 * are also the authorizations {@code GET} reads) and what comes with it: the readiness dependencies it adds, the
 * retention sweep (in-memory only: Redis expires records itself, so no sweeper runs and liveness watches no sweeper
 * heartbeat), and the resources the shutdown sequence closes.
 *
 * @param idempotency     keys and decisions
 * @param readinessChecks required dependencies ({@code idempotency-store} with redis; none in memory)
 * @param sweep           drops expired records, run by the {@code idempotency-sweeper} worker; empty with redis
 * @param resources       closed in the shutdown cleanup phase, by name
 */
record Backends(IdempotencyStore idempotency, List<HealthCheck> readinessChecks, Optional<Runnable> sweep,
                Map<String, AutoCloseable> resources) {

    /**
     * Builds the store; with redis, also connects (an unreachable Redis is logged, not fatal).
     *
     * @param settings     {@code idempotency.*}
     * @param checkTimeout {@code health.readiness.check-timeout}, bounds the Redis {@code PING}
     * @return the backends
     */
    static Backends create(IdempotencySettings settings, Duration checkTimeout) {
        return settings.redis()
                .map(redis -> redis(redis, checkTimeout))
                .orElseGet(() -> inMemory(settings));
    }

    private static Backends inMemory(IdempotencySettings settings) {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(settings.maxKeys());
        Runnable sweep = store::sweep;
        return new Backends(store, List.of(), Optional.of(sweep), Map.of("idempotency-store", store));
    }

    private static Backends redis(IdempotencySettings.RedisSettings redis, Duration checkTimeout) {
        RedisConnection connection = RedisConnection.create(redis);
        return new Backends(RedisIdempotencyStore.create(connection),
                            List.of(RedisReadinessCheck.create(connection, checkTimeout)),
                            Optional.empty(),
                            Map.of("redis-client", connection));
    }
}
