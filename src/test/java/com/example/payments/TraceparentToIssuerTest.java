package com.example.payments;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import com.example.payments.http.TraceContext;
import com.example.payments.testing.Http;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.WebServer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.startsWith;

/**
 * W3C Trace Context reaches the issuer: the HTTP authorizer sends the caller's {@code traceparent} unchanged when
 * tracing is off, and one naming the HTTP request's {@code CLIENT} span (with the HTTP semantic-convention
 * attributes), a child of the issuer call's span in the caller's trace, when it is on.
 */
class TraceparentToIssuerTest {

    private static final String TRACE_ID = "4af7651916cd43dd8448eb211c80319c";
    private static final String TRACEPARENT = "00-" + TRACE_ID + "-b7ad6b7169203331-01";

    private final List<Optional<String>> received = new CopyOnWriteArrayList<>();
    private WebServer issuer;

    @BeforeEach
    void startIssuer() {
        issuer = WebServer.builder().port(0).featuresDiscoverServices(false).routing(routing -> routing.post("/v1/authorizations", (req, res) -> {
            received.add(req.headers().first(HeaderNames.create("traceparent")));
            res.header(HeaderNames.CONTENT_TYPE, "application/json").send("{\"status\":\"APPROVED\",\"decidedAt\":\"" + java.time.Instant.now() + "\"}");
        })).build().start();
    }

    @AfterEach
    void stopIssuer() {
        issuer.stop();
    }

    @Test
    void withTracingOffTheCallersTraceparentIsPassedOnUnchanged() throws Exception {
        try (TestService service = TestService.start(issuerConfig())) {
            assertThat(post(service, "to-issuer-1", TRACEPARENT).statusCode(), is(201));
            assertThat(post(service, "to-issuer-2", null).statusCode(), is(201));
        }
        assertThat(received, is(List.of(Optional.of(TRACEPARENT), Optional.empty())));
    }

    @Test
    void withTracingOnTheHttpRequestsClientSpanIsTheParentInsideTheIssuerCallsSpan() throws Exception {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        try (TestService service = TestService.start(issuerConfig(), spans)) {
            assertThat(post(service, "to-issuer-3", TRACEPARENT).statusCode(), is(201));
            String sent = received.getFirst().orElseThrow();
            assertThat(sent, startsWith("00-" + TRACE_ID + "-"));
            assertThat(TraceContext.traceId(sent), is(Optional.of(TRACE_ID)));
            String parent = sent.split("-")[2];
            // The span is exported when it ends, before the answer: the batch processor may still hold it.
            service.close();
            SpanData client = spans.getFinishedSpanItems().stream().filter(span -> span.getSpanId().equals(parent))
                    .findFirst().orElseThrow();
            assertThat(client.getName(), is("POST"));
            assertThat(client.getKind(), is(SpanKind.CLIENT));
            assertThat(client.getAttributes().get(AttributeKey.stringKey("http.request.method")), is("POST"));
            assertThat(client.getAttributes().get(AttributeKey.stringKey("server.address")), is("127.0.0.1"));
            assertThat(client.getAttributes().get(AttributeKey.longKey("server.port")), is((long) issuer.port()));
            assertThat(client.getAttributes().get(AttributeKey.stringKey("url.scheme")), is("http"));
            assertThat(client.getAttributes().get(AttributeKey.longKey("http.response.status_code")), is(200L));
            assertThat(spans.getFinishedSpanItems().stream().anyMatch(
                    span -> span.getName().equals("authorizer.authorize")
                            && span.getSpanId().equals(client.getParentSpanId())), is(true));
        }
    }

    private Map<String, String> issuerConfig() {
        return Map.of("authorizer.type", "http", "authorizer.http.uri", "http://127.0.0.1:" + issuer.port());
    }

    private static HttpResponse<String> post(TestService service, String key, String traceparent) throws Exception {
        HttpRequest.Builder request = Http.request(service.business("/v1/authorizations"))
                .header("Content-Type", "application/json").header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY));
        if (traceparent != null) {
            request.header("traceparent", traceparent);
        }
        return Http.client().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
