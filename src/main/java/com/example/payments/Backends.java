package com.example.payments;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import com.example.payments.authorization.Authorization;
import com.example.payments.authorization.AuthorizationService;
import com.example.payments.database.AuthorizationRow;
import com.example.payments.database.Database;
import com.example.payments.database.DatabaseReadinessCheck;
import com.example.payments.database.DatabaseSettings;
import com.example.payments.database.PostgresIdempotencyStore;

import com.example.payments.health.CapacityCheck;
import com.example.payments.http.Json;
import com.example.payments.idempotency.Decision;
import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.InMemoryIdempotencyStore;
import com.example.payments.redis.RedisConnection;
import com.example.payments.redis.RedisIdempotencyStore;
import com.example.payments.redis.RedisReadinessCheck;

import io.helidon.health.HealthCheck;
import io.helidon.metrics.api.MeterRegistry;

/**
 * The store of the configured backend ({@code idempotency.store}: idempotency keys and the recorded decisions, which
 * are also the authorizations {@code GET} reads) and what comes with it: the readiness dependencies it adds, the
 * retention sweep (in-memory only: Redis expires records itself, so no sweeper runs and liveness watches no sweeper
 * heartbeat), and the resources the shutdown sequence closes. With postgres the decisions of {@code authorize} are
 * also written to the {@code authorizations} table, in the same transaction.
 *
 * @param idempotency     keys and decisions
 * @param readinessChecks required dependencies ({@code idempotency-store} with redis, {@code database} with postgres;
 *                        none in memory)
 * @param capacity        what readiness reports when full without feeding the circuit breaker: the in-memory store at
 *                        {@code idempotency.max-keys}; none with redis (Redis refuses writes when full: 503 per request)
 * @param sweep           drops expired records, run by the {@code idempotency-sweeper} worker (in memory; with
 *                        postgres in batches of 500 rows); empty with redis
 * @param resources       closed in the shutdown cleanup phase, by name
 */
record Backends(IdempotencyStore idempotency, List<HealthCheck> readinessChecks, List<CapacityCheck> capacity,
                Optional<Runnable> sweep, Map<String, AutoCloseable> resources) {

    // A sweeper run deletes at most 20 statements x 500 rows of each table: each statement short, the heartbeat
    // touched within seconds even with a backlog (the next run goes on).
    private static final int SWEEP_BATCH = 500;
    private static final int SWEEP_MAX_BATCHES = 20;

    /**
     * Builds the store; with redis, also connects (an unreachable Redis is logged, not fatal); with postgres, opens
     * the pool and migrates the schema ({@link Database#open}: an unreachable database is logged and retried, the
     * service starts unready).
     *
     * @param settings     {@code idempotency.*}
     * @param checkTimeout {@code health.readiness.check-timeout}, bounds the Redis {@code PING} and the database check
     * @param meters       the service's registry (the database pool's and statements' metrics)
     * @return the backends
     * @throws com.example.payments.config.ConfigurationException when the database refuses the credentials or
     *                                                            does not exist (exit 2)
     */
    static Backends create(IdempotencySettings settings, Duration checkTimeout, MeterRegistry meters) {
        if (settings.database().isPresent()) {
            return postgres(settings.database().get(), checkTimeout, meters);
        }
        return settings.redis()
                .map(redis -> redis(redis, checkTimeout))
                .orElseGet(() -> inMemory(settings));
    }

    private static Backends postgres(DatabaseSettings settings, Duration checkTimeout, MeterRegistry meters) {
        Database database = Database.open(settings, meters);
        PostgresIdempotencyStore store = PostgresIdempotencyStore.create(database, Backends::authorizationRow);
        Runnable sweep = () -> store.sweepQuietly(SWEEP_BATCH, SWEEP_MAX_BATCHES);
        return new Backends(store, List.of(DatabaseReadinessCheck.create(database, checkTimeout)), List.of(),
                            Optional.of(sweep), Map.of("database-pool", database));
    }

    // The authorizations row of a recorded authorization, from the body the service itself serialized.
    static Optional<AuthorizationRow> authorizationRow(Decision decision) {
        if (!decision.key().kind().equals(AuthorizationService.OPERATION.kind())) {
            return Optional.empty();
        }
        Authorization a;
        try {
            a = Json.mapper().readValue(decision.body(), Authorization.class);
        } catch (IOException e) {
            throw new IllegalStateException("A recorded authorization that is not an Authorization", e);
        }
        return Optional.of(new AuthorizationRow(UUID.fromString(a.id()), a.merchantId(), a.reference(),
                                                a.amount().value(), a.amount().currency(), a.card().brand(),
                                                a.card().last4(), a.status(), a.declineCode(),
                                                Instant.parse(a.createdAt())));
    }

    private static Backends inMemory(IdempotencySettings settings) {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(settings.maxKeys());
        Runnable sweep = store::sweep;
        CapacityCheck full = () -> store.full().map(why -> "idempotency-store: " + why);
        return new Backends(store, List.of(), List.of(full), Optional.of(sweep), Map.of("idempotency-store", store));
    }

    private static Backends redis(IdempotencySettings.RedisSettings redis, Duration checkTimeout) {
        RedisConnection connection = RedisConnection.create(redis);
        return new Backends(RedisIdempotencyStore.create(connection),
                            List.of(RedisReadinessCheck.create(connection, checkTimeout)),
                            List.of(),
                            Optional.empty(),
                            Map.of("redis-client", connection));
    }
}
