package com.example.payments;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.testing.Bytes;
import com.example.payments.testing.Http;
import com.example.payments.testing.ServiceProcess;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * Input that passes for something it is not, against the packaged jar: a card number written with separators other
 * than spaces and dashes (refused in {@code reference}, never stored nor logged), a body in UTF-16 or UTF-32 that a
 * UTF-8 firewall in front would read as NUL-interleaved bytes (400 naming the encoding), a charset other than UTF-8
 * (415), a reference absent, null or empty under one key (three requests: 422), an {@code Idempotency-Key} that is a
 * list or comes twice (400). Every refusal is a problem; the log has no stack trace and no card number in any form.
 */
class DisguisedInputIT {

    private static final String PATH = "/v1/authorizations";
    private static ServiceProcess service;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceProcess.start(Map.of());
        service.awaitReady(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() throws Exception {
        service.signal("TERM");
        assertThat(service.awaitExit(Duration.ofSeconds(60)), is(0));
        List<String> output = service.output();
        service.close();
        assertThat("no stack trace", output.stream().filter(line -> line.startsWith("\tat ")
                || line.contains("Exception:") || line.contains(" ERROR ")).toList(), is(empty()));
        // The card number in any form: every separator the detector knows removed from between digits.
        String separators = "(?<=\\d)[\\p{Zs}\\p{Pd}\\p{Cf}._/+,]{1,2}(?=\\d)";
        assertThat(output.stream().filter(line -> line.replaceAll(separators, "").contains("4111111111111111"))
                .toList(), is(empty()));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "4111.1111.1111.1111",
            "4111_1111_1111_1111",
            "4111+1111+1111+1111",
            "4111,1111,1111,1111",
            "4111  1111  1111  1111",
            "4111\u20131111\u20131111\u20131111",
            "4111\u200B1111\u200B1111\u200B1111",
            "4111/1111/1111/1111",
            "4111\u00A01111\u00A01111\u00A01111",
            "order 4111.1111.1111.1111 of today",
    })
    void aCardNumberWithOtherSeparatorsInTheReferenceIsRefusedAndNeverStored(String reference) throws Exception {
        String key = key();
        HttpResponse<String> refused = post(key, "application/json", Bytes.utf8(body(reference)));
        assertThat(refused.statusCode(), is(400));
        assertProblem(refused);
        JsonNode error = json(refused).get("errors").get(0);
        assertThat(error.get("pointer").asText(), is("#/reference"));
        assertThat(error.get("detail").asText(), containsString("card number"));
        assertThat(digitsOf(refused.body()), not(containsString("4111111111111111")));
        // Nothing was claimed: the key serves a clean request as a new one, and GET returns no card number.
        HttpResponse<String> clean = post(key, "application/json", Bytes.utf8(Http.VALID_BODY));
        assertThat(clean.statusCode(), is(201));
        assertThat(clean.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
        HttpResponse<String> stored = Http.get(business(clean.headers().firstValue("Location").orElseThrow()));
        assertThat(stored.statusCode(), is(200));
        assertThat(digitsOf(stored.body()), not(containsString("4111111111111111")));
    }

    @ParameterizedTest(name = "{0}{1}")
    @CsvSource({
            "UTF-16LE, ''",
            "UTF-16BE, ''",
            "UTF-16LE, fffe",
            "UTF-16BE, feff",
            "UTF-32LE, ''",
            "UTF-32BE, 0000feff",
    })
    void aValidBodyInUtf16OrUtf32IsABadRequestNamingTheEncoding(String charset, String bomHex) throws Exception {
        byte[] body = Bytes.concat(HexFormat.of().parseHex(bomHex), Http.VALID_BODY.getBytes(Charset.forName(charset)));
        String key = key();
        HttpResponse<String> refused = post(key, "application/json", body);
        assertThat(refused.statusCode(), is(400));
        assertProblem(refused);
        JsonNode error = json(refused).get("errors").get(0);
        assertThat(error.get("pointer").asText(), is("#"));
        assertThat(error.get("detail").asText(), containsString(charset));
        assertThat(post(key, "application/json", Bytes.utf8(Http.VALID_BODY)).statusCode(), is(201));
    }

    @Test
    void aNulByteAndAUtf8ByteOrderMarkAreBadRequests() throws Exception {
        HttpResponse<String> nul = post(key(), "application/json", Bytes.concat(Bytes.utf8(Http.VALID_BODY),
                                                                                new byte[] {0}));
        assertThat(nul.statusCode(), is(400));
        assertThat(json(nul).get("errors").get(0).get("detail").asText(), containsString("NUL"));
        HttpResponse<String> bom = post(key(), "application/json", Bytes.concat(HexFormat.of().parseHex("efbbbf"),
                                                                                Bytes.utf8(Http.VALID_BODY)));
        assertThat(bom.statusCode(), is(400));
        assertProblem(bom);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "application/json; charset=iso-8859-1 | ISO-8859-1",
            "application/json; charset=utf-16     | UTF-16",
            "application/json; charset=utf-16le   | UTF-16LE",
    })
    void aCharsetOtherThanUtf8IsAnUnsupportedMediaType(String contentType, String charset) throws Exception {
        HttpResponse<String> refused = post(key(), contentType, Http.VALID_BODY.getBytes(Charset.forName(charset)));
        assertThat(refused.statusCode(), is(415));
        assertProblem(refused);
        assertThat(post(key(), "application/json; charset=utf-8", Bytes.utf8(Http.VALID_BODY)).statusCode(),
                   is(201));
    }

    @ParameterizedTest(name = "{0} then {1}")
    @CsvSource({"absent, empty", "empty, absent", "absent, null", "null, empty"})
    void anAbsentANullAndAnEmptyReferenceUnderOneKeyAreDifferentRequests(String first, String second)
            throws Exception {
        String key = key();
        HttpResponse<String> created = post(key, "application/json", Bytes.utf8(withReference(first)));
        assertThat(created.statusCode(), is(201));
        HttpResponse<String> reused = post(key, "application/json", Bytes.utf8(withReference(second)));
        assertThat(reused.statusCode(), is(422));
        assertProblem(reused);
        HttpResponse<String> replayed = post(key, "application/json", Bytes.utf8(withReference(first)));
        assertThat(replayed.statusCode(), is(201));
        assertThat(replayed.body(), is(created.body()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a, b", "\"a\", \"b\"", "a,b", "\"a\";v=1", "a b"})
    void anIdempotencyKeyThatIsNotExactlyOneKeyIsABadRequest(String header) throws Exception {
        HttpResponse<String> refused = Http.client().send(Http.request(business(PATH))
                .header("Content-Type", "application/json").header("Idempotency-Key", header)
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode(), is(400));
        assertProblem(refused);
        assertThat(json(refused).get("errors").get(0).get("header").asText(), is("Idempotency-Key"));
    }

    @Test
    void twoIdempotencyKeyFieldsAreABadRequest() throws Exception {
        HttpResponse<String> refused = Http.client().send(Http.request(business(PATH))
                .header("Content-Type", "application/json").header("Idempotency-Key", "a")
                .header("Idempotency-Key", "a")
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode(), is(400));
        assertProblem(refused);
    }

    private static HttpResponse<String> post(String key, String contentType, byte[] body) throws Exception {
        return Http.client().send(Http.request(business(PATH)).header("Content-Type", contentType)
                                          .header("Idempotency-Key", key)
                                          .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                                  HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static void assertProblem(HttpResponse<String> response) throws Exception {
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        assertThat(json(response).get("status").asInt(), is(response.statusCode()));
    }

    private static String body(String reference) {
        return Http.VALID_BODY.replace("\"order-42\"", "\"" + reference + "\"");
    }

    private static String withReference(String state) {
        return switch (state) {
        case "absent" -> Http.VALID_BODY.replace("\"reference\":\"order-42\",", "");
        case "null" -> Http.VALID_BODY.replace("\"order-42\"", "null");
        case "empty" -> Http.VALID_BODY.replace("\"order-42\"", "\"\"");
        default -> throw new IllegalArgumentException(state);
        };
    }

    private static JsonNode json(HttpResponse<String> response) throws Exception {
        return Json.mapper().readTree(response.body());
    }

    private static String digitsOf(String text) {
        StringBuilder digits = new StringBuilder();
        text.chars().filter(Character::isDigit).forEach(c -> digits.append(Character.digit(c, 10)));
        return digits.toString();
    }

    private static String business(String path) {
        return "http://127.0.0.1:" + service.businessPort() + path;
    }

    private static String key() {
        return "\"" + UUID.randomUUID() + "\"";
    }
}
