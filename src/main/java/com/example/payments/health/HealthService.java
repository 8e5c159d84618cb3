package com.example.payments.health;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import com.example.payments.http.Json;
import com.example.payments.http.ResponseBodies;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Method;
import io.helidon.http.PathMatchers;
import io.helidon.http.Status;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * The probe routes of the health listener (port 8081, Kubernetes port name {@code health}):
 * {@code GET /health/live}, {@code /health/ready}, {@code /health/startup} and the legacy alias {@code /health}, each
 * also answering {@code HEAD} with the same status and headers and no body (RFC 9110 section 9.3.2).
 *
 * <p>Bodies are JSON with {@code Cache-Control: no-store}; statuses are 200 or 503 as {@link Probes} defines.
 * {@code /health} answers exactly like readiness but never feeds the circuit breaker: an alias inherits every side
 * effect of its target, and a monitor polling it every second beside the kubelet would multiply the trip rate.
 *
 * <p>Exports {@code health_probe_success{probe}} (0/1, the last answer of each kubelet path; not
 * {@code probe_success}, the blackbox exporter's name, which common alerts read as "target down"),
 * {@code readiness_consecutive_failures} and {@code circuit_breaker_threshold}.
 */
public final class HealthService implements HttpService {

    /** The paths this service serves, with {@code GET} and {@code HEAD}. */
    public static final List<String> PATHS = List.of("/health/live", "/health/ready", "/health/startup", "/health");

    /** The probe kinds, as the {@code probe} tag of {@code health_probe_success}. */
    enum ProbeType { LIVENESS, READINESS, STARTUP }

    private final HealthState state;
    private final DependencyChecks dependencies;
    private final List<CapacityCheck> capacity;
    private final WorkerWatchdog watchdog;
    private final int breakerThreshold;
    private final Duration progressWindow;
    private final Map<ProbeType, AtomicInteger> lastSuccess = new EnumMap<>(ProbeType.class);

    private HealthService(HealthState state, DependencyChecks dependencies, List<CapacityCheck> capacity,
                          WorkerWatchdog watchdog, HealthSettings settings, MeterRegistry meters) {
        this.state = state;
        this.dependencies = dependencies;
        this.capacity = List.copyOf(capacity);
        this.watchdog = watchdog;
        this.breakerThreshold = settings.breakerThreshold();
        this.progressWindow = settings.progressWindow();
        for (ProbeType type : ProbeType.values()) {
            AtomicInteger value = new AtomicInteger();
            lastSuccess.put(type, value);
            String probe = type.name().toLowerCase(java.util.Locale.ROOT);
            meters.getOrCreate(Gauge.builder("health_probe_success", value, AtomicInteger::get)
                                       .tags(List.of(Tag.create("probe", probe)))
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
     * @param capacity         local resources that can fill up (readiness names them, the breaker ignores them)
     * @param watchdog         worker heartbeats for liveness
     * @param settings         {@code health.circuit-breaker.threshold} (0 disables) and
     *                         {@code health.liveness.progress-window}
     * @param meters           registry served on {@code /metrics}
     * @return the service
     */
    public static HealthService create(HealthState state, DependencyChecks dependencies, List<CapacityCheck> capacity,
                                       WorkerWatchdog watchdog, HealthSettings settings, MeterRegistry meters) {
        return new HealthService(state, dependencies, capacity, watchdog, settings, meters);
    }

    @Override
    public void routing(HttpRules rules) {
        getAndHead(rules, "/health/live", (req, res) -> send(req, res, ProbeType.LIVENESS, liveness()));
        getAndHead(rules, "/health/ready", (req, res) -> send(req, res, ProbeType.READINESS,
                                                               countBreaker(readiness())));
        getAndHead(rules, "/health/startup", (req, res) -> send(req, res, ProbeType.STARTUP,
                                                                 Probes.startup(state.startupComplete())));
        getAndHead(rules, "/health", (req, res) -> send(req, res, null, readiness()));
    }

    private static void getAndHead(HttpRules rules, String path, Handler handler) {
        rules.route(Method.predicate(Method.GET, Method.HEAD), PathMatchers.exact(path), handler);
    }

    ProbeResult liveness() {
        boolean draining = state.draining();
        return Probes.liveness(draining, breakerThreshold, state.readinessFailures(), state.port(),
                               state.progressedWithin(progressWindow), draining ? List.of() : watchdog.errors());
    }

    ProbeResult readiness() {
        return Probes.readiness(state.draining(), state.startupComplete(), state.port(),
                                state.progressedWithin(progressWindow), full(), dependencies::failures);
    }

    private List<String> full() {
        return capacity.stream().flatMap(check -> check.full().stream()).toList();
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

    private void send(ServerRequest req, ServerResponse res, ProbeType type, ProbeResult result) {
        if (type != null) {
            lastSuccess.get(type).set(result.passed() ? 1 : 0);
        }
        res.status(Status.create(result.status()))
                .header(HeaderValues.CONTENT_TYPE_JSON)
                .header(HeaderNames.CACHE_CONTROL, "no-store");
        ResponseBodies.send(req, res, Json.bytes(result.body()));
    }
}
