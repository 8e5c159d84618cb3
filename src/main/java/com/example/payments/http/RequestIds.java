package com.example.payments.http;

import java.nio.CharBuffer;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.example.payments.carddata.PanDetector;

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
 * holds a card number ({@link PanDetector}, hex letters read as plain letters): its digits would reach every log
 * line of the request.
 */
public final class RequestIds {

    /** The response header that carries the request id. */
    public static final HeaderName X_REQUEST_ID = HeaderNames.create("X-Request-Id");
    /** W3C Trace Context request header. */
    public static final HeaderName TRACEPARENT = HeaderNames.create("traceparent");
    /** W3C Trace Context request header: vendors' entries that go with the trace. */
    public static final HeaderName TRACESTATE = HeaderNames.create("tracestate");
    /** Key of the request id in Helidon's MDC ({@code %X{requestId}} in a log format). */
    public static final String MDC_KEY = "requestId";
    /** MDC key of the request span's trace id ({@code trace.id} in a JSON log line), while tracing. */
    public static final String MDC_TRACE_ID = "trace.id";
    /** MDC key of the request span's id ({@code span.id} in a JSON log line), while tracing. */
    public static final String MDC_SPAN_ID = "span.id";

    // version "-" trace-id "-" parent-id "-" trace-flags, then (versions after 00 only) "-" and more fields.
    private static final Pattern TRACEPARENT_FORMAT =
            Pattern.compile("([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?");
    private static final String ZERO_TRACE_ID = "0".repeat(32);
    private static final String ZERO_PARENT_ID = "0".repeat(16);
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
        return traceparent(headers).flatMap(RequestIds::traceId).orElseGet(RequestIds::fresh);
    }

    /**
     * The request's {@code traceparent} header, when it is valid and sent once.
     *
     * @param headers the request's headers
     * @return the header value without surrounding whitespace, or empty
     */
    public static Optional<String> traceparent(Headers headers) {
        if (!headers.contains(TRACEPARENT)) {
            return Optional.empty();
        }
        List<String> values = headers.get(TRACEPARENT).allValues();
        return values.size() == 1 && traceId(values.getFirst()).isPresent()
                ? Optional.of(values.getFirst().strip()) : Optional.empty();
    }

    /**
     * The trace id of a {@code traceparent} header value.
     *
     * @param traceparent the header value, e.g. {@code 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01}
     * @return the trace id, or empty when the value is not valid
     */
    public static Optional<String> traceId(String traceparent) {
        Matcher parts = TRACEPARENT_FORMAT.matcher(traceparent.strip());
        if (!parts.matches()) {
            return Optional.empty();
        }
        String version = parts.group(1);
        boolean valid = !version.equals("ff")
                        && !(version.equals("00") && parts.group(5) != null)
                        && !parts.group(2).equals(ZERO_TRACE_ID)
                        && !parts.group(3).equals(ZERO_PARENT_ID);
        boolean cardFree = carriesNoCardNumber(parts.group(2)) && carriesNoCardNumber(parts.group(3));
        return valid && cardFree ? Optional.of(parts.group(2)) : Optional.empty();
    }

    // A caller's id goes into every log line, the X-Request-Id header, problem bodies and exported spans, so one whose
    // digits hold a card number is not taken up (the request is treated as untraced and gets a fresh id). Judged with
    // the hex letters as plain letters: the log masking leaves digits that touch a hex letter alone, so a PAN written
    // next to one ("4111111111111111aaaa...") would pass it. About one random traceparent in four hundred is refused
    // this way (a trace id in 460, measured over a million).
    private static boolean carriesNoCardNumber(String text) {
        char[] chars = text.toCharArray();
        for (int i = 0; i < chars.length; i++) {
            char c = chars[i];
            if (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
                chars[i] = 'x';
            }
        }
        return !PanDetector.containsPan(CharBuffer.wrap(chars));
    }

    /**
     * The request's {@code tracestate} (W3C Trace Context level 1, section 3.3: vendors' entries, passed on with the
     * trace), when it holds no card number, judged as the ids of a {@code traceparent} are: its entries go into the
     * spans this service exports and on to the issuer. Several {@code tracestate} fields are one list, joined by
     * commas.
     *
     * @param headers the request's headers
     * @return the header's value, or empty when absent or holding a card number
     */
    public static Optional<String> tracestate(Headers headers) {
        if (!headers.contains(TRACESTATE)) {
            return Optional.empty();
        }
        String value = String.join(",", headers.get(TRACESTATE).allValues());
        return carriesNoCardNumber(value) ? Optional.of(value) : Optional.empty();
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
