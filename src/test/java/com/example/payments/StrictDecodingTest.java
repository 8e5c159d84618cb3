package com.example.payments;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HexFormat;
import java.util.Map;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.testing.Bytes;
import com.example.payments.testing.Http;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

/**
 * Request bodies are decoded strictly as UTF-8 JSON (RFC 8259 sections 8.1 and 8.2). A body that is
 * not (bad bytes, a byte order mark, UTF-16 or UTF-32 with or without one, a NUL byte) gets 400 naming the field or
 * the encoding, and claims nothing: the same key then serves a valid request as a new one. A charset other than UTF-8
 * in {@code Content-Type} gets 415. Over the wire, both listeners started through Main's wiring.
 */
class StrictDecodingTest {

    private static TestService service;

    @BeforeAll
    static void start() {
        service = TestService.start(Map.of());
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    @Test
    void twoBodiesDifferingOnlyInAnInvalidByteAreNeitherStoredNorReplayedAsEachOther() throws Exception {
        String key = key();
        double calls = service.authorizerInvocations();
        HttpResponse<String> first = post(key, withReference("order-", "ff"));
        HttpResponse<String> second = post(key, withReference("order-", "fe"));
        for (HttpResponse<String> response : new HttpResponse[] {first, second}) {
            assertThat(response.statusCode(), is(400));
            assertThat(response.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
            assertThat(error(response).get("pointer").asText(), is("#/reference"));
            assertThat(error(response).get("detail").asText(), containsString("not valid UTF-8"));
        }
        assertThat(service.authorizerInvocations(), is(calls));
        // Nothing was claimed: the key serves a valid request, even one holding a real U+FFFD, as a new one.
        HttpResponse<String> valid = post(key, withReference("order-\uFFFD", ""));
        assertThat(valid.statusCode(), is(201));
        assertThat(valid.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
        assertThat(json(valid).get("reference").asText(), is("order-\uFFFD"));
        // ... and a bad byte under that key is still a bad request, never a replay of it.
        assertThat(post(key, withReference("order-", "ff")).statusCode(), is(400));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "lone continuation byte, 80",
            "overlong slash, c0af",
            "overlong NUL, e08080",
            "surrogate encoded in UTF-8 (CESU-8), eda080",
            "code point above U+10FFFF, f4908080",
            "five-byte form, f888808080",
            "truncated three-byte sequence, e282",
            "Latin-1 e-acute, e9",
    })
    void invalidUtf8InAFieldIsABadRequestNamingIt(String name, String hex) throws Exception {
        HttpResponse<String> response = post(key(), withReference("order-", hex));
        assertThat(response.statusCode(), is(400));
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        assertThat(error(response).get("pointer").asText(), is("#/reference"));
    }

    @Test
    void invalidUtf8InANestedFieldNamesThatField() throws Exception {
        byte[] body = Bytes.concat(Bytes.utf8(Http.VALID_BODY.substring(0, Http.VALID_BODY.indexOf("\"cvc\":\"") + 7)),
                             HexFormat.of().parseHex("ff"), Bytes.utf8("3\"}}"));
        assertThat(error(post(key(), body)).get("pointer").asText(), is("#/card/cvc"));
    }

    @Test
    void invalidUtf8InAFieldNameNamesTheBody() throws Exception {
        byte[] body = Bytes.concat(Bytes.utf8("{\"ref"), HexFormat.of().parseHex("ff"), Bytes.utf8("\":1}"));
        HttpResponse<String> response = post(key(), body);
        assertThat(response.statusCode(), is(400));
        assertThat(error(response).get("pointer").asText(), is("#"));
    }

    @Test
    void aByteOrderMarkIsABadRequest() throws Exception {
        byte[] body = Bytes.concat(HexFormat.of().parseHex("efbbbf"), Bytes.utf8(Http.VALID_BODY));
        HttpResponse<String> response = post(key(), body);
        assertThat(response.statusCode(), is(400));
        assertThat(error(response).get("pointer").asText(), is("#"));
        assertThat(error(response).get("detail").asText(), containsString("byte order mark"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "UTF-16LE without a BOM, UTF-16LE, , UTF-16LE",
            "UTF-16BE without a BOM, UTF-16BE, , UTF-16BE",
            "UTF-16LE with a BOM, UTF-16LE, fffe, UTF-16LE",
            "UTF-16BE with a BOM, UTF-16BE, feff, UTF-16BE",
            "UTF-32LE without a BOM, UTF-32LE, , UTF-32LE",
            "UTF-32BE without a BOM, UTF-32BE, , UTF-32BE",
            "UTF-32LE with a BOM, UTF-32LE, fffe0000, UTF-32LE",
            "UTF-32BE with a BOM, UTF-32BE, 0000feff, UTF-32BE",
    })
    void aBodyInAnotherUnicodeEncodingIsABadRequestNamingTheEncoding(String name, String charset, String bomHex,
                                                                     String named) throws Exception {
        byte[] text = Http.VALID_BODY.getBytes(java.nio.charset.Charset.forName(charset));
        byte[] body = bomHex == null ? text : Bytes.concat(HexFormat.of().parseHex(bomHex), text);
        String key = key();
        double calls = service.authorizerInvocations();
        HttpResponse<String> response = post(key, body);
        assertThat(response.statusCode(), is(400));
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        assertThat(error(response).get("pointer").asText(), is("#"));
        assertThat(error(response).get("detail").asText(), containsString(named));
        assertThat(service.authorizerInvocations(), is(calls));
        // Nothing was claimed: the key serves the same request in UTF-8 as a new one.
        HttpResponse<String> utf8 = post(key, Bytes.utf8(Http.VALID_BODY));
        assertThat(utf8.statusCode(), is(201));
        assertThat(utf8.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "NUL before the body, 00",
            "NUL after the body, END00",
            "NUL inside a string, order-\u0000",
    })
    void aNulByteAnywhereIsABadRequest(String name, String where) throws Exception {
        byte[] nul = {0};
        byte[] body = switch (where) {
        case "00" -> Bytes.concat(nul, Bytes.utf8(Http.VALID_BODY));
        case "END00" -> Bytes.concat(Bytes.utf8(Http.VALID_BODY), nul);
        default -> Bytes.concat(Bytes.utf8(Http.VALID_BODY.split("order-42")[0] + "order-"), nul,
                                Bytes.utf8(Http.VALID_BODY.split("order-42")[1]));
        };
        HttpResponse<String> response = post(key(), body);
        assertThat(response.statusCode(), is(400));
        assertThat(error(response).get("pointer").asText(), is("#"));
        assertThat(error(response).get("detail").asText(), containsString("NUL"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "application/json; charset=iso-8859-1",
            "application/json; charset=utf-16",
            "application/json; charset=UTF-16LE",
            "application/json; charset=\"latin1\"",
            "application/json;charset=us-ascii",
    })
    void aCharsetOtherThanUtf8IsAnUnsupportedMediaType(String contentType) throws Exception {
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .header("Content-Type", contentType).header("Idempotency-Key", key())
                .POST(HttpRequest.BodyPublishers.ofByteArray(Bytes.utf8(Http.VALID_BODY)))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode(), is(415));
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        assertThat(json(response).get("detail").asText(), containsString("UTF-8"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"application/json; charset=utf-8", "application/json; charset=UTF-8",
            "application/json;charset=\"utf-8\"", "Application/JSON"})
    void utf8JsonIsAcceptedWithOrWithoutItsCharset(String contentType) throws Exception {
        HttpResponse<String> response = Http.client().send(Http.request(service.business("/v1/authorizations"))
                .header("Content-Type", contentType).header("Idempotency-Key", key())
                .POST(HttpRequest.BodyPublishers.ofByteArray(Bytes.utf8(Http.VALID_BODY)))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode(), is(201));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "lone high surrogate, \\uD800",
            "lone low surrogate, \\uDC00x",
            "high surrogate at the end, x\\uDBFF",
            "two high surrogates, \\uD83D\\uD83D",
    })
    void anUnpairedSurrogateEscapeIsABadRequest(String name, String escape) throws Exception {
        HttpResponse<String> response = post(key(), Bytes.utf8(Http.VALID_BODY.replace("order-42", escape)));
        assertThat(response.statusCode(), is(400));
        assertThat(error(response).get("pointer").asText(), is("#/reference"));
        assertThat(error(response).get("detail").asText(), containsString("surrogate"));
    }

    @Test
    void anUnpairedSurrogateInAnUnknownFieldIsABadRequestToo() throws Exception {
        HttpResponse<String> response = post(key(), Bytes.utf8(Http.VALID_BODY.replace("{\"merchantId\"",
                "{\"notes\":[\"ok\",\"\\uD800\"],\"merchantId\"")));
        assertThat(response.statusCode(), is(400));
        assertThat(error(response).get("pointer").asText(), is("#/notes/1"));
    }

    @Test
    void validMultibyteTextAndSurrogatePairsAreAcceptedAndKeptExactly() throws Exception {
        String reference = "Caf\u00e9 \u65e5\u672c \uD83D\uDE00";
        HttpResponse<String> escaped = post(key(), Bytes.utf8(Http.VALID_BODY.replace("order-42",
                "Caf\\u00e9 \u65e5\u672c \\uD83D\\uDE00")));
        assertThat(escaped.statusCode(), is(201));
        assertThat(json(escaped).get("reference").asText(), is(reference));
        HttpResponse<String> raw = post(key(), Bytes.utf8(Http.VALID_BODY.replace("order-42", reference)));
        assertThat(raw.statusCode(), is(201));
        assertThat(json(raw).get("reference").asText(), is(reference));
    }

    private static byte[] withReference(String text, String hexBytes) {
        String[] parts = Http.VALID_BODY.split("order-42");
        return Bytes.concat(Bytes.utf8(parts[0] + text), HexFormat.of().parseHex(hexBytes), Bytes.utf8(parts[1]));
    }

    private static HttpResponse<String> post(String key, byte[] body) throws Exception {
        return Http.client().send(Http.request(service.business("/v1/authorizations"))
                                          .header("Content-Type", "application/json").header("Idempotency-Key", key)
                                          .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                                  HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode error(HttpResponse<String> response) throws Exception {
        return json(response).get("errors").get(0);
    }

    private static JsonNode json(HttpResponse<String> response) throws Exception {
        return Json.mapper().readTree(response.body());
    }

    private static String key() {
        return "\"" + UUID.randomUUID() + "\"";
    }
}
