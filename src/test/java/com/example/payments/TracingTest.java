package com.example.payments;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.example.payments.testing.Http;
import com.example.payments.testing.LogCapture;
import com.example.payments.testing.CardNumbers;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;

/**
 * Tracing with the OpenTelemetry SDK, spans caught by an in-memory exporter: a request's span continues the caller's
 * trace and is the parent of its idempotency claim, store calls and issuer call; its trace id is the
 * {@code X-Request-Id}; and no span (name, attribute, event, resource) nor access-log line holds a card number sent
 * in the body, a header, the path or the query.
 */
class TracingTest {

    private static final String TRACE_ID = "3af7651916cd43dd8448eb211c80319c";
    private static final String PARENT_ID = "b7ad6b7169203331";
    private static final List<String> PANS = List.of("4111111111111111", "5555555555554444", "4000000000000119");

    @Test
    void aRequestsSpansContinueTheCallersTraceAndNameItsSteps() throws Exception {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        HttpResponse<String> created;
        HttpResponse<String> untraced;
        try (TestService service = TestService.start(Map.of(), spans)) {
            created = send(Http.request(service.business("/v1/authorizations"))
                    .header("traceparent", "00-" + TRACE_ID + "-" + PARENT_ID + "-01")
                    .header("Content-Type", "application/json").header("Idempotency-Key", "trace-1")
                    .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)));
            untraced = send(Http.request(service.business("/nowhere")).GET());
        }
        assertThat(created.statusCode(), is(201));
        assertThat(created.headers().firstValue("X-Request-Id").orElseThrow(), is(TRACE_ID));

        List<SpanData> traced = spans.getFinishedSpanItems().stream()
                .filter(span -> span.getTraceId().equals(TRACE_ID)).toList();
        SpanData server = traced.stream().filter(span -> span.getKind() == SpanKind.SERVER).findFirst().orElseThrow();
        assertThat(server.getName(), is("POST /v1/authorizations"));
        assertThat(server.getParentSpanId(), is(PARENT_ID));
        assertThat(server.getAttributes().get(AttributeKey.longKey("http.response.status_code")), is(201L));
        assertThat(server.getAttributes().get(AttributeKey.stringKey("http.route")), is("/v1/authorizations"));
        assertThat(server.getAttributes().get(AttributeKey.stringKey("payments.merchant_id")), is("m_123"));
        assertThat(traced.stream().map(SpanData::getName).toList(), containsInAnyOrder(
                "POST /v1/authorizations", "idempotency.claim", "idempotency.store claim", "authorizer.authorize",
                "idempotency.store record"));
        SpanData claim = named(traced, "idempotency.claim");
        assertThat(claim.getParentSpanId(), is(server.getSpanId()));
        assertThat(claim.getAttributes().get(AttributeKey.stringKey("payments.idempotency.outcome")), is("new"));
        assertThat(named(traced, "idempotency.store claim").getParentSpanId(), is(claim.getSpanId()));
        SpanData issuer = named(traced, "authorizer.authorize");
        assertThat(issuer.getParentSpanId(), is(server.getSpanId()));
        assertThat(issuer.getAttributes().get(AttributeKey.stringKey("payments.authorizer.outcome")), is("approved"));

        String pingId = untraced.headers().firstValue("X-Request-Id").orElseThrow();
        assertThat(spans.getFinishedSpanItems().stream().map(SpanData::getTraceId).toList(), hasItem(pingId));
    }

    @Test
    void noSpanAndNoAccessLogLineHoldsACardNumber() throws Exception {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        List<String> accessLines;
        try (LogCapture logs = LogCapture.start()) {
            try (TestService service = TestService.start(Map.of(), spans)) {
                String api = service.business("/v1/authorizations");
                for (String pan : PANS) {
                    String body = Http.VALID_BODY.replace("4111111111111111", pan);
                    // In the body (approved, declined, issuer failure), a header, the path, the query.
                    send(Http.request(api).header("Content-Type", "application/json")
                                 .header("Idempotency-Key", "pan-" + pan).header("X-Card-Number", pan)
                                 .header("Referer", "https://shop.example/checkout?pan=" + pan)
                                 .POST(HttpRequest.BodyPublishers.ofString(body)));
                    send(Http.request(api + "/" + pan + "?card=" + pan + "&cvc=123").GET());
                    send(HttpRequest.newBuilder(URI.create(api + "/" + pan)).header("X-Card-Number", pan).GET());
                    send(Http.request(service.business("/" + pan + "/" + pan.substring(0, 4) + "-"
                                                       + pan.substring(4, 8) + "-" + pan.substring(8, 12) + "-"
                                                       + pan.substring(12) + "?q=" + pan)).GET());
                    send(Http.request(api).header("Content-Type", "application/json")
                                 .header("Idempotency-Key", pan)
                                 .POST(HttpRequest.BodyPublishers.ofString("{\"card\":{\"number\":\"" + pan + "\"")));
                    send(Http.request(api).header("Content-Type", "text/plain").header("Idempotency-Key", "k")
                                 .POST(HttpRequest.BodyPublishers.ofString(pan)));
                    // In the trace context: a trace id and a parent id next to hex letters, a vendor's tracestate.
                    send(Http.request(api + "/x").header("traceparent", "00-" + pan + "aaaaaaaaaaaaaaaa-"
                                                                         + PARENT_ID + "-01").GET());
                    send(Http.request(api + "/x").header("traceparent", "00-" + TRACE_ID + "-" + pan + "-01").GET());
                    send(Http.request(api + "/x").header("traceparent", "00-" + TRACE_ID + "-" + PARENT_ID + "-01")
                                 .header("tracestate", "vendor=" + pan + "ab,other=" + pan).GET());
                }
            }
            accessLines = logs.text().lines().filter(line -> line.contains(" http.route=")).toList();
        }
        assertThat(accessLines.size() >= PANS.size() * 6, is(true));
        List<SpanData> finished = spans.getFinishedSpanItems();
        assertThat(finished.size() >= PANS.size() * 6, is(true));
        List<String> found = new ArrayList<>();
        for (SpanData span : finished) {
            String text = span.getName() + " " + span.getAttributes() + " " + span.getEvents() + " "
                          + span.getResource().getAttributes() + " " + span.getStatus() + " " + span.getLinks()
                          + " " + span.getSpanContext().getTraceState().asMap();
            cardNumberIn(text).ifPresent(found::add);
            // The ids are random hex: a run of their digits may pass for a card number by chance, the test cards never.
            String ids = span.getTraceId() + " " + span.getParentSpanId();
            PANS.stream().filter(ids::contains).forEach(pan -> found.add("an id holding " + pan));
        }
        accessLines.forEach(line -> cardNumberIn(line).ifPresent(found::add));
        assertThat(found, is(empty()));
    }

    // A Luhn-valid run of 13 to 19 digits (single spaces or dashes between them allowed), or a test card's digits.
    private static Optional<String> cardNumberIn(String text) {
        if (CardNumbers.in(text)) {
            return Optional.of(text);
        }
        return PANS.stream().anyMatch(text::contains) ? Optional.of(text) : Optional.empty();
    }

    private static SpanData named(List<SpanData> spans, String name) {
        return spans.stream().filter(span -> span.getName().equals(name)).findFirst().orElseThrow();
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return Http.client().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
