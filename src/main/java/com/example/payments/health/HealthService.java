package com.example.payments.health;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import com.example.payments.http.Json;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerResponse;

/**
 * The probe routes of the health listener (port 8081, Kubernetes port name {@code health}):
 * {@code GET /health/live}, {@code /health/ready}, {@code /health/startup} and the legacy alias {@code /health}.
 *
 * <p>Bodies are JSON with {@code Cache-Control: no-store}; statuses are 200 or 503 as {@link Probes} defines.
 * {@code /health} answers exactly like readiness but never feeds the circuit breaker: an alias inherits every side
 * effect of its target, and a monitor polling it every second beside the kubelet would multiply the trip rate.
 *
 * <p>Exports {@code probe_success{type}} (0/1, the last answer of each kubelet path),
 * {@code readiness_consecutive_failures} and {@code circuit_breaker_threshold}.
 */
public final class HealthService implements HttpService {

    /** The probe kinds, as the {@code type} tag of {@code probe_success}. */
    enum ProbeType { LIVENESS, READINESS, STARTUP }

    private final HealthState state;
    private final DependencyChecks dependencies;
    private final WorkerWatchdog watchdog;
    private final int breakerThreshold;
    private final Map<ProbeType, AtomicInteger> lastSuccess = new EnumMap<>(ProbeType.class);

    private HealthService(HealthState state, DependencyChecks dependencies, WorkerWatchdog watchdog,
                          int breakerThreshold, MeterRegistry meters) {
        this.state = state;
        this.dependencies = dependencies;
        this.watchdog = watchdog;
        this.breakerThreshold = breakerThreshold;
        for (ProbeType type : ProbeType.values()) {
            AtomicInteger value = new AtomicInteger();
            lastSuccess.put(type, value);
            meters.getOrCreate(Gauge.builder("probe_success", value, AtomicInteger::get)
                                       .tags(List.of(Tag.create("type", type.name().toLowerCase(java.util.Locale.ROOT))))
                                       .description("1 when the last answer of this probe was 200, else 0"));
        }
        meters.getOrCreate(Gauge.builder("readiness_consecutive_failures", state, HealthState::readinessFailures)
                                   .description("Failing readiness requests since the last success"));
        meters.getOrCreate(Gauge.builder("circuit_breaker_threshold", () -> breakerThreshold)
                                   .description("Readiness failures that turn liveness to 503 faulted; 0 = disabled"));
    }

    /**
     * Creates the service.
     *
     * @param state            shared flags
     * @param dependencies     required readiness dependencies
     * @param watchdog         worker heartbeats for liveness
     * @param breakerThreshold {@code health.circuit-breaker.threshold}, 0 disables
     * @param meters           registry served on {@code /metrics}
     * @return the service
     */
    public static HealthService create(HealthState state, DependencyChecks dependencies, WorkerWatchdog watchdog,
                                       int breakerThreshold, MeterRegistry meters) {
        return new HealthService(state, dependencies, watchdog, breakerThreshold, meters);
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/health/live", (req, res) -> send(res, ProbeType.LIVENESS, liveness()))
                .get("/health/ready", (req, res) -> send(res, ProbeType.READINESS, countBreaker(readiness())))
                .get("/health/startup", (req, res) -> send(res, ProbeType.STARTUP, Probes.startup(
                        state.startupComplete())))
                .get("/health", (req, res) -> send(res, null, readiness()));
    }

    ProbeResult liveness() {
        boolean draining = state.draining();
        return Probes.liveness(draining, breakerThreshold, state.readinessFailures(), state.serving(),
                               draining ? List.of() : watchdog.errors());
    }

    ProbeResult readiness() {
        return Probes.readiness(state.draining(), state.startupComplete(), state.serving(), dependencies::failures);
    }

    private ProbeResult countBreaker(ProbeResult result) {
        switch (result.breaker()) {
        case FAILURE -> state.readinessFailed();
        case RESET -> state.readinessSucceeded();
        case NONE -> { }
        default -> throw new IllegalStateException("Unknown effect " + result.breaker());
        }
        return result;
    }

    private void send(ServerResponse res, ProbeType type, ProbeResult result) {
        if (type != null) {
            lastSuccess.get(type).set(result.passed() ? 1 : 0);
        }
        res.status(Status.create(result.status()))
                .header(HeaderValues.CONTENT_TYPE_JSON)
                .header(HeaderNames.CACHE_CONTROL, "no-store")
                .send(Json.bytes(result.body()));
    }
}
