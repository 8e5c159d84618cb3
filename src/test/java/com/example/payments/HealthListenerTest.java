package com.example.payments;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import io.helidon.health.HealthCheck;
import io.helidon.health.HealthCheckResponse;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

/**
 * The health listener over the wire: dependency checks and the circuit breaker, with the service started through
 * Main's own wiring (the loopback prober and a wedged business listener: LivenessUnderSaturationIT).
 */
class HealthListenerTest {

    /** A dependency whose health the test switches. */
    static final class Switchable implements HealthCheck {
        final AtomicBoolean up = new AtomicBoolean(true);

        @Override
        public String name() {
            return "test-dependency";
        }

        @Override
        public HealthCheckResponse call() {
            return up.get() ? HealthCheckResponse.builder().build()
                    : HealthCheckResponse.builder().status(HealthCheckResponse.Status.DOWN)
                            .detail("error", "switched off by the test").build();
        }
    }

    @Test
    void aFailingRequiredDependencyFailsReadinessNamingItButNeverLiveness() throws Exception {
        Switchable dependency = new Switchable();
        try (TestService service = TestService.start(Map.of(), List.of(dependency))) {
            assertThat(service.get(service.health("/health/ready")).statusCode(), is(200));
            dependency.up.set(false);
            var ready = service.get(service.health("/health/ready"));
            assertThat(ready.statusCode(), is(503));
            assertThat(ready.body(), is("{\"status\":\"unhealthy\",\"errors\":[\"test-dependency: switched off by "
                                        + "the test\"]}"));
            assertThat(service.get(service.health("/health/live")).statusCode(), is(200));
            dependency.up.set(true);
            assertThat(service.get(service.health("/health/ready")).statusCode(), is(200));
        }
    }

    @Test
    void thresholdFailingReadinessRequestsTurnLivenessFaultedAndOneSuccessResetsIt() throws Exception {
        Switchable dependency = new Switchable();
        dependency.up.set(false);
        try (TestService service = TestService.start(Map.of("health.circuit-breaker.threshold", "3"),
                                                     List.of(dependency))) {
            for (int i = 1; i <= 2; i++) {
                assertThat(service.get(service.health("/health/ready")).statusCode(), is(503));
                assertThat("after " + i + " failures", service.get(service.health("/health/live")).statusCode(),
                           is(200));
            }
            assertThat(service.get(service.health("/health/ready")).statusCode(), is(503));
            var live = service.get(service.health("/health/live"));
            assertThat(live.statusCode(), is(503));
            assertThat(live.body(), is("{\"status\":\"faulted\"}"));
            assertThat(service.metric("readiness_consecutive_failures", Map.of()), is(3.0));

            dependency.up.set(true);
            assertThat(service.get(service.health("/health/ready")).statusCode(), is(200));
            assertThat(service.get(service.health("/health/live")).statusCode(), is(200));
            assertThat(service.metric("readiness_consecutive_failures", Map.of()), is(0.0));
        }
    }

    @Test
    void theLegacyHealthAliasAnswersLikeReadinessButNeverFeedsTheBreaker() throws Exception {
        Switchable dependency = new Switchable();
        dependency.up.set(false);
        try (TestService service = TestService.start(Map.of("health.circuit-breaker.threshold", "3"),
                                                     List.of(dependency))) {
            for (int i = 0; i < 10; i++) {
                var health = service.get(service.health("/health"));
                assertThat(health.statusCode(), is(503));
                assertThat(health.body(), containsString("test-dependency: switched off by the test"));
            }
            assertThat(service.get(service.health("/health/live")).statusCode(), is(200));
            assertThat(service.metric("readiness_consecutive_failures", Map.of()), is(0.0));
        }
    }

    @Test
    void probeSuccessGaugesShowTheLastAnswerOfEachProbe() throws Exception {
        Switchable dependency = new Switchable();
        try (TestService service = TestService.start(Map.of(), List.of(dependency))) {
            service.get(service.health("/health/live"));
            service.get(service.health("/health/startup"));
            dependency.up.set(false);
            service.get(service.health("/health/ready"));
            assertThat(service.metric("health_probe_success", Map.of("probe", "liveness")), is(1.0));
            assertThat(service.metric("health_probe_success", Map.of("probe", "startup")), is(1.0));
            assertThat(service.metric("health_probe_success", Map.of("probe", "readiness")), is(0.0));
            assertThat(service.metric("circuit_breaker_threshold", Map.of()), is(60.0));
        }
    }
}
