package com.example.payments;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.example.payments.http.Json;
import com.example.payments.observability.Tracing;
import com.example.payments.testing.Http;
import com.example.payments.testing.OtlpReceiver;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;

/**
 * Tracing through the OpenTelemetry SDK's autoconfiguration to a real OTLP/HTTP receiver on loopback
 * ({@link OtlpReceiver}): the startup warm-up exports nothing, the first real request's spans arrive with the HTTP
 * semantic-convention attributes and the service's resource, and an {@code OTEL_EXPORTER_OTLP_ENDPOINT} outranks
 * {@code tracing.otlp.endpoint}.
 */
class OtlpExportTest {

    private static final String TRACE_ID = "5bf92f3577b34da6a3ce929d0e0e4736";
    private static final int WARM_UP_REQUESTS = 24;

    @Test
    void aStartExportsNoSpanBeforeTheFirstRealRequestWhoseSpansCarryTheHttpAttributes() throws Exception {
        try (OtlpReceiver receiver = OtlpReceiver.start();
             TestService service = TestService.startTraced(Map.of(
                     "tracing.enabled", "true", "tracing.exporter", "otlp",
                     "tracing.otlp.endpoint", receiver.tracesUri(),
                     "warm-up.requests", String.valueOf(WARM_UP_REQUESTS), "warm-up.timeout", "PT60S"),
                     Tracing::install)) {
            assertThat(service.metric("warm_up_requests_total", Map.of("outcome", "answered")),
                       is((double) WARM_UP_REQUESTS));
            tracing(service).flush();
            assertThat("spans exported by the start alone", receiver.spans(), is(empty()));

            HttpResponse<String> created = Http.client().send(Http.request(service.business("/v1/authorizations"))
                    .header("traceparent", "00-" + TRACE_ID + "-b7ad6b7169203331-01")
                    .header("Content-Type", "application/json").header("Idempotency-Key", "otlp-1")
                    .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(created.statusCode(), is(201));
            String id = Json.mapper().readTree(created.body()).get("id").asText();
            awaitSpan(service, receiver, "POST /v1/authorizations");

            List<OtlpReceiver.Received> spans = receiver.spans();
            assertThat("every span is of the request's trace", spans.stream()
                    .filter(s -> !hex(s.span().getTraceId().toByteArray()).equals(TRACE_ID)).toList(), is(empty()));
            Span server = spans.stream().map(OtlpReceiver.Received::span)
                    .filter(s -> s.getKind() == Span.SpanKind.SPAN_KIND_SERVER).findFirst().orElseThrow();
            assertThat(server.getName(), is("POST /v1/authorizations"));
            assertThat(attribute(server, "http.request.method"), is(Optional.of("POST")));
            assertThat(attribute(server, "http.route"), is(Optional.of("/v1/authorizations")));
            assertThat(attribute(server, "http.response.status_code"), is(Optional.of("201")));
            assertThat(attribute(server, "url.scheme"), is(Optional.of("http")));
            assertThat(attribute(server, "url.path"), is(Optional.empty()));
            KeyValueView resource = new KeyValueView(spans.getFirst().resource().getAttributesList());
            assertThat(resource.get("service.name"), is(Optional.of("payments-authorization")));
            assertThat(resource.get("deployment.environment.name"), is(Optional.of("dev")));
            assertThat(spans.stream().map(s -> s.span().getName()).toList(), hasItem("idempotency.claim"));

            // A GET of the created authorization: its route is the template, never the path with the id.
            assertThat(Http.get(service.business("/v1/authorizations/" + id)).statusCode(), is(200));
            Span get = awaitSpan(service, receiver, "GET /v1/authorizations/{id}");
            assertThat(attribute(get, "http.route"), is(Optional.of("/v1/authorizations/{id}")));
            assertThat(attribute(get, "http.response.status_code"), is(Optional.of("200")));
        }
    }

    @Test
    void anOtelExporterOtlpEndpointOutranksTheTracingKey() throws Exception {
        try (OtlpReceiver receiver = OtlpReceiver.start();
             TestService service = TestService.startTraced(Map.of(
                     "tracing.enabled", "true", "tracing.exporter", "otlp",
                     // Nothing listens there: only the environment's endpoint can receive the span.
                     "tracing.otlp.endpoint", "http://127.0.0.1:9/v1/traces"),
                     settings -> Tracing.install(settings, null, Map.of("otel.exporter.otlp.endpoint",
                                                                        receiver.baseUri(),
                                                                        "otel.service.name", "renamed-by-env")))) {
            assertThat(service.post("otlp-env-1", Http.VALID_BODY).statusCode(), is(201));
            awaitSpan(service, receiver, "POST /v1/authorizations");

            assertThat(new KeyValueView(receiver.spans().getFirst().resource().getAttributesList()).get("service.name"),
                       is(Optional.of("renamed-by-env")));
        }
    }

    @Test
    void theLoggingExporterIsTheSdksConsoleExporter() throws Exception {
        // tracing.exporter logging (dev's setting) maps onto OTEL_TRACES_EXPORTER console: the SDK must know it.
        try (TestService service = TestService.startTraced(Map.of("tracing.enabled", "true",
                                                                  "tracing.exporter", "logging"), Tracing::install)) {
            assertThat(service.post("logging-1", Http.VALID_BODY).statusCode(), is(201));
            io.opentelemetry.api.trace.Span span = Tracing.tracer().spanBuilder("probe").startSpan();
            assertThat(span.isRecording(), is(true));
            span.end();
        }
    }

    // The server span ends just after the answer is written: flush until it has arrived (10 s at most).
    private static Span awaitSpan(TestService service, OtlpReceiver receiver, String name) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        while (true) {
            tracing(service).flush();
            Optional<Span> span = receiver.spans().stream().map(OtlpReceiver.Received::span)
                    .filter(s -> s.getName().equals(name)).findFirst();
            if (span.isPresent() || System.nanoTime() > end) {
                return span.orElseThrow(() -> new AssertionError("no span " + name + " received: "
                        + receiver.spans().stream().map(s -> s.span().getName()).toList()));
            }
            Thread.sleep(50);
        }
    }

    private static Tracing tracing(TestService service) {
        return (Tracing) service.running().resources().get("tracing");
    }

    private static Optional<String> attribute(Span span, String key) {
        return new KeyValueView(span.getAttributesList()).get(key);
    }

    private static String hex(byte[] bytes) {
        StringBuilder hex = new StringBuilder();
        for (byte b : bytes) {
            hex.append(String.format("%02x", b));
        }
        return hex.toString();
    }

    /** OTLP attributes read as strings (an int value as its decimal digits). */
    private record KeyValueView(List<KeyValue> values) {
        Optional<String> get(String key) {
            return values.stream().filter(kv -> kv.getKey().equals(key)).map(KeyValue::getValue).findFirst()
                    .map(KeyValueView::text);
        }

        private static String text(AnyValue value) {
            return switch (value.getValueCase()) {
            case STRING_VALUE -> value.getStringValue();
            case INT_VALUE -> String.valueOf(value.getIntValue());
            case BOOL_VALUE -> String.valueOf(value.getBoolValue());
            case DOUBLE_VALUE -> String.valueOf(value.getDoubleValue());
            default -> value.toString();
            };
        }
    }
}
