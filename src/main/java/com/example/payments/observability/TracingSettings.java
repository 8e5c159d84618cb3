package com.example.payments.observability;

import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;

/**
 * {@code tracing.*}: OpenTelemetry tracing (docs/observability.md#tracing).
 *
 * @param enabled      {@code tracing.enabled}, default {@code false}: no span is recorded or exported (an incoming
 *                     {@code traceparent} is still passed on to the issuer)
 * @param exporter     {@code tracing.exporter}, default {@code otlp}: OTLP over HTTP, or {@code logging} (each span as
 *                     a log line; development)
 * @param endpoint     {@code tracing.otlp.endpoint}: the collector's OTLP/HTTP traces URI, e.g.
 *                     {@code http://otel-collector:4318/v1/traces}; required when enabled with {@code otlp}, unless
 *                     {@code OTEL_EXPORTER_OTLP_ENDPOINT} or {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} names one
 *                     (the standard variables override every key here: {@link OtelProperties})
 * @param timeout      {@code tracing.otlp.timeout}, default {@code PT10S}: one export call at most
 * @param sampleRatio  {@code tracing.sample-ratio}, default {@code 1.0}: share of traces started here that are
 *                     recorded, by trace id; a request whose {@code traceparent} says sampled or not keeps that choice
 * @param environment  {@code app.environment}, the {@code deployment.environment.name} of every span
 */
public record TracingSettings(boolean enabled, Exporter exporter, Optional<URI> endpoint, Duration timeout,
                              double sampleRatio, String environment) {

    /** {@code tracing.exporter}. */
    public enum Exporter {
        /** OTLP over HTTP (protobuf) to {@code tracing.otlp.endpoint}. */
        OTLP,
        /** Each finished span as a log line (logger {@code io.opentelemetry.exporter.logging.LoggingSpanExporter}). */
        LOGGING
    }

    /**
     * Tracing off.
     *
     * @return settings that record nothing
     */
    public static TracingSettings disabled() {
        return new TracingSettings(false, Exporter.OTLP, Optional.empty(), Duration.ofSeconds(10), 1.0, "dev");
    }

    /**
     * Reads and validates the keys.
     *
     * @param values      the configuration
     * @param environment {@code app.environment}, e.g. {@code prod}
     * @return settings
     * @throws ConfigurationException naming a key that is wrong, or {@code tracing.otlp.endpoint} when it is
     *                                missing while OTLP tracing is on and no {@code OTEL_*} variable names one
     */
    public static TracingSettings create(ConfigValues values, String environment) {
        boolean enabled = Boolean.parseBoolean(values.oneOf("tracing.enabled", Toggle.class, Toggle.FALSE)
                                                       .name().toLowerCase());
        Exporter exporter = values.oneOf("tracing.exporter", Exporter.class, Exporter.OTLP);
        String allowed = "an http:// or https:// URI with a host, e.g. http://otel-collector:4318/v1/traces";
        Optional<URI> endpoint = values.string("tracing.otlp.endpoint", allowed).map(raw -> {
            try {
                URI uri = URI.create(raw.trim());
                if ((!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) || uri.getHost() == null) {
                    throw new IllegalArgumentException(raw);
                }
                return uri;
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException("tracing.otlp.endpoint", "'" + raw + "' is not allowed; allowed: "
                                                                          + allowed);
            }
        });
        Duration timeout = values.positiveDuration("tracing.otlp.timeout", Duration.ofSeconds(10));
        double ratio = values.ratio("tracing.sample-ratio", 1.0);
        if (enabled && exporter == Exporter.OTLP && endpoint.isEmpty() && !endpointFromEnvironment()) {
            throw new ConfigurationException("tracing.otlp.endpoint", "is missing; allowed: " + allowed
                                                                      + " (required with tracing.enabled true and "
                                                                      + "tracing.exporter otlp)");
        }
        return new TracingSettings(enabled, exporter, endpoint, timeout, ratio, environment);
    }

    // The standard OpenTelemetry variables (or their system properties) name an endpoint, which wins over ours anyway.
    private static boolean endpointFromEnvironment() {
        return Stream.of("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                       .anyMatch(name -> present(System.getenv(name)))
               || Stream.of("otel.exporter.otlp.endpoint", "otel.exporter.otlp.traces.endpoint")
                       .anyMatch(name -> present(System.getProperty(name)));
    }

    private static boolean present(String value) {
        return value != null && !value.isBlank();
    }

    private enum Toggle { TRUE, FALSE }
}
