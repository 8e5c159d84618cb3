package com.example.payments.observability;

import java.util.List;
import java.util.Set;

import com.example.payments.authentication.Caller;
import com.example.payments.http.TraceContext;

import io.helidon.http.Headers;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;

/**
 * The business listener's outermost filter: continues the trace of an incoming W3C {@code traceparent} (one that
 * {@link TraceContext#traceparent} accepts; any other is ignored) and runs the request inside a {@code SERVER} span
 * named {@code <method> <route template>}, with the HTTP semantic-convention attributes {@code http.request.method},
 * {@code http.route} (the route template), {@code http.response.status_code} and {@code url.scheme}, and
 * {@code payments.merchant_id}: never the path ({@code url.path} is left out on purpose), the query, a header value
 * or the body, where a card number may be. A {@code 5xx} answer marks the span as an error.
 *
 * <p>With tracing off, the span is the incoming context itself (nothing recorded), so the issuer call still passes the
 * caller's {@code traceparent} on.
 */
public final class TracingFilter implements Filter {

    private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
    private static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
    private static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
    private static final AttributeKey<String> SCHEME = AttributeKey.stringKey("url.scheme");
    private static final Set<String> KNOWN_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
                                                            "OPTIONS", "TRACE", "CONNECT");
    private static final String TRACESTATE = TraceContext.TRACESTATE.defaultCase();
    private static final TextMapGetter<Headers> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Headers headers) {
            return List.of(TraceContext.TRACEPARENT.defaultCase(), TRACESTATE);
        }

        @Override
        public String get(Headers headers, String key) {
            if (headers == null) {
                return null;
            }
            if (TraceContext.TRACEPARENT.defaultCase().equalsIgnoreCase(key)) {
                return TraceContext.traceparent(headers).orElse(null);
            }
            return TRACESTATE.equalsIgnoreCase(key) ? TraceContext.tracestate(headers).orElse(null) : null;
        }
    };

    private final Set<String> quietPaths;

    private TracingFilter(Set<String> quietPaths) {
        this.quietPaths = Set.copyOf(quietPaths);
    }

    /**
     * Creates the filter; it uses the process's {@link Tracing#tracer()} at each request.
     *
     * @param quietPaths exact paths never traced, e.g. {@code /ping}: the loopback prober calls it twice a second
     * @return the filter
     */
    public static TracingFilter create(Set<String> quietPaths) {
        return new TracingFilter(quietPaths);
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (quietPaths.contains(req.path().path())) {
            chain.proceed();
            return;
        }
        Context parent = Tracing.propagators().getTextMapPropagator().extract(Context.root(), req.headers(), HEADERS);
        String method = req.prologue().method().text();
        method = KNOWN_METHODS.contains(method) ? method : "_OTHER";
        Span span = Tracing.tracer().spanBuilder(method)
                .setParent(parent)
                .setSpanKind(SpanKind.SERVER)
                .setAttribute(METHOD, method)
                .setAttribute(SCHEME, req.isSecure() ? "https" : "http")
                .startSpan();
        try (Scope ignored = parent.with(span).makeCurrent()) {
            chain.proceed();
        } finally {
            String route = req.matchingPattern().orElse(null);
            if (route != null) {
                span.updateName(method + " " + route);
                span.setAttribute(ROUTE, route);
            }
            int status = res.status().code();
            span.setAttribute(STATUS, (long) status);
            if (status >= 500) {
                span.setStatus(StatusCode.ERROR);
            }
            req.context().get(Caller.class).ifPresent(caller -> span.setAttribute(Tracing.MERCHANT,
                                                                                   caller.merchantId()));
            span.end();
        }
    }
}
