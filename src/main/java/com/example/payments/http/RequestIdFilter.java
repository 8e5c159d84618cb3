package com.example.payments.http;

import io.helidon.logging.common.HelidonMdc;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;

/**
 * The first filter of both listeners (after the tracing filter on the business one): gives each request its id ({@link RequestIds#of}), sends it back as
 * {@code X-Request-Id} on every response (including the early answers of the filters after it: 401, 404, 405, 415,
 * 429, 503), and puts it in the MDC for every log line written while the request is served on this thread.
 */
public final class RequestIdFilter implements Filter {

    /** MDC key of the request span's trace id ({@code trace.id} in a JSON log line), while tracing. */
    public static final String TRACE_ID = "trace.id";
    /** MDC key of the request span's id ({@code span.id} in a JSON log line), while tracing. */
    public static final String SPAN_ID = "span.id";

    private RequestIdFilter() {
    }

    /**
     * Creates the filter.
     *
     * @return the filter
     */
    public static RequestIdFilter create() {
        return new RequestIdFilter();
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        // The request span's trace id: the traceparent's when one came in, the one the tracer started otherwise.
        SpanContext span = Span.current().getSpanContext();
        String id = span.isValid() ? span.getTraceId() : RequestIds.of(req.headers());
        res.header(RequestIds.X_REQUEST_ID, id);
        req.context().register(RequestIds.MDC_KEY, id);
        HelidonMdc.set(RequestIds.MDC_KEY, id);
        // A span of this service (tracing on): its ids on every log line written while serving the request.
        boolean traced = span.isValid() && !span.isRemote();
        if (traced) {
            HelidonMdc.set(TRACE_ID, span.getTraceId());
            HelidonMdc.set(SPAN_ID, span.getSpanId());
        }
        try {
            chain.proceed();
        } finally {
            HelidonMdc.remove(RequestIds.MDC_KEY);
            if (traced) {
                HelidonMdc.remove(TRACE_ID);
                HelidonMdc.remove(SPAN_ID);
            }
        }
    }
}
