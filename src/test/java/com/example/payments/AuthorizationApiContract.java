package com.example.payments;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.LogCapture;
import com.example.payments.testing.TestCredentials;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.not;

/**
 * The authorization API over the wire: statuses, problem bodies with pointers, idempotent replay,
 * and that card numbers and CVCs never come back or reach a log. One suite, run unchanged on every idempotency and
 * authorization backend by a subclass that says how to configure it: {@code AuthorizationApiTest} (in-memory),
 * {@code RedisAuthorizationApiTest}, {@code PostgresAuthorizationApiTest}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AuthorizationApiContract {

    private TestService service;
    private LogCapture logs;

    /**
     * The backend's configuration; may start the server it needs (and skip the suite when it is not installed).
     *
     * @return config overrides, e.g. {@code idempotency.store: redis} and its URI
     * @throws Exception when the server does not start
     */
    abstract Map<String, String> backend() throws Exception;

    /** Stops what {@link #backend()} started. */
    void stopBackend() {
    }

    @BeforeAll
    void start() throws Exception {
        Map<String, String> backend = backend();
        logs = LogCapture.start();
        service = TestService.start(backend);
    }

    @AfterAll
    void stop() {
        if (service == null) {
            stopBackend();
            return;
        }
        service.close();
        stopBackend();
        // Without the listeners' addresses: an ephemeral port such as 41987 would hold the CVC's digits.
        String text = logs.text().replaceAll("http://[0-9.]+:\\d+", "http://address");
        logs.close();
        for (String secret : new String[] {"4111111111111111", "5555555555554444", "4000000000000119",
                                           "4111111111111112"}) {
            assertThat("log must not contain " + secret, text, not(containsString(secret)));
        }
        // The CVC as a token of its own: request ids (hex) may hold any three digits.
        assertThat("log must not contain the CVC", Pattern.compile("(?<![0-9A-Za-z])987(?![0-9A-Za-z])")
                .matcher(text).find(), is(false));
    }

    private static String key() {
        return "\"" + UUID.randomUUID() + "\"";
    }

    private static String body(String card, long amount) {
        return Http.VALID_BODY.replace("4111111111111111", card).replace("\"value\":1299", "\"value\":" + amount);
    }

    private static JsonNode json(HttpResponse<String> response) throws Exception {
        return Json.mapper().readTree(response.body());
    }

    @Test
    void aValidRequestIsAuthorizedWithLocationAndNoCardNumber() throws Exception {
        HttpResponse<String> response = service.post(key(), Http.VALID_BODY);
        assertThat(response.statusCode(), is(201));
        JsonNode body = json(response);
        assertThat(body.get("status").asText(), is("APPROVED"));
        assertThat(body.get("card").get("brand").asText(), is("visa"));
        assertThat(body.get("card").get("last4").asText(), is("1111"));
        // A version 8 UUID: 122 bits of a keyed hash of the attempt id.
        assertThat(body.get("id").asText().matches("[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"), is(true));
        assertThat(response.headers().firstValue("Location").orElseThrow(),
                   is("/v1/authorizations/" + body.get("id").asText()));
        assertThat(response.body(), not(containsString("4111111111111111")));
        assertThat(response.body(), not(containsString("cvc")));
    }

    @Test
    void theSameRequestAgainReplaysTheStoredAnswerByteForByte() throws Exception {
        String key = key();
        double before = service.authorizerInvocations();
        HttpResponse<String> first = service.post(key, Http.VALID_BODY);
        // Field order and whitespace differ: the fingerprint is over the canonical form.
        String reordered = """
                { "card": {"cvc":"123","expiryYear":2030,"expiryMonth":12,"number":"4111111111111111"},
                  "amount": {"currency":"EUR","value":1299}, "reference":"order-42", "merchantId":"m_123" }""";
        HttpResponse<String> second = service.post(key, reordered);
        assertThat(second.statusCode(), is(first.statusCode()));
        assertThat(second.body(), is(first.body()));
        assertThat(second.headers().firstValue("Idempotent-Replayed").orElseThrow(), is("true"));
        assertThat(second.headers().firstValue("Location"), is(first.headers().firstValue("Location")));
        assertThat(first.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
        assertThat(service.authorizerInvocations() - before, is(1.0));
        HttpResponse<String> read = service.get(service.business(first.headers().firstValue("Location").orElseThrow()));
        assertThat("GET answers the same bytes", read.body(), is(first.body()));
    }

    @Test
    void theSameRequestUnderAnotherKeyIsAnotherAuthorization() throws Exception {
        HttpResponse<String> one = service.post(key(), Http.VALID_BODY);
        HttpResponse<String> two = service.post(key(), Http.VALID_BODY);
        assertThat(json(two).get("id").asText(), not(json(one).get("id").asText()));
    }

    @Test
    void aDifferentCvcIsStillTheSameRequest() throws Exception {
        String key = key();
        HttpResponse<String> first = service.post(key, Http.VALID_BODY);
        HttpResponse<String> second = service.post(key, Http.VALID_BODY.replace("\"123\"", "\"987\""));
        assertThat(second.statusCode(), is(201));
        assertThat(second.body(), is(first.body()));
    }

    @Test
    void theSameKeyWithAnotherAmountIsUnprocessable() throws Exception {
        String key = key();
        assertThat(service.post(key, Http.VALID_BODY).statusCode(), is(201));
        HttpResponse<String> reused = service.post(key, body("4111111111111111", 1300));
        assertThat(reused.statusCode(), is(422));
        assertThat(reused.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        assertThat(json(reused).get("status").asInt(), is(422));
    }

    @ParameterizedTest(name = "{0} then {1}")
    @CsvSource({
            "absent, empty",
            "empty, absent",
            "absent, null",
            "null, absent",
            "empty, null",
            "null, empty",
    })
    void anAbsentANullAndAnEmptyReferenceAreDifferentRequestsUnderOneKey(String first, String second)
            throws Exception {
        String key = key();
        assertThat(service.post(key, withReference(first)).statusCode(), is(201));
        HttpResponse<String> reused = service.post(key, withReference(second));
        assertThat(reused.statusCode(), is(422));
        assertThat(reused.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        // Each state replays itself.
        HttpResponse<String> again = service.post(key, withReference(first));
        assertThat(again.statusCode(), is(201));
        assertThat(again.headers().firstValue("Idempotent-Replayed").orElseThrow(), is("true"));
    }

    // The valid body with its reference absent, JSON null or the empty string.
    private static String withReference(String state) {
        return switch (state) {
        case "absent" -> Http.VALID_BODY.replace("\"reference\":\"order-42\",", "");
        case "null" -> Http.VALID_BODY.replace("\"order-42\"", "null");
        case "empty" -> Http.VALID_BODY.replace("\"order-42\"", "\"\"");
        default -> throw new IllegalArgumentException(state);
        };
    }

    @Test
    void theSameKeyFromAnotherMerchantIsAnotherRequest() throws Exception {
        String key = key();
        assertThat(service.post(key, Http.VALID_BODY).statusCode(), is(201));
        HttpResponse<String> other = Http.post(service.business("/v1/authorizations"), key,
                                               Http.VALID_BODY.replace("m_123", TestCredentials.OTHER_MERCHANT),
                                               TestCredentials.bearer(TestCredentials.OTHER_KEY));
        assertThat(other.statusCode(), is(201));
        assertThat(other.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
    }

    @Test
    void aMissingIdempotencyKeyIsABadRequestNamingTheHeader() throws Exception {
        HttpResponse<String> response = service.post(null, Http.VALID_BODY);
        assertThat(response.statusCode(), is(400));
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        JsonNode problem = json(response);
        assertThat(problem.get("type").asText(), containsString("invalid-idempotency-key"));
        assertThat(problem.get("title").asText(), is("Invalid Idempotency-Key"));
        assertThat(problem.get("errors").get(0).get("header").asText(), is("Idempotency-Key"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"\"\"", "\"unterminated", "\"bad\\escape\"", "\"tab\there\"", "a, b",
            "\"a\", \"b\"", "\"a\";v=1", "with space"})
    void anInvalidIdempotencyKeyIsABadRequest(String header) throws Exception {
        assertThat(service.post(header, Http.VALID_BODY).statusCode(), is(400));
    }

    @Test
    void aKeyOf255PrintableCharactersIsAcceptedAnd256IsNot() throws Exception {
        String key255 = "k".repeat(200) + " !#$%&'()*+,-./:;<=>?@[]^_`{|}~".repeat(2).substring(0, 55);
        assertThat(key255.length(), is(255));
        // Spaces, commas and the other delimiters are key characters only inside an sf-string.
        assertThat(service.post("\"" + key255 + "\"", Http.VALID_BODY).statusCode(), is(201));
        assertThat(service.post("\"" + key255 + "x\"", Http.VALID_BODY).statusCode(), is(400));
        assertThat(service.post("k".repeat(255), Http.VALID_BODY).statusCode(), is(201));
        assertThat(service.post("k".repeat(256), Http.VALID_BODY).statusCode(), is(400));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "\"number\":\"4111111111111112\"|#/card/number",
            "\"number\":4111111111111111|#/card/number",
            "\"number\":\"41111111111\"|#/card/number",
            "\"expiryMonth\":12|#/card/expiryMonth",
            "\"cvc\":\"123\"|#/card/cvc"})
    void anInvalidCardFieldIsABadRequestWithItsPointerAndNoCardData(String field, String pointer) throws Exception {
        String replacement = switch (pointer) {
        case "#/card/expiryMonth" -> "\"expiryMonth\":13";
        case "#/card/cvc" -> "\"cvc\":\"12a\"";
        default -> field;
        };
        String original = pointer.equals("#/card/number") ? "\"number\":\"4111111111111111\"" : field;
        HttpResponse<String> response = service.post(key(), Http.VALID_BODY.replace(original, replacement));
        assertThat(response.statusCode(), is(400));
        JsonNode problem = json(response);
        assertThat(problem.get("errors").get(0).get("pointer").asText(), is(pointer));
        // Without the request id: hex, it may hold "12a" or any digits by chance.
        String withoutRequestId = response.body().replaceAll("\"requestId\":\"[0-9a-f]+\"", "");
        assertThat(withoutRequestId, not(containsString("4111111111")));
        assertThat(withoutRequestId, not(containsString("12a")));
    }

    @Test
    void everyInvalidFieldIsReportedAtOnce() throws Exception {
        String bad = """
                {"amount":{"value":-5,"currency":"XYZ"},
                 "card":{"number":"1234","expiryMonth":1,"expiryYear":2020,"cvc":"1"}}""";
        JsonNode problem = json(service.post(key(), bad));
        assertThat(problem.get("status").asInt(), is(400));
        assertThat(problem.get("errors").toString(), is(
                "[{\"pointer\":\"#/merchantId\",\"detail\":\"required: 1 to 64 characters of A-Z, a-z, 0-9, '.', "
                + "'_', '-'\"},{\"pointer\":\"#/amount/value\",\"detail\":\"required: an integer > 0 in minor units "
                + "(1299 = 12.99)\"},{\"pointer\":\"#/amount/currency\",\"detail\":\"required: an ISO 4217 currency "
                + "code such as EUR\"},{\"pointer\":\"#/card/number\",\"detail\":\"required: a string of 12 to 19 "
                + "digits with a valid Luhn check digit\"},{\"pointer\":\"#/card/expiryYear\",\"detail\":\"the card "
                + "has expired\"},{\"pointer\":\"#/card/cvc\",\"detail\":\"required: a string of 3 or 4 digits\"}]"));
    }

    @Test
    void aReferenceIsCountedInCharactersNotUtf16Units() throws Exception {
        String emoji = "\uD83D\uDE00";
        HttpResponse<String> longest = service.post(key(), Http.VALID_BODY.replace("order-42",
                                                                                   "\\uD83D\\uDE00".repeat(128)));
        assertThat(longest.body(), longest.statusCode(), is(201));
        assertThat(json(longest).get("reference").asText(), is(emoji.repeat(128)));
        HttpResponse<String> tooLong = service.post(key(), Http.VALID_BODY.replace("order-42", emoji.repeat(129)));
        assertThat(tooLong.statusCode(), is(400));
        assertThat(json(tooLong).get("errors").toString(), is("[{\"pointer\":\"#/reference\",\"detail\":"
                + "\"optional: a string of at most 128 printable characters\"}]"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "right-to-left override (Cf) | \\u202E",
            "zero width space (Cf) | \\u200B",
            "zero width no-break space (Cf) | \\uFEFF",
            "soft hyphen (Cf) | \\u00AD",
            "private use (Co) | \\uE000",
            "supplementary private use (Co) | \\uDB80\\uDC00",
            "unassigned (Cn) | \\u0378",
            "noncharacter U+FFFE | \\uFFFE",
            "noncharacter U+FFFF | \\uFFFF",
            "noncharacter U+FDD0 | \\uFDD0",
            "noncharacter U+10FFFF | \\uDBFF\\uDFFF",
            "control (Cc) | \\u0085",
            "line separator (Zl) | \\u2028",
            "paragraph separator (Zp) | \\u2029",
    })
    void aReferenceWithAnInvisibleOrUnassignedCharacterIsRefused(String name, String escape) throws Exception {
        HttpResponse<String> response = service.post(key(), Http.VALID_BODY.replace("order-42",
                                                                                     "order" + escape + "42"));
        assertThat(response.body(), response.statusCode(), is(400));
        assertThat(json(response).get("errors").toString(), is("[{\"pointer\":\"#/reference\",\"detail\":"
                + "\"optional: a string of at most 128 printable characters\"}]"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "1999, 400, 'required: an integer year from 2000 to 2999'",
            "3000, 400, 'required: an integer year from 2000 to 2999'",
            "9999, 400, 'required: an integer year from 2000 to 2999'",
            "2000, 400, 'the card has expired'",
            "2999, 201, ''",
    })
    void theExpiryYearRunsFrom2000To2999(int year, int status, String detail) throws Exception {
        HttpResponse<String> response = service.post(key(), Http.VALID_BODY.replace("\"expiryYear\":2030",
                                                                                     "\"expiryYear\":" + year));
        assertThat(response.body(), response.statusCode(), is(status));
        if (status == 400) {
            assertThat(json(response).get("errors").toString(), is("[{\"pointer\":\"#/card/expiryYear\","
                                                                    + "\"detail\":\"" + detail + "\"}]"));
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "\"reference\":\"order-42\",                  | \"refrence\":\"order-42\",                    | #/refrence",
            "\"amount\":{                                  | \"metadata\":{\"pan\":\"x\"},\"amount\":{           | #/metadata",
            "\"currency\":\"EUR\"                           | \"currency\":\"EUR\",\"x\":1                     | #/amount/x",
            "\"cvc\":\"123\"                                | \"cvc\":\"123\",\"name\":\"A B\"                  | #/card/name",
            "\"cvc\":\"123\"                                | \"cvc\":\"123\",\"4111111111111111\":1          | #/card",
            "\"cvc\":\"123\"                                | \"cvc\":\"123\",\"a b\":1                       | #/card",
    })
    void anUnknownMemberIsABadRequestNamingItAndTakesNoKey(String from, String to, String pointer) throws Exception {
        String key = key();
        HttpResponse<String> response = service.post(key, Http.VALID_BODY.replace(from, to));
        assertThat(response.body(), response.statusCode(), is(400));
        JsonNode error = json(response).get("errors").get(0);
        assertThat(error.get("pointer").asText(), is(pointer));
        assertThat(error.get("detail").asText(), containsString("unknown member; allowed: "));
        assertThat(response.body(), not(containsString("4111111111111111")));
        assertThat(service.post(key, Http.VALID_BODY).statusCode(), is(201));
    }

    @Test
    void thousandsOfUnknownMembersAreListedTwentyAtMost() throws Exception {
        StringBuilder members = new StringBuilder();
        for (int i = 0; i < 1500; i++) {
            members.append("\"m").append(i).append("\":1,");
        }
        HttpResponse<String> response = service.post(key(), Http.VALID_BODY.replaceFirst("\\{", "{" + members));
        assertThat(response.body(), response.statusCode(), is(400));
        JsonNode problem = json(response);
        assertThat(problem.get("errors").size(), is(20));
        assertThat(problem.get("errors").get(0).get("pointer").asText(), is("#/m0"));
        assertThat(problem.get("detail").asText(), endsWith("The first 20 of 1500 field errors are listed."));
        assertThat(response.body().length(), lessThan(4096));
    }

    @Test
    void malformedJsonIsABadRequestThatDoesNotQuoteTheInput() throws Exception {
        HttpResponse<String> response = service.post(key(), "{\"card\":{\"number\":4111111111111111x}}");
        assertThat(response.statusCode(), is(400));
        assertThat(json(response).get("errors").get(0).get("pointer").asText(), is("#"));
        assertThat(response.body(), not(containsString("4111111111111111")));
    }

    @Test
    void invalidRequestsNeverTakeTheKey() throws Exception {
        String key = key();
        assertThat(service.post(key, body("4111111111111112", 1299)).statusCode(), is(400));
        assertThat(service.post(key, Http.VALID_BODY).statusCode(), is(201));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"application/json;", "application/json;;charset=utf-8",
            "application/json ;charset=utf-8", "application/json ; charset=utf-8", "application/json;charset=utf-8;"})
    void whitespaceAroundSemicolonsAndEmptyParametersAreStillJson(String contentType) throws Exception {
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .header("Content-Type", contentType).header("Idempotency-Key", key())
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.body(), response.statusCode(), is(201));
    }

    @Test
    void aBodyThatIsNotJsonIsUnsupportedMediaType() throws Exception {
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .header("Content-Type", "text/plain").header("Idempotency-Key", key())
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode(), is(415));
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
    }

    @Test
    void aBodyOver16KibIsTooLargeAsAProblem() throws Exception {
        String padded = Http.VALID_BODY.replace("\"order-42\"", "\"" + "x".repeat(17 * 1024) + "\"");
        // Helidon answers 413 from the headers and closes without reading the body; a client that writes the whole
        // body before reading (as the JDK client does) must ask first, or it may see a reset instead of the 413.
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .expectContinue(true)
                .header("Content-Type", "application/json").header("Idempotency-Key", key())
                .POST(HttpRequest.BodyPublishers.ofString(padded)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode(), is(413));
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        assertThat(json(response).get("status").asInt(), is(413));
    }

    @Test
    void anOversizedBodyThatIsNotJsonIsUnsupportedMediaTypeFirst() throws Exception {
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .expectContinue(true)
                .header("Content-Type", "text/plain").header("Idempotency-Key", key())
                .POST(HttpRequest.BodyPublishers.ofString("x".repeat(17 * 1024))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode(), is(415));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "''",
            "{\"merchantId\":\"m_123\"} trailing",
            "{\"merchantId\":\"m_123\"}{\"merchantId\":\"m_456\"}",
            "{\"merchantId\":\"m_123\",\"merchantId\":\"m_456\"}"})
    void anEmptyOrAmbiguousBodyIsABadRequestNeverAServerError(String body) throws Exception {
        HttpResponse<String> response = service.post(key(), body);
        assertThat(response.statusCode(), is(400));
        assertThat(json(response).get("errors").get(0).get("pointer").asText(), is("#"));
    }

    @Test
    void duplicateCardNumbersAreRejectedRatherThanOneOfThemChosen() throws Exception {
        String twoNumbers = Http.VALID_BODY.replace("\"number\":\"4111111111111111\"",
                                                    "\"number\":\"4000000000000002\",\"number\":\"4111111111111111\"");
        assertThat(service.post(key(), twoNumbers).statusCode(), is(400));
    }

    @ParameterizedTest
    @CsvSource({"*/*", "application/*", "text/json"})
    void aWildcardOrOtherContentTypeIsUnsupported(String contentType) throws Exception {
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .header("Content-Type", contentType).header("Idempotency-Key", key())
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode(), is(415));
    }

    @Test
    void jsonWithACharsetParameterIsAccepted() throws Exception {
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .header("Content-Type", "application/json; charset=utf-8").header("Idempotency-Key", key())
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode(), is(201));
    }

    @Test
    void twoIdempotencyKeyHeadersAreABadRequest() throws Exception {
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key()).header("Idempotency-Key", key())
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode(), is(400));
        assertThat(json(response).get("detail").asText(), is("Send exactly one Idempotency-Key header."));
    }

    @Test
    void aChunkedBodyOver16KibIsTooLargeEvenWithoutAKey() throws Exception {
        byte[] big = ("{\"reference\":\"" + "x".repeat(17 * 1024) + "\"}").getBytes();
        // An InputStream publisher has no known length, so the JDK client sends it chunked.
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .expectContinue(true)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(big))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode(), is(413));
    }

    @Test
    void aCurrencyWithoutMinorUnitsIsNotAcceptedForPayment() throws Exception {
        HttpResponse<String> response = service.post(key(), Http.VALID_BODY.replace("EUR", "XAU"));
        assertThat(response.statusCode(), is(400));
        assertThat(json(response).get("errors").get(0).get("pointer").asText(), is("#/amount/currency"));
    }

    @Test
    void aReadBackAuthorizationIsNotCached() throws Exception {
        String location = service.post(key(), Http.VALID_BODY).headers().firstValue("Location").orElseThrow();
        assertThat(service.get(service.business(location)).headers().firstValue("Cache-Control").orElseThrow(),
                   is("no-store"));
    }

    @Test
    void anUnknownMethodIsNotImplementedAndTaggedOtherInTheRequestMetrics() throws Exception {
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .method("XPURGE" + UUID.randomUUID().toString().substring(0, 4).toUpperCase(java.util.Locale.ROOT),
                        HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode(), is(501));
        // The request metrics filter records after the response is written: poll, the client may be faster.
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(10).toNanos();
        double counted = 0;
        while (counted < 1 && System.nanoTime() < deadline) {
            counted = service.metric("http_server_request_duration_seconds_count", Map.of("method", "other"));
            if (counted < 1) {
                Thread.sleep(20);
            }
        }
        assertThat(counted >= 1, is(true));
    }

    @Test
    void anAuthorizationCanBeReadBackByIdAndAnUnknownIdIsNotFound() throws Exception {
        HttpResponse<String> created = service.post(key(), Http.VALID_BODY);
        String location = created.headers().firstValue("Location").orElseThrow();
        HttpResponse<String> found = service.get(service.business(location));
        assertThat(found.statusCode(), is(200));
        assertThat(found.body(), is(created.body()));
        HttpResponse<String> missing = service.get(service.business("/v1/authorizations/" + UUID.randomUUID()));
        assertThat(missing.statusCode(), is(404));
        assertThat(json(missing).get("status").asInt(), is(404));
    }

    @ParameterizedTest
    @CsvSource({"4000000000000002,card_declined", "4000000000009995,insufficient_funds"})
    void declinesAreProcessedRequests(String card, String code) throws Exception {
        HttpResponse<String> response = service.post(key(), body(card, 1299));
        assertThat(response.statusCode(), is(201));
        assertThat(json(response).get("status").asText(), is("DECLINED"));
        assertThat(json(response).get("declineCode").asText(), is(code));
    }

    @Test
    void anAmountAboveTheDefaultLimitDeclines() throws Exception {
        JsonNode body = json(service.post(key(), body("5555555555554444", 1_000_001)));
        assertThat(body.get("status").asText(), is("DECLINED"));
        assertThat(body.get("declineCode").asText(), is("limit_exceeded"));
        assertThat(body.get("card").get("brand").asText(), is("mastercard"));
    }

    @Test
    void anUnreachableIssuerIsABadGatewayAndARetryRunsTheAuthorizerAgain() throws Exception {
        String key = key();
        double before = service.authorizerInvocations();
        HttpResponse<String> first = service.post(key, body("4000000000000119", 1299));
        assertThat(first.statusCode(), is(502));
        assertThat(first.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        HttpResponse<String> retry = service.post(key, body("4000000000000119", 1299));
        assertThat(retry.statusCode(), is(502));
        assertThat(service.authorizerInvocations() - before, is(2.0));
        assertThat(service.metric("authorizer_invocations_total", Map.of("outcome", "unknown")) > 0, is(true));
        assertThat(service.metric("idempotency_keys_released_total", Map.of("reason", "issuer_unavailable")) >= 2,
                   is(true));
    }

    @Test
    void aKeyThatA502ReleasedStaysBoundToItsRequest() throws Exception {
        String key = key();
        assertThat(service.post(key, body("4000000000000119", 1299)).statusCode(), is(502));
        // The issuer may have acted on the first request's attempt id: only its retry may use the key.
        HttpResponse<String> other = service.post(key, body("4111111111111111", 1299));
        assertThat(other.body(), other.statusCode(), is(422));
        assertThat(json(other).get("type").asText(), endsWith("/idempotency-key-reused"));
        HttpResponse<String> retry = service.post(key, body("4000000000000119", 1299));
        assertThat(retry.body(), retry.statusCode(), is(502));
    }
}
