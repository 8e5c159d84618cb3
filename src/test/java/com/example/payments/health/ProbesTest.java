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

    private static final PortStatus OK = PortStatus.SERVING;
    private static final PortStatus SHED = PortStatus.SATURATED;
    private static final PortStatus SILENT = PortStatus.NOT_RESPONDING;
    private static final List<String> NOT_RESPONDING = List.of(Probes.APP_SERVER_NOT_RESPONDING);
    private static final List<String> SATURATED = List.of(Probes.APP_SERVER_SATURATED);

    static Stream<Arguments> liveness() {
        // draining, threshold, failures, port, progressing, workerErrors -> status, body status, errors
        return Stream.of(
                Arguments.of(false, 60, 0, OK, true, NONE, 200, "ok", null),
                Arguments.of(false, 60, 0, OK, false, NONE, 200, "ok", null),
                Arguments.of(true, 60, 0, OK, true, NONE, 200, "draining", null),
                Arguments.of(true, 60, 0, SILENT, false, STALE, 200, "draining", null),
                Arguments.of(true, 60, 99, SILENT, false, NONE, 200, "draining", null),
                Arguments.of(false, 60, 60, OK, true, NONE, 503, "faulted", null),
                Arguments.of(false, 60, 61, SILENT, false, STALE, 503, "faulted", null),
                Arguments.of(false, 60, 59, OK, true, NONE, 200, "ok", null),
                Arguments.of(false, 0, 1000, OK, true, NONE, 200, "ok", null),
                // Busy is not dead: a shed probe, or a probe that timed out while requests complete, keeps liveness.
                Arguments.of(false, 60, 0, SHED, false, NONE, 200, "ok", null),
                Arguments.of(false, 60, 0, SHED, true, NONE, 200, "ok", null),
                Arguments.of(false, 60, 0, SILENT, true, NONE, 200, "ok", null),
                // No answer and no progress over the window: wedged.
                Arguments.of(false, 60, 0, SILENT, false, NONE, 503, "unhealthy", NOT_RESPONDING),
                Arguments.of(false, 60, 0, OK, true, STALE, 503, "unhealthy", STALE),
                Arguments.of(false, 60, 0, SILENT, true, STALE, 503, "unhealthy", STALE),
                Arguments.of(false, 60, 0, SILENT, false, STALE, 503, "unhealthy",
                             List.of(Probes.APP_SERVER_NOT_RESPONDING, STALE.getFirst())));
    }

    @ParameterizedTest(name = "draining={0} threshold={1} failures={2} port={3} progressing={4} workers={5} -> {6} {7}")
    @MethodSource
    void liveness(boolean draining, int threshold, int failures, PortStatus port, boolean progressing,
                  List<String> workers, int status, String bodyStatus, List<String> errors) {
        ProbeResult result = Probes.liveness(draining, threshold, failures, port, progressing, workers);
        assertThat(result.status(), is(status));
        assertThat(result.body().status(), is(bodyStatus));
        assertThat(result.body().errors(), is(errors));
        assertThat(result.breaker(), is(ProbeResult.BreakerEffect.NONE));
    }

    static Stream<Arguments> readiness() {
        // draining, started, port, progressing, dependency failures -> status, body, errors, breaker effect, checks run
        List<String> redisDown = List.of("idempotency-store: connection refused");
        ProbeResult.BreakerEffect none = ProbeResult.BreakerEffect.NONE;
        ProbeResult.BreakerEffect failure = ProbeResult.BreakerEffect.FAILURE;
        return Stream.of(
                Arguments.of(false, true, OK, true, NONE, 200, "ok", null, ProbeResult.BreakerEffect.RESET, true),
                Arguments.of(false, true, OK, false, NONE, 200, "ok", null, ProbeResult.BreakerEffect.RESET, true),
                Arguments.of(true, true, OK, true, NONE, 503, "draining", null, none, false),
                Arguments.of(true, false, SILENT, false, redisDown, 503, "draining", null, none, false),
                Arguments.of(false, false, OK, true, NONE, 503, "starting", null, none, false),
                Arguments.of(false, false, SILENT, false, redisDown, 503, "starting", null, none, false),
                // Saturated: out of the endpoints, but never a step toward the breaker's restart.
                Arguments.of(false, true, SHED, true, NONE, 503, "unhealthy", SATURATED, none, false),
                Arguments.of(false, true, SHED, false, redisDown, 503, "unhealthy", SATURATED, none, false),
                Arguments.of(false, true, SILENT, true, NONE, 503, "unhealthy", SATURATED, none, false),
                Arguments.of(false, true, SILENT, true, redisDown, 503, "unhealthy", SATURATED, none, false),
                Arguments.of(false, true, SILENT, false, NONE, 503, "unhealthy", NOT_RESPONDING, failure, false),
                Arguments.of(false, true, SILENT, false, redisDown, 503, "unhealthy", NOT_RESPONDING, failure, false),
                Arguments.of(false, true, OK, true, redisDown, 503, "unhealthy", redisDown, failure, true));
    }

    @ParameterizedTest(name = "draining={0} started={1} port={2} progressing={3} deps={4} -> {5} {6} {7} {8}")
    @MethodSource
    void readiness(boolean draining, boolean started, PortStatus port, boolean progressing,
                   List<String> dependencyFailures, int status, String bodyStatus, List<String> errors,
                   ProbeResult.BreakerEffect effect, boolean checksRun) {
        AtomicInteger checks = new AtomicInteger();
        ProbeResult result = Probes.readiness(draining, started, port, progressing, () -> {
            checks.incrementAndGet();
            return dependencyFailures;
        });
        assertThat(result.status(), is(status));
        assertThat(result.body().status(), is(bodyStatus));
        assertThat(result.body().errors(), is(errors));
        assertThat(result.breaker(), is(effect));
        assertThat("dependency checks run", checks.get() == 1, is(checksRun));
    }

    @Test
    void readinessWhileDrainingSaysDrainingTrue() {
        ProbeResult result = Probes.readiness(true, true, PortStatus.SERVING, true, List::of);
        assertThat(result.body().draining(), is(true));
    }

    @Test
    void readinessNamesEveryFailedDependency() {
        List<String> failures = List.of("idempotency-store: timeout", "database: refused");
        ProbeResult result = Probes.readiness(false, true, PortStatus.SERVING, true, () -> failures);
        assertThat(result.body().errors(), is(failures));
        assertThat(result.body().draining(), is(nullValue()));
    }

    @Test
    void readinessReportsTheProberBeforeTouchingDependencies() {
        ProbeResult result = Probes.readiness(false, true, PortStatus.NOT_RESPONDING, false, () -> {
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
