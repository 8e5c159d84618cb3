package com.example.payments.observability;

import java.net.URI;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;

/**
 * The {@code CLIENT} span of an HTTP call this service makes (to the issuer), with the HTTP semantic-convention
 * attributes of a client span: {@code http.request.method}, {@code server.address}, {@code server.port},
 * {@code url.scheme} and, once answered, {@code http.response.status_code}. Named by the method, as the conventions
 * name a client span without a URL template; never the path or the query ({@code url.full} is left out on purpose),
 * a header value or the body.
 */
public final class HttpClientSpans {

    private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
    private static final AttributeKey<String> ADDRESS = AttributeKey.stringKey("server.address");
    private static final AttributeKey<Long> PORT = AttributeKey.longKey("server.port");
    private static final AttributeKey<String> SCHEME = AttributeKey.stringKey("url.scheme");
    private static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
    private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

    private HttpClientSpans() {
    }

    /**
     * Starts the span of a call, a child of the current context's span; make it current while the request is sent, so
     * that the {@code traceparent} sent names it.
     *
     * @param method the request method, e.g. {@code POST}
     * @param uri    the request URI (its host, port and scheme are recorded)
     * @return the started span
     */
    public static Span start(String method, URI uri) {
        int port = uri.getPort() >= 0 ? uri.getPort() : "https".equals(uri.getScheme()) ? 443 : 80;
        return Tracing.tracer().spanBuilder(method).setSpanKind(SpanKind.CLIENT)
                .setAttribute(METHOD, method)
                .setAttribute(ADDRESS, uri.getHost())
                .setAttribute(PORT, (long) port)
                .setAttribute(SCHEME, uri.getScheme())
                .startSpan();
    }

    /**
     * Ends the span of an answered call; a {@code 4xx} or {@code 5xx} status marks it as an error.
     *
     * @param span   the call's span
     * @param status the response status
     */
    public static void answered(Span span, int status) {
        span.setAttribute(STATUS, (long) status);
        if (status >= 400) {
            span.setAttribute(ERROR_TYPE, String.valueOf(status)).setStatus(StatusCode.ERROR);
        }
        span.end();
    }

    /**
     * Ends the span of a call that got no answer.
     *
     * @param span  the call's span
     * @param error what went wrong; only its class name is recorded (a message may hold anything)
     */
    public static void failed(Span span, Throwable error) {
        span.setAttribute(ERROR_TYPE, error.getClass().getName()).setStatus(StatusCode.ERROR);
        span.end();
    }
}
