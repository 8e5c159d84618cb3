package com.example.payments;

import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.TestCredentials;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * Captures and voids over the wire: partial captures up to the authorized amount, the 409 and 422 of the lifecycle,
 * byte-identical replays, keys scoped by the authorization. One suite, run on every resource store by a subclass:
 * {@code InMemoryCaptureApiTest}, {@code PostgresCaptureApiTest}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CaptureApiContract {

    private TestService service;

    abstract Map<String, String> backend() throws Exception;

    void stopBackend() {
    }

    @BeforeAll
    void start() throws Exception {
        service = TestService.start(backend());
    }

    @AfterAll
    void stop() {
        if (service != null) {
            service.close();
        }
        stopBackend();
    }

    private static String key() {
        return "\"" + UUID.randomUUID() + "\"";
    }

    private static JsonNode json(HttpResponse<String> response) throws Exception {
        return Json.mapper().readTree(response.body());
    }

    private String authorize(String card, long amount) throws Exception {
        HttpResponse<String> response = service.post(key(), Http.VALID_BODY.replace("4111111111111111", card)
                .replace("\"value\":1299", "\"value\":" + amount));
        assertThat(response.statusCode(), is(201));
        return json(response).get("id").asText();
    }

    private HttpResponse<String> capture(String authorization, String key, long amount, String currency)
            throws Exception {
        return Http.post(service.business("/v1/authorizations/" + authorization + "/captures"), key,
                         "{\"amount\":{\"value\":" + amount + ",\"currency\":\"" + currency + "\"}}");
    }

    private HttpResponse<String> voidWithoutBody(String authorization, String key) throws Exception {
        return Http.client().send(Http.request(service.business("/v1/authorizations/" + authorization + "/voids"))
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode read(String path) throws Exception {
        HttpResponse<String> response = service.get(service.business(path));
        assertThat(response.statusCode(), is(200));
        return json(response);
    }

    @Test
    void partialCapturesRunUntilTheAuthorizedAmountIsCapturedAndThenConflict() throws Exception {
        String id = authorize("4111111111111111", 1299);
        HttpResponse<String> first = capture(id, key(), 500, "EUR");
        assertThat(first.statusCode(), is(201));
        assertThat(json(first).get("status").asText(), is("SUCCEEDED"));
        assertThat(first.headers().firstValue("Location").orElseThrow(),
                   is("/v1/authorizations/" + id + "/captures/" + json(first).get("id").asText()));
        assertThat(capture(id, key(), 799, "EUR").statusCode(), is(201));
        JsonNode authorization = read("/v1/authorizations/" + id);
        assertThat(authorization.get("state").asText(), is("CAPTURED"));
        assertThat(authorization.get("capturedAmount").get("value").asLong(), is(1299L));
        assertThat(authorization.get("captures").size(), is(2));
        HttpResponse<String> more = capture(id, key(), 1, "EUR");
        assertThat(more.statusCode(), is(409));
        assertThat(more.body(), containsString("CAPTURED"));
    }

    @Test
    void aCaptureAboveTheRemainderOrInAnotherCurrencyIsUnprocessableNamingTheField() throws Exception {
        String id = authorize("4111111111111111", 1299);
        assertThat(capture(id, key(), 1000, "EUR").statusCode(), is(201));
        HttpResponse<String> tooMuch = capture(id, key(), 300, "EUR");
        assertThat(tooMuch.statusCode(), is(422));
        assertThat(tooMuch.body(), containsString("#/amount/value"));
        HttpResponse<String> dollars = capture(id, key(), 100, "USD");
        assertThat(dollars.statusCode(), is(422));
        assertThat(dollars.body(), containsString("#/amount/currency"));
        assertThat(read("/v1/authorizations/" + id).get("capturedAmount").get("value").asLong(), is(1000L));
    }

    @Test
    void aCaptureReplaysByteForByteAndIsReadBack() throws Exception {
        String id = authorize("4111111111111111", 1299);
        String key = key();
        HttpResponse<String> first = capture(id, key, 200, "EUR");
        HttpResponse<String> again = capture(id, key, 200, "EUR");
        assertThat(again.statusCode(), is(201));
        assertThat(again.body(), is(first.body()));
        assertThat(again.headers().firstValue("Idempotent-Replayed").orElseThrow(), is("true"));
        assertThat(capture(id, key, 300, "EUR").statusCode(), is(422));
        String location = first.headers().firstValue("Location").orElseThrow();
        assertThat(service.get(service.business(location)).body(), is(first.body()));
        assertThat(read("/v1/authorizations/" + id).get("capturedAmount").get("value").asLong(), is(200L));
    }

    @Test
    void theSameKeyOnTwoAuthorizationsIsTwoCaptures() throws Exception {
        String one = authorize("4111111111111111", 1299);
        String two = authorize("4111111111111111", 1299);
        String key = key();
        HttpResponse<String> first = capture(one, key, 100, "EUR");
        HttpResponse<String> second = capture(two, key, 100, "EUR");
        assertThat(second.statusCode(), is(201));
        assertThat(second.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
        assertThat(json(second).get("id").asText(), not(json(first).get("id").asText()));
        assertThat(json(second).get("authorizationId").asText(), is(two));
    }

    @Test
    void aVoidReleasesTheRemainderAndNothingIsCapturedAfterIt() throws Exception {
        String id = authorize("4111111111111111", 1299);
        assertThat(capture(id, key(), 300, "EUR").statusCode(), is(201));
        String key = key();
        HttpResponse<String> voided = voidWithoutBody(id, key);
        assertThat(voided.statusCode(), is(201));
        assertThat(json(voided).get("amount").get("value").asLong(), is(999L));
        assertThat(json(voided).get("status").asText(), is("SUCCEEDED"));
        HttpResponse<String> withEmptyObject = Http.post(service.business("/v1/authorizations/" + id + "/voids"),
                                                         key, "{}");
        assertThat("no body and {} are the same void", withEmptyObject.body(), is(voided.body()));
        for (String type : new String[] {null, "application/json"}) {
            // A chunked body of its last chunk alone is empty too (RFC 9112 section 7.1), with or without a type.
            HttpRequest.Builder chunked = Http.request(service.business("/v1/authorizations/" + id + "/voids"))
                    .header("Idempotency-Key", key)
                    .POST(HttpRequest.BodyPublishers.ofInputStream(InputStream::nullInputStream));
            if (type != null) {
                chunked.header("Content-Type", type);
            }
            HttpResponse<String> replay = Http.client().send(chunked.build(), HttpResponse.BodyHandlers.ofString());
            assertThat("an empty chunked body is no body (" + type + ")", replay.body(), is(voided.body()));
        }
        JsonNode authorization = read("/v1/authorizations/" + id);
        assertThat(authorization.get("state").asText(), is("VOIDED"));
        assertThat(authorization.get("capturedAmount").get("value").asLong(), is(300L));
        assertThat(capture(id, key(), 100, "EUR").statusCode(), is(409));
        assertThat(voidWithoutBody(id, key()).statusCode(), is(409));
        assertThat(read(voided.headers().firstValue("Location").orElseThrow()).get("id").asText(),
                   is(json(voided).get("id").asText()));
    }

    @Test
    void aDeclinedAuthorizationIsNotCapturable() throws Exception {
        String id = authorize("4000000000000002", 1299);
        HttpResponse<String> refused = capture(id, key(), 100, "EUR");
        assertThat(refused.statusCode(), is(409));
        assertThat(refused.body(), containsString("DECLINED"));
    }

    @Test
    void anUnknownOrAnotherMerchantsAuthorizationIsNotFound() throws Exception {
        assertThat(capture(UUID.randomUUID().toString(), key(), 100, "EUR").statusCode(), is(404));
        String id = authorize("4111111111111111", 1299);
        HttpResponse<String> other = Http.post(service.business("/v1/authorizations/" + id + "/captures"), key(),
                "{\"amount\":{\"value\":100,\"currency\":\"EUR\"}}", TestCredentials.bearer(TestCredentials.OTHER_KEY));
        assertThat(other.statusCode(), is(404));
        assertThat(service.get(service.business("/v1/authorizations/" + id + "/captures/" + UUID.randomUUID()))
                           .statusCode(), is(404));
        assertThat(service.get(service.business("/v1/authorizations/" + id + "/captures")).statusCode(), is(405));
    }

    @Test
    void anInvalidCaptureIsABadRequestAndTakesNoKey() throws Exception {
        String id = authorize("4111111111111111", 1299);
        String key = key();
        HttpResponse<String> invalid = Http.post(service.business("/v1/authorizations/" + id + "/captures"), key,
                                                 "{\"amount\":{\"value\":0,\"currency\":\"EUR\"}}");
        assertThat(invalid.statusCode(), is(400));
        assertThat(invalid.body(), containsString("#/amount/value"));
        HttpResponse<String> unknown = Http.post(service.business("/v1/authorizations/" + id + "/captures"), key,
                "{\"amount\":{\"value\":5,\"currency\":\"EUR\",\"x\":1},\"reference\":\"order-1\"}");
        assertThat(unknown.statusCode(), is(400));
        assertThat(unknown.body(), containsString("\"#/reference\""));
        assertThat(unknown.body(), containsString("\"#/amount/x\""));
        assertThat(capture(id, key, 100, "EUR").statusCode(), is(201));
    }
}
