package com.example.payments.idempotency;

import java.util.Optional;

/**
 * The value of the {@code Idempotency-Key} request header (IETF draft-ietf-httpapi-idempotency-key-header: an
 * RFC 8941 sf-string such as {@code "8e03978e-40d5-43e8-bc93-6894a57f9324"}). A bare token without quotes is accepted
 * too, since many clients send one. After unquoting, the key is 1 to 255 printable ASCII characters (0x20-0x7E).
 *
 * @param value the key without quotes
 */
public record IdempotencyKey(String value) {

    /** Name of the request header. */
    public static final String HEADER = "Idempotency-Key";

    /** Longest accepted key, in characters. */
    public static final int MAX_LENGTH = 255;

    /**
     * Parses the header value.
     *
     * @param header the raw header value
     * @return the key, or empty when the value is not a valid sf-string or token of 1-255 printable ASCII characters
     */
    public static Optional<IdempotencyKey> parse(String header) {
        if (header == null) {
            return Optional.empty();
        }
        String value = header.startsWith("\"") ? unquote(header) : header;
        if (value == null || value.isEmpty() || value.length() > MAX_LENGTH) {
            return Optional.empty();
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7E) {
                return Optional.empty();
            }
        }
        return Optional.of(new IdempotencyKey(value));
    }

    // RFC 8941 section 4.2.5: a DQUOTE-delimited string where only \" and \\ are escapes.
    private static String unquote(String quoted) {
        if (quoted.length() < 2 || !quoted.endsWith("\"")) {
            return null;
        }
        StringBuilder out = new StringBuilder(quoted.length());
        for (int i = 1; i < quoted.length() - 1; i++) {
            char c = quoted.charAt(i);
            if (c == '\\') {
                if (i + 1 >= quoted.length() - 1) {
                    return null;
                }
                char next = quoted.charAt(++i);
                if (next != '"' && next != '\\') {
                    return null;
                }
                out.append(next);
            } else if (c == '"') {
                return null;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    @Override
    public String toString() {
        return value;
    }
}
