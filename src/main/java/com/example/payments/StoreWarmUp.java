package com.example.payments;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import com.example.payments.database.Database;
import com.example.payments.database.PostgresIdempotencyStore;
import com.example.payments.idempotency.DecisionKey;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.observability.Tracing;

import io.opentelemetry.context.Scope;

/**
 * The order of the startup warm-up with a database (postgres, or redis in front of it): readiness never answers 200
 * before the replica can serve on the real store.
 * <ol>
 *     <li>Wait until the schema is migrated and the pool holds {@code database.pool-size} connections (HikariCP
 *     opens them in the background), polling every 20 ms. A pool that is not full 10 s after the schema is migrated
 *     (the server's or the role's connection limit is below {@code database.pool-size}) is warmed up on the
 *     connections it has, with one WARN naming {@code database.pool-size} and the connections it got.</li>
 *     <li>Run the sandbox requests ({@link WarmUp}) on the real pool, every transaction rolled back (a few per pool
 *     connection; the rest on in-memory stores); with redis, also
 *     {@code min(warm-up.requests, 200)} lookups of decisions that cannot exist in the real Redis (reads only).</li>
 *     <li>Mark the database warm ({@link Database#markWarm}), then complete this part of startup. When no sandbox
 *     request through the store was answered as expected (e.g. the database refuses writes), the database is not
 *     marked warm: startup completes, readiness stays 503 naming {@code database} ({@code warm-up failed: <reason>},
 *     {@link Database#markWarmUpFailed}), one WARN is logged, and the sandbox requests are retried every 5 s in the
 *     background until they are answered (then ready) or the shutdown begins.</li>
 * </ol>
 * When the database is down at startup (the schema is not migrated), or the pool is not full after 10 s, startup
 * completes anyway (so that the startup probe does not restart a replica the database keeps waiting) and readiness
 * stays 503 naming {@code database} ({@code schema not migrated yet}, then {@code warming up (pool n of m
 * connections)}) until these steps ran, which they do as soon as the database is back. Without a database the
 * sandbox requests run alone.
 */
final class StoreWarmUp {

    private static final System.Logger LOGGER = System.getLogger(StoreWarmUp.class.getName());
    private static final Duration POOL_WAIT = Duration.ofSeconds(10);
    private static final Duration RETRY = Duration.ofSeconds(5);
    private static final long POLL_MILLIS = 20;
    private static final int MAX_REGISTRY_READS = 200;

    private StoreWarmUp() {
    }

    /**
     * Runs the steps on the calling thread.
     *
     * @param backends the service's stores
     * @param requests {@code warm-up.requests}: 0 skips the sandbox and the Redis reads, not the wait for the pool
     * @param stop     {@code true} once the warm-up should stop early (the shutdown began)
     * @param sandbox  sends the sandbox requests; never throws; empty when a request through the store was answered
     *                 as expected (or none was sent), else why not
     * @param done     marks this part of startup complete; run exactly once, also when stopped early
     */
    static void run(Backends backends, int requests, BooleanSupplier stop, Supplier<Optional<String>> sandbox,
                    Runnable done) {
        if (backends.database().isEmpty()) {
            try {
                sandbox.get();
            } finally {
                done.run();
            }
            return;
        }
        Database database = backends.database().get();
        boolean completed = false;
        try {
            long bound = System.nanoTime() + POOL_WAIT.toNanos();
            long poolBound = 0;
            while (!database.migrated() || database.poolConnections() < database.settings().poolSize()) {
                if (stop.getAsBoolean()) {
                    return;
                }
                if (database.migrated()) {
                    if (poolBound == 0) {
                        poolBound = System.nanoTime() + POOL_WAIT.toNanos();
                    } else if (System.nanoTime() - poolBound > 0) {
                        LOGGER.log(Level.WARNING, "Warm-up: the pool holds {0} connections, not "
                                                  + "database.pool-size={1}, {2} s after the schema was migrated (the "
                                                  + "server''s or the role''s connection limit?): warming up on the "
                                                  + "connections it has",
                                   String.valueOf(database.poolConnections()),
                                   String.valueOf(database.settings().poolSize()),
                                   String.valueOf(POOL_WAIT.toSeconds()));
                        break;
                    }
                }
                if (!completed && (!database.migrated() || System.nanoTime() - bound > 0)) {
                    LOGGER.log(Level.WARNING, "Warm-up waits for the database (schema migrated: {0}, pool {1} of {2} "
                                              + "connections): startup completes, readiness names database until it "
                                              + "ran", String.valueOf(database.migrated()),
                               String.valueOf(database.poolConnections()),
                               String.valueOf(database.settings().poolSize()));
                    done.run();
                    completed = true;
                }
                Thread.sleep(POLL_MILLIS);
            }
            Optional<String> failure = sandbox.get();
            boolean warned = false;
            while (failure.isPresent()) {
                database.markWarmUpFailed(failure.get());
                if (!warned) {
                    LOGGER.log(Level.WARNING, "Warm-up on the database failed ({0}): startup completes, readiness "
                                              + "names database, retried every {1} s", failure.get(),
                               String.valueOf(RETRY.toSeconds()));
                    warned = true;
                } else {
                    LOGGER.log(Level.DEBUG, "Warm-up on the database failed again: {0}", failure.get());
                }
                if (!completed) {
                    done.run();
                    completed = true;
                }
                for (long wait = RETRY.toMillis(); wait > 0; wait -= POLL_MILLIS) {
                    if (stop.getAsBoolean() || database.closed()) {
                        return;
                    }
                    Thread.sleep(POLL_MILLIS);
                }
                failure = sandbox.get();
            }
            if (!(backends.idempotency() instanceof PostgresIdempotencyStore)) {
                readRegistry(backends.idempotency(), Math.min(requests, MAX_REGISTRY_READS));
            }
            database.markWarm();
            if (completed) {
                LOGGER.log(Level.INFO, "Warm-up on the database done: ready from now on");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (!completed) {
                done.run();
            }
        }
    }

    // Lookups of decisions no request can have created (a kind no operation has): the registry's read path, its
    // connection and codec, with nothing written and no span recorded.
    private static void readRegistry(IdempotencyStore registry, int reads) {
        try (Scope ignored = Tracing.unsampled().makeCurrent()) {
            for (int i = 0; i < reads; i++) {
                registry.findDecision(new DecisionKey("warm-up", "none-" + i));
            }
        } catch (RuntimeException e) {
            LOGGER.log(Level.WARNING, "Warm-up: lookups in the idempotency registry failed, readiness goes on: {0}",
                       String.valueOf(e));
        }
    }
}
