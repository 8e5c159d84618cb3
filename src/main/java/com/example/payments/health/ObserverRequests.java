package com.example.payments.health;

import java.util.List;
import java.util.Locale;
import java.util.Set;

import com.example.payments.http.Problem;
import com.example.payments.http.ProblemResponses;

import io.helidon.common.media.type.MediaType;
import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * The errors of {@code GET} and {@code HEAD} on {@code /metrics} and {@code /openapi}, answered as RFC 9457 problems
 * and alike for both methods, before Helidon's observers (which answer them with empty bodies, and whose {@code HEAD}
 * stand-ins did not look at the query):
 * <ul>
 *     <li>a query parameter the endpoint does not take, one without a value ({@code ?scope}, {@code ?name=}), or a
 *     value it does not know: 400 {@code bad-request} ({@code /metrics}: {@code scope} of {@code application},
 *     {@code base}, {@code vendor}, and {@code name}, each as often as wanted; {@code /openapi}: {@code format} of
 *     {@code json} or {@code yaml}, once; it wins over {@code Accept}); the parameter's text is never repeated;</li>
 *     <li>an {@code Accept} that admits none of the endpoint's media types: 406 {@code not-acceptable} naming the
 *     header ({@code /metrics}: text, OpenMetrics, JSON; {@code /openapi}: the OpenAPI media type, YAML, JSON);</li>
 *     <li>{@code /metrics} with a selection no meter matches: 404 {@code not-found} (Helidon: an empty 404);</li>
 *     <li>{@code /metrics/} and {@code /metrics/{scope}}, which Helidon's observer serves too: 404 {@code not-found}
 *     ({@code ?scope=} selects a scope on {@code /metrics} itself).</li>
 * </ul>
 * Every other request goes on to the observer ({@code GET}) or its {@code HEAD} stand-in unchanged.
 */
public final class ObserverRequests implements Filter {

    /** The path of the OpenAPI document on the health listener. */
    public static final String OPENAPI_PATH = "/openapi";

    private static final Set<String> SCOPES = Set.of("application", "base", "vendor");
    private static final Set<String> FORMATS = Set.of("json", "yaml");
    /**
     * The media types {@code GET /openapi} answers, in the order Helidon's OpenAPI feature prefers them when
     * {@code Accept} admits several: the OpenAPI YAML type, the YAML types, the OpenAPI JSON type and JSON.
     */
    public static final List<MediaType> OPENAPI_TYPES = List.of(MediaTypes.APPLICATION_OPENAPI_YAML,
            MediaTypes.APPLICATION_X_YAML, MediaTypes.APPLICATION_YAML, MediaTypes.APPLICATION_OPENAPI_JSON,
            MediaTypes.APPLICATION_JSON, MediaTypes.TEXT_X_YAML, MediaTypes.TEXT_YAML);

    private final MetricsHead metrics;

    private ObserverRequests(MetricsHead metrics) {
        this.metrics = metrics;
    }

    /**
     * Creates the filter.
     *
     * @param metrics renders what {@code GET /metrics} would answer, to tell an empty selection (404)
     * @return the filter
     */
    public static ObserverRequests create(MetricsHead metrics) {
        return new ObserverRequests(metrics);
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        Method method = req.prologue().method();
        if (!method.equals(Method.GET) && !method.equals(Method.HEAD)) {
            chain.proceed();
            return;
        }
        String path = req.path().path();
        Problem problem = switch (path) {
            case MetricsHead.PATH -> metricsProblem(req);
            case OPENAPI_PATH -> openApiProblem(req);
            // Helidon's observer also serves /metrics/ and /metrics/{scope}, which HEAD and these checks do not know:
            // one path, as the probes and Prometheus use it.
            default -> path.startsWith(MetricsHead.PATH + "/")
                    ? ProblemResponses.notFound("No such resource on this port; the metrics are at /metrics "
                                                + "(?scope=application selects a scope).")
                    : null;
        };
        if (problem == null) {
            chain.proceed();
            return;
        }
        ProblemResponses.send(req, res, problem);
    }

    // A parameter without a value (?scope, ?a=1&scope) or with an empty one: Helidon's parsed query drops the first
    // kind when the name also has a value, so the raw query is read.
    private static boolean anyWithoutValue(RoutingRequest req) {
        String raw = req.query().rawValue();
        if (raw == null || raw.isEmpty()) {
            return false;
        }
        for (String part : raw.split("&", -1)) {
            int equals = part.indexOf('=');
            if (equals <= 0 || equals == part.length() - 1) {
                return true;
            }
        }
        return false;
    }

    private Problem metricsProblem(RoutingRequest req) {
        if (anyWithoutValue(req)) {
            return badQuery("scope (application, base or vendor) and name, each with a value");
        }
        for (String name : req.query().names()) {
            // Every value is non-empty (anyWithoutValue).
            boolean known = name.equals(MetricsHead.NAME)
                            || name.equals(MetricsHead.SCOPE) && SCOPES.containsAll(req.query().all(name));
            if (!known) {
                return badQuery("scope (application, base or vendor) and name");
            }
        }
        var type = MetricsHead.mediaType(req);
        if (type.isEmpty()) {
            return notAcceptable("text/plain, application/openmetrics-text or application/json");
        }
        List<String> scopes = req.query().all(MetricsHead.SCOPE, List::of);
        List<String> names = req.query().all(MetricsHead.NAME, List::of);
        if ((!scopes.isEmpty() || !names.isEmpty()) && metrics.exposition(type.get(), scopes, names).isEmpty()) {
            return ProblemResponses.notFound("No meter matches the scope and name asked for.");
        }
        return null;
    }

    private static Problem openApiProblem(RoutingRequest req) {
        if (anyWithoutValue(req)) {
            return badQuery("format (json or yaml), once, with a value");
        }
        for (String name : req.query().names()) {
            List<String> values = req.query().all(name, List::of);
            boolean known = name.equals("format") && values.size() == 1
                            && FORMATS.contains(values.getFirst().toLowerCase(Locale.ROOT));
            if (!known) {
                return badQuery("format (json or yaml)");
            }
        }
        if (req.headers().contains(HeaderNames.ACCEPT)
            && req.headers().bestAccepted(OPENAPI_TYPES.toArray(MediaType[]::new)).isEmpty()) {
            return notAcceptable("application/vnd.oai.openapi, application/vnd.oai.openapi+json, application/yaml, "
                                 + "text/yaml or application/json");
        }
        return null;
    }

    private static Problem badQuery(String allowed) {
        return Problem.of("bad-request", "Bad request", 400, "A query parameter or value this endpoint does not take; "
                                                             + "allowed: " + allowed + ".");
    }

    private static Problem notAcceptable(String types) {
        return Problem.of("not-acceptable", "Not acceptable", 406, "This endpoint answers " + types + ".")
                .withErrors(List.of(Problem.FieldError.header("Accept", "admits none of " + types)));
    }
}
