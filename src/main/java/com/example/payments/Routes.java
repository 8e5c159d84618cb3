package com.example.payments;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.example.payments.authentication.AuthenticationFilter;
import com.example.payments.authorization.AuthorizationService;
import com.example.payments.authorization.OperationService;
import com.example.payments.health.HealthService;
import com.example.payments.health.HealthState;
import com.example.payments.health.MetricsHead;
import com.example.payments.health.ObserverRequests;
import com.example.payments.http.ConnectionCloseFilter;
import com.example.payments.http.RequestDeadlines;
import com.example.payments.http.RequestIds;
import com.example.payments.http.RequestRulesFilter;
import com.example.payments.http.ResponseBodies;
import com.example.payments.lifecycle.InFlightCountingFilter;
import com.example.payments.observability.RequestMetricsFilter;
import com.example.payments.observability.TracingFilter;

import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.PathMatchers;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.HttpRouting;

/**
 * The routing of both listeners: which filters run in which order in front of which routes, and which methods each
 * path serves (any other: 405, or 501 for a method this service does not recognize). {@link Components} builds what
 * they route to; {@link Listeners} starts the servers with this routing.
 */
final class Routes {

    private static final byte[] PONG = "pong".getBytes(StandardCharsets.UTF_8);
    private static final List<Method> GET_HEAD = List.of(Method.GET, Method.HEAD);

    private Routes() {
    }

    /**
     * Routing of the business listener: {@code /ping} and the authorization API behind one ordered list of edge
     * filters, one per concern, each registered on one line below:
     * <ol>
     *     <li>tracing: the request's span (tracing on, never for {@code /ping});</li>
     *     <li>the request id: {@code X-Request-Id} and the log lines' MDC, before anything can answer;</li>
     *     <li>the access log: one line per answered request;</li>
     *     <li>{@code Connection: close}: the client asked, a body was left unread, or the process is draining;</li>
     *     <li>the in-flight count the drain waits on;</li>
     *     <li>request metrics;</li>
     *     <li>the body deadline (408);</li>
     *     <li>the request rules: target, header fields, method (400, 404, 405, 415, 417, 501);</li>
     *     <li>the startup gate (503 until started, but {@code /ping});</li>
     *     <li>authentication (401 on every path but {@code /ping}).</li>
     * </ol>
     *
     * @param routing        routing builder of the business server
     * @param state          health flags
     * @param inFlight       in-flight counter the drain waits on
     * @param meters         metrics registry
     * @param deadlines      the business listener's request deadlines
     * @param authentication the authentication filter
     * @param accessLog      the access log, one line per request once it is answered
     * @param authorizations the API
     * @param operations     captures and voids
     */
    static void business(HttpRouting.Builder routing, HealthState state, InFlightCountingFilter inFlight,
                         MeterRegistry meters, RequestDeadlines deadlines, AuthenticationFilter authentication,
                         Filter accessLog, AuthorizationService authorizations, OperationService operations) {
        Map<String, List<Method>> resources = businessResources();
        resources.put(Listeners.PING, GET_HEAD);
        routing.addFilter(TracingFilter.create(Set.of(Listeners.PING)))
                .addFilter(RequestIds.filter())
                .addFilter(accessLog)
                .addFilter(ConnectionCloseFilter.create(state::draining))
                .addFilter(inFlight)
                .addFilter(RequestMetricsFilter.create(meters))
                .addFilter(deadlines.bodyDeadlineFilter())
                .addFilter(RequestRulesFilter.create(resources))
                .addFilter(state.startupGate())
                .addFilter(authentication)
                // The cheapest possible proof of life for the loopback prober: touches nothing, needs no credentials.
                .route(Method.predicate(Method.GET, Method.HEAD), PathMatchers.exact(Listeners.PING),
                       (req, res) -> {
                           res.header(HeaderNames.CONTENT_TYPE, "text/plain; charset=UTF-8");
                           ResponseBodies.send(req, res, PONG);
                       })
                .register(authorizations)
                .register(operations);
    }

    /**
     * Every business path and its methods: authorizations, their captures and voids ({@code /ping} not included).
     *
     * @return a new mutable map, path to its methods, in registration order
     */
    static Map<String, List<Method>> businessResources() {
        Map<String, List<Method>> resources = new LinkedHashMap<>(AuthorizationService.RESOURCES);
        resources.putAll(OperationService.RESOURCES);
        return resources;
    }

    /**
     * Routing of the health listener: the probes and {@code HEAD /metrics} ({@code GET /metrics} comes from the
     * observe feature, {@code GET /openapi} from the OpenAPI feature), {@code GET} and {@code HEAD} only, behind the
     * request id, the {@code Connection: close} filter and the request rules, as on the business listener.
     *
     * @param routing routing builder of the health server
     * @param probes  the probe routes
     * @param meters  the registry {@code /metrics} serves
     * @param openApi the document {@code /openapi} serves
     */
    static void health(HttpRouting.Builder routing, HealthService probes, MeterRegistry meters,
                       OpenApiDocument openApi) {
        Map<String, List<Method>> resources = new LinkedHashMap<>();
        HealthService.PATHS.forEach(path -> resources.put(path, GET_HEAD));
        resources.put(MetricsHead.PATH, GET_HEAD);
        resources.put(Listeners.OPENAPI_PATH, GET_HEAD);
        MetricsHead metricsHead = MetricsHead.create(meters);
        routing.addFilter(RequestIds.filter())
                .addFilter(ConnectionCloseFilter.create(() -> false))
                .addFilter(RequestRulesFilter.create(resources))
                .addFilter(ObserverRequests.create(metricsHead))
                .register(probes)
                .head(MetricsHead.PATH, metricsHead)
                // GET /openapi comes from the OpenAPI feature, which has no HEAD: the headers of its answer.
                .head(Listeners.OPENAPI_PATH, openApi::head);
    }
}
