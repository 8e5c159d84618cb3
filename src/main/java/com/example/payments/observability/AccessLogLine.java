package com.example.payments.observability;

import java.util.Set;

import org.apache.logging.log4j.message.MapMessage;

/**
 * One access-log line as structured fields, each a field of the JSON line ({@code log4j2.xml}'s template flattens the
 * map): {@code http.request.method}, {@code http.route} (the route template, never the raw path),
 * {@code http.response.status_code}, {@code event.duration} (nanoseconds, the ECS unit) and {@code merchant.id}. Its
 * message is the short {@code POST /v1/authorizations 201}.
 */
final class AccessLogLine extends MapMessage<AccessLogLine, Object> {

    private static final long serialVersionUID = 1L;
    private static final Set<String> KNOWN_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
                                                            "OPTIONS", "TRACE", "CONNECT");

    private final String method;
    private final String route;
    private final int status;

    /**
     * @param method        the request method; {@code other} outside the HTTP standard ones
     * @param route         the matched route template, or {@code unmatched}
     * @param status        the response status code
     * @param durationNanos from the request's arrival to the end of its handling, in nanoseconds
     * @param merchant      the authenticated caller's merchant id, or {@code -}
     */
    AccessLogLine(String method, String route, int status, long durationNanos, String merchant) {
        super(8);
        String known = KNOWN_METHODS.contains(method) ? method : "other";
        with("http.request.method", known);
        with("http.route", route);
        with("http.response.status_code", status);
        with("event.duration", durationNanos);
        with("merchant.id", merchant);
        this.method = known;
        this.route = route;
        this.status = status;
    }

    // The summary is built where the line is written (Log4j's thread appends it to the line), not on the request's.
    @Override
    public String getFormattedMessage() {
        StringBuilder summary = new StringBuilder(64);
        formatTo(summary);
        return summary.toString();
    }

    @Override
    public void formatTo(StringBuilder buffer) {
        buffer.append(method).append(' ').append(route).append(' ').append(status);
    }
}
