package com.example.payments.http;

import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Headers;
import io.helidon.logging.common.HelidonMdc;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.context.Context;

/**
 * Request ids: the trace id of the request's span when tracing is on, else the W3C Trace Context trace id of the
 * request when it came with a valid {@code traceparent} header (the same value when both exist), else a fresh random one (the same shape: 32 lowercase hex digits, not all zero) otherwise. Sent back as
 * {@code X-Request-Id}, written into every problem body as {@code requestId} and into every log line written while
 * the request is served (the {@value #MDC_KEY} MDC entry that {@code logging.properties} formats), all by
 * {@link #filter()}.
 *
 * <p>An invalid {@code traceparent} (W3C Trace Context level 1, section 3.2: wrong length or case, version
 * {@code ff}, an all-zero trace or parent id, extra fields on version {@code 00}, or the header sent twice) is
 * ignored, as the specification asks: the request gets a fresh id, never a 400. So is one whose trace or parent id
 * holds a card number ({@link TraceContext}).
 */
public final class RequestIds {

    /** The response header that carries the request id. */
    public static final HeaderName X_REQUEST_ID = HeaderNames.create("X-Request-Id");
    /** Key of the request id in Helidon's MDC ({@code %X{requestId}} in a log format). */
    public static final String MDC_KEY = "requestId";
    /** MDC key of the request span's trace id ({@code trace.id} in a JSON log line), while tracing. */
    public static final String MDC_TRACE_ID = "trace.id";
    /** MDC key of the request span's id ({@code span.id} in a JSON log line), while tracing. */
    public static final String MDC_SPAN_ID = "span.id";

    private static final HexFormat HEX = HexFormat.of();
    // Below the shortest card number (13 digits), with a digit to spare.
    private static final int MAX_DIGIT_RUN = 12;

    private RequestIds() {
    }

    /**
     * The request id filter, first on both listeners (after the tracing filter on the business one): gives each
     * request its id (the request span's trace id while tracing, else {@link #of}), sends it back as
     * {@code X-Request-Id} on every response (including the early answers of the filters after it: 401, 404, 405,
     * 415, 429, 503), and puts it in the MDC for every log line written while the request is served on this thread,
     * with the span's trace and span ids while a span of this service is current.
     *
     * @return the filter
     */
    public static Filter filter() {
        return RequestIds::identify;
    }

    private static void identify(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        // The request span's trace id: the traceparent's when one came in, the one the tracer started otherwise.
        SpanContext span = Span.current().getSpanContext();
        String id = span.isValid() ? span.getTraceId() : of(req.headers());
        res.header(X_REQUEST_ID, id);
        req.context().register(MDC_KEY, id);
        HelidonMdc.set(MDC_KEY, id);
        // A span of this service (tracing on): its ids on every log line written while serving the request.
        boolean traced = span.isValid() && !span.isRemote();
        if (traced) {
            HelidonMdc.set(MDC_TRACE_ID, span.getTraceId());
            HelidonMdc.set(MDC_SPAN_ID, span.getSpanId());
        }
        try {
            chain.proceed();
        } finally {
            HelidonMdc.remove(MDC_KEY);
            if (traced) {
                HelidonMdc.remove(MDC_TRACE_ID);
                HelidonMdc.remove(MDC_SPAN_ID);
            }
        }
    }

    /**
     * The request id of a request.
     *
     * @param headers the request's headers
     * @return the trace id of a valid {@code traceparent}, else a fresh id; 32 lowercase hex digits either way
     */
    public static String of(Headers headers) {
        return TraceContext.traceparent(headers).flatMap(TraceContext::traceId).orElseGet(RequestIds::fresh);
    }

    /**
     * A fresh request id: 128 random bits as 32 lowercase hex digits, never all zero (a valid W3C trace id), never
     * with a run of digits that could pass for a card number ({@link #usable}).
     *
     * @return the id
     */
    public static String fresh() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String id;
        do {
            id = HEX.toHexDigits(random.nextLong()) + HEX.toHexDigits(random.nextLong());
        } while (!usable(id));
        return id;
    }

    /**
     * Whether a freshly drawn hex id may be used: not all zero, and no run of {@value #MAX_DIGIT_RUN} or more decimal
     * digits. About one random id in thirteen has such a run, and one in ten of those is Luhn-valid: this service's
     * log masking leaves digits that touch hex letters alone, but a log pipeline's card-number scanner may not, and
     * would mask or flag the id.
     *
     * @param id lowercase hex digits
     * @return {@code true} when usable
     */
    public static boolean usable(String id) {
        int run = 0;
        boolean nonZero = false;
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            nonZero |= c != '0';
            run = c >= '0' && c <= '9' ? run + 1 : 0;
            if (run >= MAX_DIGIT_RUN) {
                return false;
            }
        }
        return nonZero;
    }

    /**
     * The id of the request this thread is serving.
     *
     * @return the id, or empty outside a request
     */
    public static Optional<String> current() {
        return HelidonMdc.get(MDC_KEY).filter(id -> !id.isEmpty());
    }

    /**
     * Wraps work handed to another thread so that its log lines carry the request id of the caller (and, when the
     * request is traced, its {@code trace.id} and {@code span.id}), and its spans (and the {@code traceparent} it
     * sends) the caller's trace context.
     *
     * @param call the work
     * @param <T>  its result
     * @return the same work, run under the calling thread's request id and trace context
     */
    public static <T> Callable<T> propagate(Callable<T> call) {
        Callable<T> traced = Context.current().wrap(call);
        Optional<String> id = current();
        if (id.isEmpty()) {
            return traced;
        }
        Optional<String> traceId = HelidonMdc.get(MDC_TRACE_ID);
        Optional<String> spanId = HelidonMdc.get(MDC_SPAN_ID);
        return () -> {
            // What the running thread had is put back after: work run in place keeps its own request's ids.
            Map<String, Optional<String>> before = Map.of(MDC_KEY, HelidonMdc.get(MDC_KEY),
                                                          MDC_TRACE_ID, HelidonMdc.get(MDC_TRACE_ID),
                                                          MDC_SPAN_ID, HelidonMdc.get(MDC_SPAN_ID));
            HelidonMdc.set(MDC_KEY, id.get());
            traceId.ifPresentOrElse(value -> HelidonMdc.set(MDC_TRACE_ID, value),
                                    () -> HelidonMdc.remove(MDC_TRACE_ID));
            spanId.ifPresentOrElse(value -> HelidonMdc.set(MDC_SPAN_ID, value), () -> HelidonMdc.remove(MDC_SPAN_ID));
            try {
                return traced.call();
            } finally {
                before.forEach((key, value) -> value.ifPresentOrElse(v -> HelidonMdc.set(key, v),
                                                                      () -> HelidonMdc.remove(key)));
            }
        };
    }
}
