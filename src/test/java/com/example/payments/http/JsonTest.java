package com.example.payments.http;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import io.helidon.http.HeaderNames;
import io.helidon.http.WritableHeaders;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

/**
 * Which bodies and content types count as UTF-8 JSON, decided before Jackson could guess an encoding.
 */
class JsonTest {

    private static final String BODY = "{\"merchantId\":\"m_123\",\"reference\":\"order-42\"}";

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
            "UTF-16LE, ''",
            "UTF-16BE, ''",
            "UTF-16LE, fffe",
            "UTF-16BE, feff",
            "UTF-32LE, ''",
            "UTF-32BE, ''",
            "UTF-32LE, fffe0000",
            "UTF-32BE, 0000feff",
    })
    void utf16AndUtf32AreNamedWithOrWithoutAByteOrderMark(String charset, String bomHex) {
        byte[] text = BODY.getBytes(Charset.forName(charset));
        byte[] body = new byte[bomHex.length() / 2 + text.length];
        byte[] bom = HexFormat.of().parseHex(bomHex);
        System.arraycopy(bom, 0, body, 0, bom.length);
        System.arraycopy(text, 0, body, bom.length, text.length);
        assertThat(Json.notUtf8(body), containsString(charset));
        JsonBody.Result result = JsonBody.parse(body);
        assertThat(result, instanceOf(JsonBody.Invalid.class));
        assertThat(((JsonBody.Invalid) result).error().detail(), containsString(charset));
    }

    @Test
    void aUtf16BodyThatJacksonWouldReadIsRefusedBeforeIt() throws Exception {
        byte[] body = BODY.getBytes(StandardCharsets.UTF_16LE);
        // Every byte is below 0x80, and the parser detects UTF-16LE from the NUL bytes and reads the body.
        assertThat(Json.mapper().readTree(body).get("reference").asText(), is("order-42"));
        assertThat(JsonBody.parse(body), instanceOf(JsonBody.Invalid.class));
    }

    @Test
    void aNulByteAnywhereIsNamedByItsOffset() {
        byte[] body = (BODY + "\0").getBytes(StandardCharsets.UTF_8);
        assertThat(Json.notUtf8(body), containsString("NUL byte (byte " + BODY.length() + ")"));
    }

    @Test
    void aUtf8ByteOrderMarkIsNamed() {
        assertThat(Json.notUtf8(HexFormat.of().parseHex("efbbbf7b7d")), containsString("byte order mark"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{}", "{\"reference\":\"caf\u00e9 \uD83D\uDE00\"}", "[1,2]", " {\"a\":\"\\u0000\"}"})
    void utf8WithoutNulOrBomIsLeftToTheParser(String text) {
        assertThat(Json.notUtf8(text.getBytes(StandardCharsets.UTF_8)), is(nullValue()));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "application/json                        | true",
            "application/json; charset=utf-8         | true",
            "application/json; charset=UTF-8         | true",
            "application/json; charset=\"utf-8\"     | true",
            "application/json; v=1                   | true",
            "APPLICATION/JSON                        | true",
            "application/json; charset=iso-8859-1    | false",
            "application/json; charset=utf-16        | false",
            "application/json; charset=utf8          | false",
            "application/json; CHARSET=latin1        | false",
            "text/plain; charset=utf-8               | false",
            "application/problem+json                | false",
            // RFC 9110 section 8.3.1: OWS around ';' and empty parameters
            "application/json;                       | true",
            "application/json;;charset=utf-8         | true",
            "application/json ;charset=utf-8         | true",
            "application/json\t; charset=utf-8       | true",
            "application/json ; charset = latin1     | false",
            "application/jsonx                       | false",
    })
    void onlyApplicationJsonInUtf8IsUtf8Json(String contentType, boolean utf8Json) {
        assertThat(Json.isUtf8Json(contentType), is(utf8Json));
        assertThat(Json.isUtf8Json(WritableHeaders.create().set(HeaderNames.CONTENT_TYPE, contentType)),
                   is(utf8Json));
    }

    @Test
    void noContentTypeIsNoJson() {
        assertThat(Json.isUtf8Json(WritableHeaders.create()), is(false));
    }
}
