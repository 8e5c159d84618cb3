package com.example.payments.database;

import java.time.Duration;

import io.helidon.health.HealthCheck;
import io.helidon.health.HealthCheckResponse;
import io.helidon.health.HealthCheckType;

/**
 * The readiness dependency {@code database} of the postgres backend: the schema is migrated and one round trip
 * ({@code SELECT 1}) answers within {@code health.readiness.check-timeout} or the statement bound, whichever is
 * shorter. Without the database the service must not authorize, so a replica that cannot reach it takes itself out
 * of the load balancer ({@code 503 {"errors":["database: ..."]}}). Liveness never runs it: restarting the process
 * does not fix the database.
 */
public final class DatabaseReadinessCheck implements HealthCheck {

    /** The dependency's name in readiness errors. */
    public static final String NAME = "database";

    private final Database database;
    private final Duration timeout;

    private DatabaseReadinessCheck(Database database, Duration timeout) {
        this.database = database;
        this.timeout = timeout;
    }

    /**
     * Creates the check.
     *
     * @param database     the pool
     * @param checkTimeout {@code health.readiness.check-timeout}, default PT1S
     * @return the check
     */
    public static DatabaseReadinessCheck create(Database database, Duration checkTimeout) {
        Duration statement = database.settings().networkTimeout();
        return new DatabaseReadinessCheck(database, checkTimeout.compareTo(statement) < 0 ? checkTimeout : statement);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public HealthCheckType type() {
        return HealthCheckType.READINESS;
    }

    @Override
    public HealthCheckResponse call() {
        return database.check(timeout)
                .map(why -> HealthCheckResponse.builder().status(false).detail("error", why).build())
                .orElseGet(() -> HealthCheckResponse.builder().status(true).build());
    }
}
