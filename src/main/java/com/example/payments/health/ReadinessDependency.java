package com.example.payments.health;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

import io.helidon.health.HealthCheck;
import io.helidon.health.HealthCheckResponse;
import io.helidon.health.HealthCheckType;

/**
 * A readiness dependency: a store the service cannot authorize without (PostgreSQL as {@code database}, Redis as
 * {@code idempotency-store}). A replica that cannot reach it takes itself out of the load balancer
 * ({@code 503 {"errors":["<name>: <why>"]}}); liveness never runs it, because restarting the process does not fix
 * the store (Kubernetes probe docs: a liveness probe must not depend on other services).
 *
 * <p>Each check is bounded by {@code health.readiness.check-timeout} and by the store's own timeout for one call,
 * whichever is shorter: a store slower than its call timeout fails every request, so it must fail readiness too.
 *
 * @param name    the dependency's name in readiness errors
 * @param timeout bound of one check
 * @param check   runs the check within the bound: empty when the store answered, else why not
 */
public record ReadinessDependency(String name, Duration timeout, Function<Duration, Optional<String>> check)
        implements HealthCheck {

    /**
     * Creates the check.
     *
     * @param name         the dependency's name, e.g. {@code database}
     * @param checkTimeout {@code health.readiness.check-timeout}, default PT1S
     * @param callTimeout  the store's bound of one call (e.g. {@code idempotency.redis.command-timeout})
     * @param check        the check, given the shorter of the two
     * @return the check
     */
    public static ReadinessDependency of(String name, Duration checkTimeout, Duration callTimeout,
                                         Function<Duration, Optional<String>> check) {
        return new ReadinessDependency(name, checkTimeout.compareTo(callTimeout) < 0 ? checkTimeout : callTimeout,
                                       check);
    }

    @Override
    public HealthCheckType type() {
        return HealthCheckType.READINESS;
    }

    @Override
    public HealthCheckResponse call() {
        return check.apply(timeout)
                .map(why -> HealthCheckResponse.builder().status(false).detail("error", why).build())
                .orElseGet(() -> HealthCheckResponse.builder().status(true).build());
    }
}
