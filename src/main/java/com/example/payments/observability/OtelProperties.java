package com.example.payments.observability;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The {@code tracing.*} keys as the OpenTelemetry SDK autoconfigure properties they stand for: defaults that the
 * standard {@code OTEL_*} environment variables (and {@code otel.*} system properties) override.
 *
 * <table>
 *     <caption>Mapping</caption>
 *     <tr><th>key</th><th>OpenTelemetry property (environment variable)</th></tr>
 *     <tr><td>{@code tracing.exporter} {@code otlp} | {@code logging}</td>
 *         <td>{@code otel.traces.exporter} {@code otlp} | {@code console} ({@code OTEL_TRACES_EXPORTER})</td></tr>
 *     <tr><td>{@code tracing.otlp.endpoint}</td>
 *         <td>{@code otel.exporter.otlp.traces.endpoint} ({@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}; also
 *         overridden by {@code OTEL_EXPORTER_OTLP_ENDPOINT}, to which the SDK appends {@code /v1/traces})</td></tr>
 *     <tr><td>{@code tracing.otlp.timeout}</td>
 *         <td>{@code otel.exporter.otlp.traces.timeout}, in ms ({@code OTEL_EXPORTER_OTLP_TRACES_TIMEOUT})</td></tr>
 *     <tr><td>{@code tracing.sample-ratio}</td>
 *         <td>{@code otel.traces.sampler} {@code parentbased_traceidratio} with {@code otel.traces.sampler.arg}
 *         ({@code OTEL_TRACES_SAMPLER}, {@code OTEL_TRACES_SAMPLER_ARG})</td></tr>
 *     <tr><td>{@code app.environment}</td><td>resource attribute {@code deployment.environment.name}
 *         ({@code OTEL_RESOURCE_ATTRIBUTES})</td></tr>
 * </table>
 * Also by default: {@code otel.service.name} {@code payments-authorization} ({@code OTEL_SERVICE_NAME}), the OTLP
 * protocol {@code http/protobuf}, W3C Trace Context propagation, and no metrics or logs exporter (metrics are scraped
 * from {@code /metrics}). {@code tracing.enabled} stays the switch: OpenTelemetry has no "off unless asked" variable
 * ({@code OTEL_SDK_DISABLED=true} turns tracing off too).
 */
final class OtelProperties {

    /** The service name every span's resource carries unless {@code OTEL_SERVICE_NAME} says otherwise. */
    static final String SERVICE_NAME = "payments-authorization";

    private static final String ENDPOINT = "otel.exporter.otlp.endpoint";
    private static final String TRACES_ENDPOINT = "otel.exporter.otlp.traces.endpoint";
    private static final String PROTOCOL = "otel.exporter.otlp.protocol";
    private static final String TRACES_PROTOCOL = "otel.exporter.otlp.traces.protocol";

    private OtelProperties() {
    }

    /**
     * The defaults from {@code tracing.*}, lowest in priority.
     *
     * @param settings {@code tracing.*}
     * @return property names and values
     */
    static Map<String, String> defaults(TracingSettings settings) {
        Map<String, String> defaults = new HashMap<>();
        defaults.put("otel.service.name", SERVICE_NAME);
        defaults.put("otel.traces.exporter", switch (settings.exporter()) {
        case OTLP -> "otlp";
        case LOGGING -> "console";
        });
        defaults.put("otel.exporter.otlp.traces.timeout", String.valueOf(settings.timeout().toMillis()));
        defaults.put("otel.traces.sampler", "parentbased_traceidratio");
        defaults.put("otel.traces.sampler.arg", String.valueOf(settings.sampleRatio()));
        defaults.put("otel.propagators", "tracecontext");
        defaults.put("otel.metrics.exporter", "none");
        defaults.put("otel.logs.exporter", "none");
        return defaults;
    }

    /**
     * The endpoint and protocol of {@code tracing.*}, unless the environment names its own: a traces-specific
     * property outranks the general one in the SDK, so a default given for traces would hide an
     * {@code OTEL_EXPORTER_OTLP_ENDPOINT} set by the platform.
     *
     * @param settings   {@code tracing.*}
     * @param configured what the SDK read: the defaults, overridden by system properties and environment variables
     * @return properties to set on top
     */
    static Map<String, String> endpoint(TracingSettings settings, Function<String, String> configured) {
        Map<String, String> chosen = new HashMap<>();
        if (configured.apply(ENDPOINT) == null && configured.apply(TRACES_ENDPOINT) == null) {
            settings.endpoint().ifPresent(uri -> chosen.put(TRACES_ENDPOINT, uri.toString()));
        }
        if (configured.apply(PROTOCOL) == null && configured.apply(TRACES_PROTOCOL) == null) {
            chosen.put(TRACES_PROTOCOL, "http/protobuf");
        }
        return chosen;
    }
}
