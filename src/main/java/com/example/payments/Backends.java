package com.example.payments;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.example.payments.authorization.AuthorizationSettings;
import com.example.payments.authorization.AuthorizationStore;
import com.example.payments.authorization.InMemoryAuthorizationStore;
import com.example.payments.authorization.InMemoryUnknownOutcomes;
import com.example.payments.authorization.UnknownOutcomes;
import com.example.payments.database.Database;
import com.example.payments.database.DatabaseReadinessCheck;
import com.example.payments.database.PostgresAuthorizationStore;
import com.example.payments.database.PostgresIdempotencyStore;
import com.example.payments.database.PostgresKeyBindings;
import com.example.payments.database.PostgresUnknownOutcomes;
import com.example.payments.health.CapacityCheck;
import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.InMemoryIdempotencyStore;
import com.example.payments.idempotency.InMemoryKeyBindings;
import com.example.payments.idempotency.KeyBindings;
import com.example.payments.redis.RedisConnection;
import com.example.payments.redis.RedisIdempotencyStore;
import com.example.payments.redis.RedisReadinessCheck;

import io.helidon.health.HealthCheck;
import io.helidon.metrics.api.MeterRegistry;

/**
 * The stores of the configured backend and what comes with them: the idempotency registry's store
 * ({@code idempotency.store}: keys and recorded decisions, which replay), the resource store (the authorizations and
 * their lifecycle, which {@code GET} reads) with the durable key bindings, the readiness dependencies they add, the
 * retention sweep (in-memory and postgres: Redis expires records itself, so no sweeper runs and liveness watches no
 * sweeper heartbeat), and the resources the shutdown sequence closes.
 *
 * <p>Resources live in PostgreSQL with {@code idempotency.store: postgres}, and with {@code redis} in front of it (the
 * registry in Redis, the system of record in PostgreSQL: {@code database.*} is required with both, in every
 * environment). With {@code in-memory} (the embedded defaults) they live in this process's memory, bounded by
 * {@code authorization.in-memory.max-resources}; staging and prod refuse that.
 *
 * @param idempotency     keys and decisions
 * @param authorizations  the resource store
 * @param bindings        each used idempotency key bound to its request's fingerprint
 * @param outcomes        authorizations whose outcome is unknown, until a retry or the reconciler resolves them: in
 *                        PostgreSQL whenever a database is configured, else in memory
 * @param readinessChecks required dependencies ({@code idempotency-store} with redis, {@code database} with a
 *                        database; none in memory)
 * @param capacity        what readiness reports when full without feeding the circuit breaker: the in-memory store at
 *                        {@code idempotency.max-keys}; none with redis (Redis refuses writes when full: 503 per request)
 * @param sweep           drops expired records, run by the {@code idempotency-sweeper} worker (in memory; with
 *                        postgres in batches of 500 rows); empty with redis
 * @param resources       closed in the shutdown cleanup phase, by name
 */
record Backends(IdempotencyStore idempotency, AuthorizationStore authorizations, KeyBindings bindings,
                UnknownOutcomes outcomes, List<HealthCheck> readinessChecks, List<CapacityCheck> capacity,
                Optional<Runnable> sweep,
                Map<String, AutoCloseable> resources) {

    // A sweeper run deletes at most 20 statements x 500 rows of each table: each statement short, the heartbeat
    // touched within seconds even with a backlog (the next run goes on).
    private static final int SWEEP_BATCH = 500;
    private static final int SWEEP_MAX_BATCHES = 20;

    /**
     * Builds the stores; with redis, also connects (an unreachable Redis is logged, not fatal); with a database, opens
     * the pool and migrates the schema ({@link Database#open}: an unreachable database is logged and retried, the
     * service starts unready).
     *
     * @param settings     {@code idempotency.*}
     * @param lifecycle    {@code authorization.*}: the in-memory bound, and the validity the migrations need
     * @param checkTimeout {@code health.readiness.check-timeout}, bounds the Redis {@code PING} and the database check
     * @param meters       the service's registry (the database pool's and statements' metrics)
     * @return the backends
     * @throws com.example.payments.config.ConfigurationException when the database refuses the credentials or
     *                                                            does not exist (exit 2)
     */
    static Backends create(IdempotencySettings settings, AuthorizationSettings lifecycle, Duration checkTimeout,
                           MeterRegistry meters) {
        Optional<Database> database = settings.database()
                .map(db -> Database.open(db, lifecycle.validity(), meters));
        if (settings.store() == IdempotencySettings.Store.POSTGRES) {
            return postgres(database.orElseThrow(), lifecycle.validity(), checkTimeout);
        }
        return settings.redis()
                .map(redis -> redis(redis, database.orElseThrow(), checkTimeout))
                .orElseGet(() -> inMemory(settings, lifecycle));
    }

    private static Backends postgres(Database database, Duration validity, Duration checkTimeout) {
        // Two round trips per authorization, one of them flushed: the claim binds the key, and the recording of the
        // decision writes the authorization row (the resource store's create writes nothing).
        PostgresIdempotencyStore store = PostgresIdempotencyStore.systemOfRecord(database, validity);
        Runnable sweep = () -> store.sweepQuietly(SWEEP_BATCH, SWEEP_MAX_BATCHES);
        return new Backends(store, PostgresAuthorizationStore.writtenWithDecisions(database),
                            PostgresKeyBindings.create(database),
                            PostgresUnknownOutcomes.create(database),
                            List.of(DatabaseReadinessCheck.create(database, checkTimeout)), List.of(),
                            Optional.of(sweep), Map.of("database-pool", database));
    }

    private static Backends inMemory(IdempotencySettings settings, AuthorizationSettings lifecycle) {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(settings.maxKeys());
        Runnable sweep = store::sweep;
        CapacityCheck full = () -> store.full().map(why -> "idempotency-store: " + why);
        return new Backends(store, InMemoryAuthorizationStore.create(lifecycle.maxResources()),
                            InMemoryKeyBindings.create(lifecycle.maxResources()),
                            InMemoryUnknownOutcomes.create(lifecycle.maxResources()), List.of(), List.of(full),
                            Optional.of(sweep), Map.of("idempotency-store", store));
    }

    private static Backends redis(IdempotencySettings.RedisSettings redis, Database database, Duration checkTimeout) {
        RedisConnection connection = RedisConnection.create(redis);
        List<HealthCheck> checks = List.of(RedisReadinessCheck.create(connection, checkTimeout),
                                           DatabaseReadinessCheck.create(database, checkTimeout));
        Map<String, AutoCloseable> resources = new LinkedHashMap<>();
        resources.put("redis-client", connection);
        resources.put("database-pool", database);
        return new Backends(RedisIdempotencyStore.create(connection), PostgresAuthorizationStore.create(database),
                            PostgresKeyBindings.create(database), PostgresUnknownOutcomes.create(database), checks,
                            List.of(), Optional.empty(), Collections.unmodifiableMap(resources));
    }
}
