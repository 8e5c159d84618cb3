package com.example.payments.observability;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;

/**
 * Tracing with the OpenTelemetry SDK, configured by {@code tracing.*} ({@link TracingSettings}) and the standard
 * {@code OTEL_*} environment variables, which override it ({@link OtelProperties}): off by default; when on, spans of
 * each business request ({@code SERVER}), its idempotency claim, its store calls and its issuer call ({@code CLIENT})
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
    private static final SpanContext UNSAMPLED = SpanContext.create("00000000000000000000000000000001",
                                                                    "0000000000000001", TraceFlags.getDefault(),
                                                                    TraceState.getDefault());
    private static volatile OpenTelemetry current = OpenTelemetry.propagating(W3C);

    private final OpenTelemetrySdk sdk;

    private Tracing(OpenTelemetrySdk sdk) {
        this.sdk = sdk;
    }

    /**
     * Builds tracing from its settings, overridden by the standard {@code OTEL_*} environment variables
     * ({@link OtelProperties}), through the OpenTelemetry SDK's autoconfiguration, and installs it for this process.
     *
     * @param settings {@code tracing.*}
     * @return the tracing; close it on shutdown to export what is left
     */
    public static Tracing install(TracingSettings settings) {
        return install(settings, null, Map.of());
    }

    /**
     * Builds tracing with a given exporter (tests: an in-memory one) instead of the configured one, and installs it
     * for this process.
     *
     * @param settings {@code tracing.*}; disabled means no exporter is used
     * @param exporter where finished spans go, or {@code null} when disabled
     * @return the tracing
     */
    public static Tracing install(TracingSettings settings, SpanExporter exporter) {
        return install(exporter == null ? TracingSettings.disabled() : settings, exporter, Map.of());
    }

    /**
     * Builds tracing as {@link #install(TracingSettings)} does, with more OpenTelemetry properties read as if they
     * were environment variables (tests: {@code otel.*} values a test cannot set in its own environment).
     *
     * @param settings  {@code tracing.*}
     * @param exporter  replaces the configured exporter, or {@code null}
     * @param overrides OpenTelemetry properties, e.g. {@code otel.exporter.otlp.endpoint}, highest in priority
     * @return the tracing
     */
    public static Tracing install(TracingSettings settings, SpanExporter exporter, Map<String, String> overrides) {
        if (!settings.enabled()) {
            // No span recorded, but an incoming traceparent still reaches the issuer.
            current = OpenTelemetry.propagating(W3C);
            return new Tracing(null);
        }
        Map<String, String> forced = new HashMap<>(overrides);
        if (exporter != null) {
            forced.put("otel.traces.exporter", "none");
        }
        OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier(() -> OtelProperties.defaults(settings))
                .addPropertiesCustomizer(config -> {
                    Map<String, String> chosen = OtelProperties.endpoint(
                            settings, key -> overrides.containsKey(key) ? overrides.get(key) : config.getString(key));
                    chosen.putAll(forced);
                    return chosen;
                })
                // The environment's resource attributes (OTEL_RESOURCE_ATTRIBUTES) win over this one.
                .addResourceCustomizer((resource, config) -> Resource.create(Attributes.of(
                        AttributeKey.stringKey("deployment.environment.name"), settings.environment())).merge(resource))
                .addTracerProviderCustomizer((provider, config) -> {
                    provider.setIdGenerator(new TraceIds());
                    return exporter == null ? provider
                            : provider.addSpanProcessor(BatchSpanProcessor.builder(exporter).build());
                })
                .disableShutdownHook()
                .build()
                .getOpenTelemetrySdk();
        current = sdk;
        return new Tracing(sdk);
    }

    /**
     * A context whose spans are never recorded: its parent is a span that was not sampled, and every span of this
     * service is sampled as its parent was. For work that is not a request of anyone's (the startup warm-up).
     *
     * @return the context to make current around such work
     */
    public static Context unsampled() {
        return Context.root().with(Span.wrap(UNSAMPLED));
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
     * Exports the spans buffered so far now, waiting at most 5 s (the batch processor otherwise sends every 5 s).
     */
    public void flush() {
        if (sdk != null) {
            sdk.getSdkTracerProvider().forceFlush().join(5, TimeUnit.SECONDS);
        }
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
