package com.example.payments.observability;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.logging.Filter;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.example.payments.authentication.Caller;
import com.example.payments.http.ProblemDirectHandler;
import com.example.payments.http.RequestIds;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.accesslog.AccessLogContext;
import io.helidon.webserver.accesslog.AccessLogEntry;
import io.helidon.webserver.accesslog.AccessLogFeature;

/**
 * The business listener's access log, written by Helidon's access-log feature through java.util.logging (so in the
 * configured log format, text or JSON, through the same card-data masking handlers as every other line): one line per
 * request, logger {@value #LOGGER}, as {@code key=value} fields:
 * <pre>
 * method=POST route=/v1/authorizations status=201 duration_ms=12.4 request_id=4bf9...4736 merchant=m_123
 * </pre>
 * The route is the matched route template ({@code /v1/authorizations/{id}}), {@code unmatched} for no route, never
 * the path the client sent (it may hold a card number); a method outside the HTTP standard ones is {@code other};
 * the merchant is the authenticated caller's, {@code -} before authentication. Never a body, a header, a query, a
 * card number or a credential. A request that never reached routing (its request line or header section could not be
 * read) gets the same line from the listener's direct handler ({@link #unrouted}): route {@code unmatched},
 * {@code duration_ms=0.0}, merchant {@code -}.
 */
public final class AccessLog {

    /** The logger the lines go to: Helidon's access-log logger name and the business socket's. */
    public static final String LOGGER = AccessLogFeature.DEFAULT_LOGGER_NAME + "." + WebServer.DEFAULT_SOCKET_NAME;

    private static final Set<String> KNOWN_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
                                                            "OPTIONS", "TRACE", "CONNECT");
    // Every line is built by the entries below, so the sampling filter can read what it needs from the line itself.
    private static final Pattern STATUS = Pattern.compile(" status=(\\d{3}) ");
    private static final Pattern REQUEST_ID = Pattern.compile(" request_id=([0-9a-f]{32}) ");

    // JUL holds loggers weakly: without this reference the sampling filter could be collected with its logger.
    private static final Logger ACCESS_LOGGER = Logger.getLogger(LOGGER);

    private AccessLog() {
    }

    /**
     * The access-log feature of the business listener, and the sampling filter on its logger.
     *
     * @param settings    {@code access-log.*}
     * @param quietRoutes route templates never logged, e.g. {@code /ping}: the loopback prober calls it twice a
     *                    second, and the request metrics count it
     * @return the feature; a disabled one when {@code access-log.enabled} is {@code false}
     */
    public static AccessLogFeature feature(AccessLogSettings settings, Set<String> quietRoutes) {
        ACCESS_LOGGER.setFilter(filter(settings.sampleRatio(), quietRoutes));
        return AccessLogFeature.builder()
                .enabled(settings.enabled())
                .sockets(Set.of(WebServer.DEFAULT_SOCKET_NAME))
                .entries(entries())
                .build();
    }

    /**
     * The access-log line of an answer written before routing, in the same fields and through the same logger (and
     * sampling filter) as every other line.
     *
     * @param settings {@code access-log.*}: nothing is written when {@code access-log.enabled} is {@code false}
     * @return what the business listener's direct handler tells of such an answer
     */
    public static ProblemDirectHandler.Unrouted unrouted(AccessLogSettings settings) {
        if (!settings.enabled()) {
            return (method, status, requestId) -> { };
        }
        return (method, status, requestId) -> ACCESS_LOGGER.info("method=" + method(method) + " route=unmatched status="
                + status + " duration_ms=0.0 request_id=" + requestId + " merchant=" + AccessLogEntry.NOT_AVAILABLE);
    }

    static List<AccessLogEntry> entries() {
        return List.of(
                field("method", AccessLog::method),
                field("route", ctx -> ctx.serverRequest().matchingPattern().orElse("unmatched")),
                field("status", ctx -> String.valueOf(ctx.serverResponse().status().code())),
                field("duration_ms", ctx -> String.format(Locale.ROOT, "%.1f",
                        (ctx.responseNanoTime() - ctx.requestNanoTime()) / (double) TimeUnit.MILLISECONDS.toNanos(1))),
                field("request_id", ctx -> ctx.serverResponse().headers().first(RequestIds.X_REQUEST_ID)
                        .orElse(AccessLogEntry.NOT_AVAILABLE)),
                field("merchant", ctx -> ctx.serverRequest().context().get(Caller.class).map(Caller::merchantId)
                        .orElse(AccessLogEntry.NOT_AVAILABLE)));
    }

    static Filter filter(double ratio, Set<String> quietRoutes) {
        Filter sampled = sampling(ratio);
        return (LogRecord record) -> {
            String line = record.getMessage();
            for (String route : quietRoutes) {
                if (line.contains(" route=" + route + " ")) {
                    return false;
                }
            }
            return ratio >= 1.0 || sampled.isLoggable(record);
        };
    }

    /**
     * Keeps every 5xx line and, of the others, those whose request id falls in the sampled share: the id's last 16 hex
     * digits read as a number below {@code ratio} of their range (the rule of OpenTelemetry's trace-id ratio sampler).
     *
     * @param ratio share kept, {@code 0.0} to {@code 1.0}
     * @return the filter
     */
    static Filter sampling(double ratio) {
        return (LogRecord record) -> {
            String line = " " + record.getMessage() + " ";
            Matcher status = STATUS.matcher(line);
            if (status.find() && status.group(1).startsWith("5")) {
                return true;
            }
            Matcher id = REQUEST_ID.matcher(line);
            return id.find() && sampled(id.group(1), ratio);
        };
    }

    static boolean sampled(String requestId, double ratio) {
        long bound = ratio >= 1.0 ? Long.MAX_VALUE : (long) (ratio * Long.MAX_VALUE);
        return Math.abs(Long.parseUnsignedLong(requestId.substring(16), 16)) < bound;
    }

    private static String method(AccessLogContext ctx) {
        return method(ctx.serverRequest().prologue().method().text());
    }

    private static String method(String method) {
        return KNOWN_METHODS.contains(method) ? method : "other";
    }

    private static AccessLogEntry field(String name, java.util.function.Function<AccessLogContext, String> value) {
        return ctx -> name + "=" + value.apply(ctx);
    }
}
