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
import com.example.payments.database.PostgresAuthorizationStore;
import com.example.payments.database.PostgresIdempotencyStore;
import com.example.payments.database.PostgresKeyBindings;
import com.example.payments.database.PostgresUnknownOutcomes;
import com.example.payments.health.CapacityCheck;
import com.example.payments.health.ReadinessDependency;
import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.InMemoryIdempotencyStore;
import com.example.payments.idempotency.InMemoryKeyBindings;
import com.example.payments.idempotency.KeyBindings;
import com.example.payments.redis.RedisConnection;
import com.example.payments.redis.RedisIdempotencyStore;
import com.example.payments.redis.RedisSettings;

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
 * @param database        the database of postgres and redis (the startup warm-up fills its pool and runs its
 *                        statements before the service is ready); empty in memory
 */
record Backends(IdempotencyStore idempotency, AuthorizationStore authorizations, KeyBindings bindings,
                UnknownOutcomes outcomes, List<HealthCheck> readinessChecks, List<CapacityCheck> capacity,
                Optional<Runnable> sweep,
                Map<String, AutoCloseable> resources, Optional<Database> database) {

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
     * @param adapters     {@code idempotency.redis.*} and {@code database.*}
     * @param lifecycle    {@code authorization.*}: the in-memory bound, and the validity the migrations need
     * @param checkTimeout {@code health.readiness.check-timeout}, bounds the Redis {@code PING} and the database check
     * @param meters       the service's registry (the database pool's and statements' metrics)
     * @return the backends
     * @throws com.example.payments.config.ConfigurationException when the database refuses the credentials or
     *                                                            does not exist (exit 2)
     */
    static Backends create(IdempotencySettings settings, BackendSettings adapters, AuthorizationSettings lifecycle,
                           Duration checkTimeout, MeterRegistry meters) {
        Optional<Database> database = adapters.database()
                .map(db -> Database.open(db, lifecycle.validity(), meters));
        if (settings.store() == IdempotencySettings.Store.POSTGRES) {
            return postgres(database.orElseThrow(), lifecycle.validity(), checkTimeout);
        }
        return adapters.redis()
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
                            List.of(databaseCheck(database, checkTimeout)), List.of(),
                            Optional.of(sweep), Map.of("database-pool", database), Optional.of(database));
    }

    private static Backends inMemory(IdempotencySettings settings, AuthorizationSettings lifecycle) {
        InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(settings.maxKeys());
        Runnable sweep = store::sweep;
        CapacityCheck full = () -> store.full().map(why -> "idempotency-store: " + why);
        return new Backends(store, InMemoryAuthorizationStore.create(lifecycle.maxResources()),
                            InMemoryKeyBindings.create(lifecycle.maxResources()),
                            InMemoryUnknownOutcomes.create(lifecycle.maxResources()), List.of(), List.of(full),
                            Optional.of(sweep), Map.of("idempotency-store", store), Optional.empty());
    }

    private static Backends redis(RedisSettings redis, Database database, Duration checkTimeout) {
        RedisConnection connection = RedisConnection.create(redis);
        List<HealthCheck> checks = List.of(redisCheck(connection, checkTimeout), databaseCheck(database, checkTimeout));
        Map<String, AutoCloseable> resources = new LinkedHashMap<>();
        resources.put("redis-client", connection);
        resources.put("database-pool", database);
        return new Backends(RedisIdempotencyStore.create(connection), PostgresAuthorizationStore.create(database),
                            PostgresKeyBindings.create(database), PostgresUnknownOutcomes.create(database), checks,
                            List.of(), Optional.empty(), Collections.unmodifiableMap(resources),
                            Optional.of(database));
    }

    /**
     * The stores of the startup warm-up's sandbox ({@link WarmUp}), the real ones' code over throwaway data: with a
     * database, its stores over {@link Database#rolledBackView} (the real pool, statements and functions, every
     * transaction rolled back, statement metrics in {@code quiet}); the idempotency registry in memory with redis
     * (Redis writes cannot be rolled back: {@link StoreWarmUp} only reads it), and everything in memory without a
     * database.
     *
     * @param quiet    the sandbox's registry, which counts nothing
     * @param capacity bound of each in-memory store, in records
     * @return the sandbox's stores
     */
    Sandbox sandbox(MeterRegistry quiet, int capacity) {
        if (database.isEmpty()) {
            return inMemorySandbox(capacity);
        }
        Database view = database.get().rolledBackView(quiet);
        IdempotencyStore keys = idempotency instanceof PostgresIdempotencyStore
                ? PostgresIdempotencyStore.create(view, decision -> Optional.empty())
                : InMemoryIdempotencyStore.create(capacity);
        return new Sandbox(keys, PostgresAuthorizationStore.create(view), PostgresKeyBindings.create(view), true);
    }

    /**
     * Stores of the warm-up's sandbox that are all in memory, whatever the backend: the request path's code without
     * the store's, on this replica's CPU only.
     *
     * @param capacity bound of each store, in records
     * @return the stores, empty
     */
    static Sandbox inMemorySandbox(int capacity) {
        return new Sandbox(InMemoryIdempotencyStore.create(capacity), InMemoryAuthorizationStore.create(capacity),
                           InMemoryKeyBindings.create(capacity), false);
    }

    /**
     * The warm-up sandbox's stores.
     *
     * @param idempotency    keys and decisions
     * @param authorizations the resource store
     * @param bindings       the key bindings
     * @param rolledBack     {@code true} when the resources are rolled back after each call: a {@code GET} of one
     *                       the sandbox created finds nothing (404)
     */
    record Sandbox(IdempotencyStore idempotency, AuthorizationStore authorizations, KeyBindings bindings,
                   boolean rolledBack) {
    }

    // Readiness names "database" when the schema is not migrated or a round trip (SELECT 1) does not answer within
    // the statement's socket bound.
    private static HealthCheck databaseCheck(Database database, Duration checkTimeout) {
        return ReadinessDependency.of("database", checkTimeout, database.settings().networkTimeout(), database::check);
    }

    // Readiness names "idempotency-store" when PING does not answer within Redis' command timeout.
    private static HealthCheck redisCheck(RedisConnection redis, Duration checkTimeout) {
        return ReadinessDependency.of("idempotency-store", checkTimeout, redis.commandTimeout(), redis::check);
    }
}
