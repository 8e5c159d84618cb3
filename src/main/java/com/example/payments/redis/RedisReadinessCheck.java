package com.example.payments.redis;

import java.time.Duration;

import com.example.payments.idempotency.IdempotencyStore;

import io.helidon.health.HealthCheck;
import io.helidon.health.HealthCheckResponse;
import io.helidon.health.HealthCheckType;

/**
 * The readiness dependency {@code idempotency-store} of the redis backend: {@code PING}, bounded by
 * {@code health.readiness.check-timeout} and by {@code idempotency.redis.command-timeout}, whichever is shorter (a
 * Redis slower than the command timeout fails every request, so it must fail readiness too). Without the store the
 * service must not authorize, so a replica that cannot reach Redis takes itself out of the load balancer. Liveness
 * never runs it: restarting the process does not fix Redis.
 */
public final class RedisReadinessCheck implements HealthCheck {

    /** The dependency's name in readiness errors. */
    public static final String NAME = "idempotency-store";

    private final RedisConnection redis;
    private final Duration timeout;

    private RedisReadinessCheck(RedisConnection redis, Duration timeout) {
        this.redis = redis;
        this.timeout = timeout;
    }

    /**
     * Creates the check.
     *
     * @param redis        the shared client
     * @param checkTimeout {@code health.readiness.check-timeout}, default PT1S
     * @return the check
     */
    public static RedisReadinessCheck create(RedisConnection redis, Duration checkTimeout) {
        Duration commandTimeout = redis.commandTimeout();
        return new RedisReadinessCheck(redis, checkTimeout.compareTo(commandTimeout) < 0 ? checkTimeout
                : commandTimeout);
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
        try {
            redis.ping(timeout);
            return HealthCheckResponse.builder().status(true).build();
        } catch (IdempotencyStore.UnavailableException e) {
            return HealthCheckResponse.builder().status(false).detail("error", e.getMessage()).build();
        }
    }
}
