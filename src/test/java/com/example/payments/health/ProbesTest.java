package com.example.payments.health;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

/**
 * The whole truth table of the three probes: they are pure functions of flags.
 */
class ProbesTest {

    private static final List<String> NONE = List.of();
    private static final List<String> STALE = List.of("idempotency-sweeper: no heartbeat for 12 s");

    static Stream<Arguments> liveness() {
        // draining, threshold, failures, serving, workerErrors -> status, body status, errors
        return Stream.of(
                Arguments.of(false, 60, 0, true, NONE, 200, "ok", null),
                Arguments.of(true, 60, 0, true, NONE, 200, "draining", null),
                Arguments.of(true, 60, 0, false, STALE, 200, "draining", null),
                Arguments.of(true, 60, 99, false, NONE, 200, "draining", null),
                Arguments.of(false, 60, 60, true, NONE, 503, "faulted", null),
                Arguments.of(false, 60, 61, false, STALE, 503, "faulted", null),
                Arguments.of(false, 60, 59, true, NONE, 200, "ok", null),
                Arguments.of(false, 0, 1000, true, NONE, 200, "ok", null),
                Arguments.of(false, 60, 0, false, NONE, 503, "unhealthy", List.of(Probes.APP_SERVER_NOT_RESPONDING)),
                Arguments.of(false, 60, 0, true, STALE, 503, "unhealthy", STALE),
                Arguments.of(false, 60, 0, false, STALE, 503, "unhealthy",
                             List.of(Probes.APP_SERVER_NOT_RESPONDING, STALE.getFirst())));
    }

    @ParameterizedTest(name = "draining={0} threshold={1} failures={2} serving={3} workers={4} -> {5} {6}")
    @MethodSource
    void liveness(boolean draining, int threshold, int failures, boolean serving, List<String> workers,
                  int status, String bodyStatus, List<String> errors) {
        ProbeResult result = Probes.liveness(draining, threshold, failures, serving, workers);
        assertThat(result.status(), is(status));
        assertThat(result.body().status(), is(bodyStatus));
        assertThat(result.body().errors(), is(errors));
        assertThat(result.breaker(), is(ProbeResult.BreakerEffect.NONE));
    }

    static Stream<Arguments> readiness() {
        // draining, started, serving, dependency failures -> status, body status, breaker effect, checks run
        List<String> redisDown = List.of("idempotency-store: connection refused");
        return Stream.of(
                Arguments.of(false, true, true, NONE, 200, "ok", ProbeResult.BreakerEffect.RESET, true),
                Arguments.of(true, true, true, NONE, 503, "draining", ProbeResult.BreakerEffect.NONE, false),
                Arguments.of(true, false, false, redisDown, 503, "draining", ProbeResult.BreakerEffect.NONE, false),
                Arguments.of(false, false, true, NONE, 503, "starting", ProbeResult.BreakerEffect.NONE, false),
                Arguments.of(false, false, false, redisDown, 503, "starting", ProbeResult.BreakerEffect.NONE, false),
                Arguments.of(false, true, false, NONE, 503, "unhealthy", ProbeResult.BreakerEffect.FAILURE, false),
                Arguments.of(false, true, false, redisDown, 503, "unhealthy", ProbeResult.BreakerEffect.FAILURE,
                             false),
                Arguments.of(false, true, true, redisDown, 503, "unhealthy", ProbeResult.BreakerEffect.FAILURE,
                             true));
    }

    @ParameterizedTest(name = "draining={0} started={1} serving={2} deps={3} -> {4} {5} {6}")
    @MethodSource
    void readiness(boolean draining, boolean started, boolean serving, List<String> dependencyFailures,
                   int status, String bodyStatus, ProbeResult.BreakerEffect effect, boolean checksRun) {
        AtomicInteger checks = new AtomicInteger();
        ProbeResult result = Probes.readiness(draining, started, serving, () -> {
            checks.incrementAndGet();
            return dependencyFailures;
        });
        assertThat(result.status(), is(status));
        assertThat(result.body().status(), is(bodyStatus));
        assertThat(result.breaker(), is(effect));
        assertThat("dependency checks run", checks.get() == 1, is(checksRun));
    }

    @Test
    void readinessWhileDrainingSaysDrainingTrue() {
        ProbeResult result = Probes.readiness(true, true, true, List::of);
        assertThat(result.body().draining(), is(true));
    }

    @Test
    void readinessNamesEveryFailedDependency() {
        List<String> failures = List.of("idempotency-store: timeout", "database: refused");
        ProbeResult result = Probes.readiness(false, true, true, () -> failures);
        assertThat(result.body().errors(), is(failures));
        assertThat(result.body().draining(), is(nullValue()));
    }

    @Test
    void readinessReportsTheProberBeforeTouchingDependencies() {
        ProbeResult result = Probes.readiness(false, true, false, () -> {
            throw new AssertionError("dependencies must not be checked when the app server is not responding");
        });
        assertThat(result.body().errors(), is(List.of(Probes.APP_SERVER_NOT_RESPONDING)));
    }

    @Test
    void startupIsStartedOnlyOnceComplete() {
        assertThat(Probes.startup(false).status(), is(503));
        assertThat(Probes.startup(false).body().status(), is("starting"));
        assertThat(Probes.startup(true).status(), is(200));
        assertThat(Probes.startup(true).body().status(), is("started"));
    }
}
