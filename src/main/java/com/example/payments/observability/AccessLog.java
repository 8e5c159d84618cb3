package com.example.payments.observability;

import java.util.Set;

import com.example.payments.authentication.Caller;
import com.example.payments.http.ProblemDirectHandler;
import com.example.payments.http.RequestIds;

import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import org.apache.logging.log4j.CloseableThreadContext;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The business listener's access log: one line per request, logger {@value #LOGGER}, at INFO, as structured fields
 * ({@link AccessLogLine}): {@code http.request.method}, {@code http.route}, {@code http.response.status_code},
 * {@code event.duration} (nanoseconds) and {@code merchant.id}, with the request id ({@code http.request.id}) and,
 * when tracing, {@code trace.id} and {@code span.id} from the request's MDC like every line written while serving it.
 * In JSON each is a field of the line; in text they follow the message. For example:
 * <pre>
 * {"@timestamp":"2026-12-02T01:04:14.123Z","log.level":"INFO","log.logger":"...AccessLog",
 *  "message":"POST /v1/authorizations 201","http.request.id":"4bf9...4736","http.request.method":"POST",
 *  "http.route":"/v1/authorizations","http.response.status_code":201,"event.duration":12400000,
 *  "merchant.id":"m_123",...}
 * </pre>
 * The route is the matched route template ({@code /v1/authorizations/{id}}), {@code unmatched} for no route, never
 * the path the client sent (it may hold a card number); a method outside the HTTP standard ones is {@code other};
 * the merchant is the authenticated caller's, {@code -} before authentication. Never a body, a header, a query, a
 * card number or a credential. A request that never reached routing (its request line or header section could not be
 * read) gets the same line from the listener's direct handler ({@link #unrouted}): route {@code unmatched}, duration
 * 0, merchant {@code -}.
 *
 * <p>Every request is logged by default ({@code access-log.sample-ratio: 1.0}, an audit trail of every request that
 * touches card data); a lower ratio keeps that share of requests, chosen by request id, and every 5xx.
 */
public final class AccessLog implements Filter {

    /** The logger the lines go to. */
    public static final String LOGGER = "com.example.payments.observability.AccessLog";

    private static final Logger ACCESS = LogManager.getLogger(LOGGER);
    private static final String NONE = "-";

    private final double ratio;
    private final Set<String> quietRoutes;

    private AccessLog(double ratio, Set<String> quietRoutes) {
        this.ratio = ratio;
        this.quietRoutes = quietRoutes;
    }

    /**
     * The access-log filter of the business routing. Register it after the filter that sets the request id in the MDC,
     * so that its line carries it.
     *
     * @param settings    {@code access-log.*}
     * @param quietRoutes route templates never logged, e.g. {@code /ping}: the loopback prober calls it twice a
     *                    second, and the request metrics count it
     * @return the filter; one that logs nothing when {@code access-log.enabled} is {@code false}
     */
    public static Filter filter(AccessLogSettings settings, Set<String> quietRoutes) {
        if (!settings.enabled()) {
            return (chain, req, res) -> chain.proceed();
        }
        return new AccessLog(settings.sampleRatio(), Set.copyOf(quietRoutes));
    }

    /**
     * The access-log line of an answer written before routing, in the same fields and through the same logger (and
     * sampling) as every other line.
     *
     * @param settings {@code access-log.*}: nothing is written when {@code access-log.enabled} is {@code false}
     * @return what the business listener's direct handler tells of such an answer
     */
    public static ProblemDirectHandler.Unrouted unrouted(AccessLogSettings settings) {
        if (!settings.enabled()) {
            return (method, status, requestId) -> { };
        }
        AccessLog log = new AccessLog(settings.sampleRatio(), Set.of());
        return (method, status, requestId) -> {
            if (log.kept(status, requestId)) {
                try (CloseableThreadContext.Instance ignored = CloseableThreadContext.put(RequestIds.MDC_KEY,
                                                                                          requestId)) {
                    ACCESS.info(new AccessLogLine(method, "unmatched", status, 0, NONE));
                }
            }
        };
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        long start = System.nanoTime();
        try {
            chain.proceed();
        } finally {
            String route = req.matchingPattern().orElse("unmatched");
            int status = res.status().code();
            if (!quietRoutes.contains(route)
                && kept(status, res.headers().first(RequestIds.X_REQUEST_ID).orElse(null))) {
                ACCESS.info(new AccessLogLine(req.prologue().method().text(), route, status,
                                              System.nanoTime() - start,
                                              req.context().get(Caller.class).map(Caller::merchantId).orElse(NONE)));
            }
        }
    }

    // Every 5xx, and of the others those whose request id falls in the sampled share.
    private boolean kept(int status, String requestId) {
        return ratio >= 1.0 || status >= 500 || requestId != null && sampled(requestId, ratio);
    }

    /**
     * Whether a request id falls in the sampled share: its last 16 hex digits read as a number below {@code ratio} of
     * their range (the rule of OpenTelemetry's trace-id ratio sampler).
     *
     * @param requestId 32 lower-case hex digits
     * @param ratio     share kept, {@code 0.0} to {@code 1.0}
     * @return whether it is kept
     */
    static boolean sampled(String requestId, double ratio) {
        if (requestId.length() != 32) {
            return false;
        }
        long bound = ratio >= 1.0 ? Long.MAX_VALUE : (long) (ratio * Long.MAX_VALUE);
        try {
            return Math.abs(Long.parseUnsignedLong(requestId.substring(16), 16)) < bound;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
