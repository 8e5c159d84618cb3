package com.example.payments.idempotency;

import java.util.Optional;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * {@code Idempotency-Key} parsing (IETF draft-ietf-httpapi-idempotency-key-header: an RFC 8941 sf-string).
 */
class IdempotencyKeyTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '#', value = {
            "\"8e03978e-40d5-43e8-bc93-6894a57f9324\"#8e03978e-40d5-43e8-bc93-6894a57f9324",
            "order-42#order-42",
            "\"with space\"#with space",
            "\"esc\\\"aped\\\\\"#esc\"aped\\",
            "\"a\"#a",
            "8e03978e-40d5-43e8-bc93-6894a57f9324#8e03978e-40d5-43e8-bc93-6894a57f9324",
            "tenant/order:42#tenant/order:42",
            "\"a, b\"#a, b"})
    void validKeysAreUnquoted(String header, String key) {
        assertThat(IdempotencyKey.parse(header), is(Optional.of(new IdempotencyKey(key))));
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"\"", "\"", "\"open", "\"in\"side\"", "\"bad\\escape\"", "caf\u00e9", "tab\there",
            "\"trailing\\\""})
    void invalidKeysAreRejected(String header) {
        assertThat(IdempotencyKey.parse(header), is(Optional.empty()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a, b", "a,b", "\"a\", \"b\"", "\"a\",\"b\"", "a, \"b\"", "\"a\";v=1", "a;v=1",
            "with space", "a=b", "(a)", "a\"b", "a,", ",a"})
    void anythingButExactlyOneStringOrTokenIsRejected(String header) {
        assertThat(IdempotencyKey.parse(header), is(Optional.empty()));
    }

    @org.junit.jupiter.api.Test
    void keysAreAtMost255Characters() {
        assertThat(IdempotencyKey.parse("x".repeat(255)).isPresent(), is(true));
        assertThat(IdempotencyKey.parse("\"" + "x".repeat(255) + "\"").isPresent(), is(true));
        assertThat(IdempotencyKey.parse("x".repeat(256)).isPresent(), is(false));
        assertThat(IdempotencyKey.parse(null).isPresent(), is(false));
    }
}
