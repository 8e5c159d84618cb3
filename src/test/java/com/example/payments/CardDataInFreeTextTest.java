package com.example.payments;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.LogCapture;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The free-text fields the API stores and returns ({@code reference}, {@code merchantId}) refuse
 * anything that looks like a card number: 400 naming the field, the value never echoed, nothing stored or claimed.
 */
class CardDataInFreeTextTest {

    private static TestService service;
    private static LogCapture logs;

    @BeforeAll
    static void start() {
        logs = LogCapture.start();
        service = TestService.start(Map.of());
    }

    @AfterAll
    static void stop() {
        service.close();
        String text = logs.text();
        logs.close();
        assertThat(text, not(containsString("4000056655665556")));
        assertThat(text, not(containsString("3782 822463 10005")));
        assertThat(text, not(containsString("4111.1111.1111.1111")));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "4000056655665556",
            "order 4000056655665556",
            "4000 0566 5566 5556",
            "4000-0566-5566-5556",
            "order-4000-0566-5566-5556-x",
            "3782 822463 10005",
            "card 4000056655665556 cvc 737",
            "\uFF14\uFF10\uFF10\uFF10\uFF10\uFF15\uFF16\uFF16\uFF15\uFF15\uFF16\uFF16\uFF15\uFF15\uFF15\uFF16",
            // other separators: one or two of Zs, Pd, Cf and . _ / + ,
            "4111.1111.1111.1111",
            "4111_1111_1111_1111",
            "4111+1111+1111+1111",
            "4111,1111,1111,1111",
            "4111/1111/1111/1111",
            "4111  1111  1111  1111",
            "4111\u20131111\u20131111\u20131111",
            "4111\u200B1111\u200B1111\u200B1111",
            "4111\u00A01111\u00A01111\u00A01111",
            "4111\u00AD1111\u00AD1111\u00AD1111",
            "order 4000.0566.5566.5556 paid",
            "3782.822463.10005",
            // digits outside the BMP, two chars each: mathematical bold, monospace, Adlam, Osmanya, segmented, mixed
            "\uD835\uDFD2\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF"
            + "\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF\uD835\uDFCF",
            "\uD835\uDFFA\uD835\uDFF7\uD835\uDFF7\uD835\uDFF7 \uD835\uDFF7\uD835\uDFF7\uD835\uDFF7\uD835\uDFF7"
            + " \uD835\uDFF7\uD835\uDFF7\uD835\uDFF7\uD835\uDFF7 \uD835\uDFF7\uD835\uDFF7\uD835\uDFF7\uD835\uDFF7",
            "\uD83A\uDD54\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51"
            + "\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51\uD83A\uDD51",
            "\uD801\uDCA4\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1"
            + "\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1\uD801\uDCA1",
            "\uD83E\uDFF4\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1"
            + "\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1\uD83E\uDFF1",
            "\uD835\uDFD2111111111111111",
    })
    void aCardNumberInTheReferenceIsRefusedAndNeverStored(String reference) throws Exception {
        String key = key();
        HttpResponse<String> refused = service.post(key, body("m_123", reference));
        assertThat(refused.statusCode(), is(400));
        assertThat(refused.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        JsonNode error = Json.mapper().readTree(refused.body()).get("errors").get(0);
        assertThat(error.get("pointer").asText(), is("#/reference"));
        assertThat(error.get("detail").asText(), containsString("card number"));
        assertThat(digitsOf(refused.body()), not(containsString(digitsOf(reference))));
        // Nothing was claimed or stored: the same key serves a clean request as a new one.
        HttpResponse<String> clean = service.post(key, body("m_123", "order-42"));
        assertThat(clean.statusCode(), is(201));
        assertThat(clean.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
        String location = clean.headers().firstValue("Location").orElseThrow();
        HttpResponse<String> stored = service.get(service.business(location));
        assertThat(digitsOf(stored.body()), not(containsString(digitsOf(reference))));
    }

    @ParameterizedTest
    @ValueSource(strings = {"4000056655665556", "m-4000-0566-5566-5556", "shop.4000056655665556"})
    void aCardNumberInTheMerchantIdIsRefused(String merchantId) throws Exception {
        HttpResponse<String> refused = service.post(key(), body(merchantId, "order-42"));
        assertThat(refused.statusCode(), is(400));
        JsonNode error = Json.mapper().readTree(refused.body()).get("errors").get(0);
        assertThat(error.get("pointer").asText(), is("#/merchantId"));
        assertThat(digitsOf(refused.body()), not(containsString(digitsOf(merchantId))));
    }

    @ParameterizedTest
    @CsvSource({
            "a number failing the Luhn check, order 4000056655665557",
            "a timestamp in ms failing it, 1764532000123",
            "twelve digits, 400005665566",
            "a date, 2026-11-30",
            "a UUID, 0b7e7d4a-2c1f-4e8a-9d3b-5f6a7c8d9e0f",
            "a UUID whose digits pass the Luhn check, 47470277-1795-4328-83ea-3a2051c9a4c4",
            "a hex id glued to Luhn-valid digits, 8f6753cd-0751-4298-9190-745609bbe3c6",
            "digits three separators apart, 4000   0566   5566   5556",
            "a list of amounts, '12.99, 45.00, 100.00, 7.50, 1.299.00'",
            "IPv4 addresses, 10.0.0.1/10.0.0.2/192.168.100.200",
            "dates, 2026-12-01_2026-12-02_2026-12-03",
            "a phone number, +49 152 59469851",
            "an invoice number, INV/2026/11/004567",
            "Luhn-valid digits not laid out as a card number, 41.11.11.11.11.11.11.11",
    })
    void otherNumbersInTheReferenceAreAccepted(String name, String reference) throws Exception {
        HttpResponse<String> response = service.post(key(), body("m_123", reference));
        assertThat(name, response.statusCode(), is(201));
        assertThat(Json.mapper().readTree(response.body()).get("reference").asText(), is(reference));
    }

    private static String body(String merchantId, String reference) {
        return Http.VALID_BODY.replace("\"m_123\"", "\"" + merchantId + "\"")
                .replace("\"order-42\"", "\"" + reference + "\"");
    }

    // The digits of a text, separators and everything else dropped, so that a card number comes back in no form.
    private static String digitsOf(String text) {
        StringBuilder digits = new StringBuilder();
        text.codePoints().filter(Character::isDigit).forEach(c -> digits.append(Character.digit(c, 10)));
        return digits.toString();
    }

    private static String key() {
        return "\"" + UUID.randomUUID() + "\"";
    }
}
