package com.example.payments.health;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.helidon.health.HealthCheck;
import io.helidon.health.HealthCheckResponse;

/**
 * Runs the required readiness dependencies in parallel, each bounded by {@code health.readiness.check-timeout}, and
 * collects every failure (no short-circuit), so a readiness answer takes about as long as the slowest check and its
 * body names everything that is wrong at once.
 *
 * <p>Only required dependencies belong here: one the service can authorize without (analytics, a non-critical
 * downstream) would turn its outage into a total one. Never register another service's readiness endpoint: two
 * services checking each other can never become ready again after a blip.
 */
public final class DependencyChecks implements AutoCloseable {

    private final List<HealthCheck> checks;
    private final Duration timeout;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();

    private DependencyChecks(List<HealthCheck> checks, Duration timeout) {
        this.checks = List.copyOf(checks);
        this.timeout = timeout;
    }

    /**
     * Creates the runner.
     *
     * @param checks  required dependencies; {@link HealthCheck#name()} names each in readiness errors
     * @param timeout ceiling per check ({@code health.readiness.check-timeout}, default PT1S)
     * @return the runner
     */
    public static DependencyChecks create(List<HealthCheck> checks, Duration timeout) {
        return new DependencyChecks(checks, timeout);
    }

    /**
     * Runs every check once.
     *
     * @return one {@code "name: why"} entry per failed check, in registration order; empty when all are up
     */
    public List<String> failures() {
        if (checks.isEmpty()) {
            return List.of();
        }
        // One deadline for all: every check started together, so each gets the full timeout.
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Future<HealthCheckResponse>> running = new ArrayList<>(checks.size());
        for (HealthCheck check : checks) {
            running.add(executor.submit(check::call));
        }
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < checks.size(); i++) {
            String failure = await(running.get(i), deadline);
            if (failure != null) {
                failures.add(checks.get(i).name() + ": " + failure);
            }
        }
        return failures;
    }

    private String await(Future<HealthCheckResponse> future, long deadline) {
        try {
            HealthCheckResponse response = future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (response == null) {
                return "no answer";
            }
            return response.status() == HealthCheckResponse.Status.UP ? null : describe(response);
        } catch (TimeoutException e) {
            future.cancel(true);
            return "no answer within " + timeout.toMillis() + " ms";
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            return cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            return "check interrupted";
        }
    }

    private static String describe(HealthCheckResponse response) {
        Map<String, Object> details = response.details();
        Object why = details.getOrDefault("error", details.get("message"));
        return why == null ? response.status().name().toLowerCase(java.util.Locale.ROOT) : String.valueOf(why);
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
