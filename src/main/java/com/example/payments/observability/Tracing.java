package com.example.payments.observability;

import java.util.concurrent.TimeUnit;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.exporter.logging.LoggingSpanExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;

/**
 * Tracing with the OpenTelemetry SDK, configured by {@code tracing.*} ({@link TracingSettings}): off by default;
 * when on, spans of each business request ({@code SERVER}), its idempotency claim, its store calls and its issuer call
 * go through a batch processor to the configured exporter. W3C Trace Context is the propagation format, in and out.
 *
 * <p>The service's code reaches the tracer through {@link #tracer()}: one tracing per process, installed by
 * {@link #install}. Span attributes are the service's own words (route templates, outcomes, merchant ids), never a
 * path, a header value, a body, a card number or a credential.
 */
public final class Tracing implements AutoCloseable {

    /** The instrumentation scope of every span of this service. */
    public static final String SCOPE = "com.example.payments";
    /** Attribute: the authenticated merchant of a request. */
    public static final AttributeKey<String> MERCHANT = AttributeKey.stringKey("payments.merchant_id");
    /** Attribute: what an idempotency claim found ({@code new}, {@code replayed}, {@code in_flight}, ...). */
    public static final AttributeKey<String> IDEMPOTENCY_OUTCOME = AttributeKey.stringKey("payments.idempotency.outcome");
    /** Attribute: the store operation of a store span ({@code claim}, {@code record}, {@code release}, ...). */
    public static final AttributeKey<String> STORE_OPERATION = AttributeKey.stringKey("payments.store.operation");
    /** Attribute: the issuer's answer ({@code approved}, {@code declined}, {@code unknown}). */
    public static final AttributeKey<String> AUTHORIZER_OUTCOME = AttributeKey.stringKey("payments.authorizer.outcome");

    private static final ContextPropagators W3C = ContextPropagators.create(W3CTraceContextPropagator.getInstance());
    private static volatile OpenTelemetry current = OpenTelemetry.propagating(W3C);

    private final OpenTelemetrySdk sdk;

    private Tracing(OpenTelemetrySdk sdk) {
        this.sdk = sdk;
    }

    /**
     * Builds tracing from its settings and installs it for this process.
     *
     * @param settings {@code tracing.*}
     * @return the tracing; close it on shutdown to export what is left
     */
    public static Tracing install(TracingSettings settings) {
        if (!settings.enabled()) {
            return install(settings, null);
        }
        SpanExporter exporter = switch (settings.exporter()) {
        case LOGGING -> LoggingSpanExporter.create();
        case OTLP -> OtlpHttpSpanExporter.builder()
                .setEndpoint(settings.endpoint().orElseThrow().toString())
                .setTimeout(settings.timeout())
                .build();
        };
        return install(settings, exporter);
    }

    /**
     * Builds tracing with a given exporter (tests: an in-memory one) and installs it for this process.
     *
     * @param settings {@code tracing.*}; disabled means no exporter is used
     * @param exporter where finished spans go, or {@code null} when disabled
     * @return the tracing
     */
    public static Tracing install(TracingSettings settings, SpanExporter exporter) {
        if (!settings.enabled() || exporter == null) {
            // No span recorded, but an incoming traceparent still reaches the issuer.
            current = OpenTelemetry.propagating(W3C);
            return new Tracing(null);
        }
        Resource resource = Resource.getDefault().merge(Resource.create(Attributes.of(
                AttributeKey.stringKey("service.name"), "payments-authorization",
                AttributeKey.stringKey("deployment.environment.name"), settings.environment())));
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder()
                                           .setResource(resource)
                                           .setIdGenerator(new TraceIds())
                                           .setSampler(Sampler.parentBased(
                                                   Sampler.traceIdRatioBased(settings.sampleRatio())))
                                           .addSpanProcessor(BatchSpanProcessor.builder(exporter).build())
                                           .build())
                .setPropagators(W3C)
                .build();
        current = sdk;
        return new Tracing(sdk);
    }

    /**
     * The tracer of this process: a no-op one while tracing is off.
     *
     * @return the tracer
     */
    public static Tracer tracer() {
        return current.getTracer(SCOPE);
    }

    /**
     * The propagators (W3C Trace Context) used to read {@code traceparent} and to pass it on.
     *
     * @return the propagators
     */
    public static ContextPropagators propagators() {
        return W3C;
    }

    /**
     * Exports the spans still buffered, waiting at most 5 s; the process's tracer becomes a no-op one.
     */
    @Override
    public void close() {
        if (sdk != null) {
            if (current == sdk) {
                current = OpenTelemetry.propagating(W3C);
            }
            sdk.shutdown().join(5, TimeUnit.SECONDS);
        }
    }
}
