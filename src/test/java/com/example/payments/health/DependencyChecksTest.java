package com.example.payments.health;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;

import io.helidon.health.HealthCheck;
import io.helidon.health.HealthCheckResponse;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;

/**
 * Readiness dependency checks run in parallel, each bounded, and every failure is named.
 */
class DependencyChecksTest {

    static HealthCheck named(String name, Supplier<HealthCheckResponse> call) {
        return new HealthCheck() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public HealthCheckResponse call() {
                return call.get();
            }
        };
    }

    static HealthCheck check(String name, HealthCheckResponse response) {
        return named(name, () -> response);
    }

    static HealthCheck hanging(String name, CountDownLatch never) {
        return named(name, () -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return HealthCheckResponse.builder().build();
        });
    }

    static HealthCheck throwing(String name) {
        return named(name, () -> {
            throw new IllegalStateException("connection refused");
        });
    }

    @Test
    void noDependenciesMeansNoFailures() {
        try (DependencyChecks checks = DependencyChecks.create(List.of(), Duration.ofMillis(100))) {
            assertThat(checks.failures(), is(empty()));
        }
    }

    @Test
    void everyFailureIsNamedAndHealthyOnesAreNot() {
        CountDownLatch never = new CountDownLatch(1);
        HealthCheck up = check("cache", HealthCheckResponse.builder().status(HealthCheckResponse.Status.UP).build());
        HealthCheck down = check("database", HealthCheckResponse.builder().status(HealthCheckResponse.Status.DOWN)
                .detail("error", "read-only replica").build());
        try (DependencyChecks checks = DependencyChecks.create(
                List.of(up, down, hanging("issuer-gateway", never), throwing("idempotency-store")),
                Duration.ofMillis(300))) {
            assertThat(checks.failures(), contains("database: read-only replica",
                                                   "issuer-gateway: no answer within 300 ms",
                                                   "idempotency-store: connection refused"));
        } finally {
            never.countDown();
        }
    }

    @Test
    void hangingChecksRunInParallelSoTheTotalIsAboutOneTimeout() {
        CountDownLatch never = new CountDownLatch(1);
        List<HealthCheck> five = List.of(hanging("a", never), hanging("b", never), hanging("c", never),
                                         hanging("d", never), hanging("e", never));
        try (DependencyChecks checks = DependencyChecks.create(five, Duration.ofMillis(500))) {
            long start = System.nanoTime();
            List<String> failures = checks.failures();
            long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
            assertThat(failures.size(), is(5));
            // Sequential checks would take 5 x 500 ms; in parallel the whole run is bounded by about one timeout.
            assertThat(elapsedMillis, lessThan(2000L));
        } finally {
            never.countDown();
        }
    }
}
