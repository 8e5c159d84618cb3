package com.example.payments.idempotency;

import java.util.Optional;

/**
 * The value of the {@code Idempotency-Key} request header (IETF draft-ietf-httpapi-idempotency-key-header: an
 * RFC 8941 sf-string such as {@code "8e03978e-40d5-43e8-bc93-6894a57f9324"}). A bare token without quotes is accepted
 * too, since many clients send one: 1 or more of RFC 9110's {@code tchar}, {@code :} and {@code /} (the characters of
 * an RFC 9110 token and of an RFC 8941 sf-token), e.g. {@code order-42} or
 * {@code 8e03978e-40d5-43e8-bc93-6894a57f9324}.
 * After unquoting, the key is 1 to 255 printable ASCII characters (0x20-0x7E).
 *
 * <p>The value is exactly one item: a list ({@code a, b}, {@code "a", "b"}), an item with parameters
 * ({@code "a";v=1}) or a bare value with spaces, quotes or other delimiters is no key (a client that meant one of
 * the list's members would otherwise be deduplicated on a key it never sent). Two header fields are refused by the
 * caller ({@link IdempotentOperation#key}).
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
     * @return the key, or empty when the value is not exactly one sf-string or bare token of 1-255 printable ASCII
     *         characters
     */
    public static Optional<IdempotencyKey> parse(String header) {
        if (header == null) {
            return Optional.empty();
        }
        boolean quoted = header.startsWith("\"");
        String value = quoted ? unquote(header) : header;
        if (value == null || value.isEmpty() || value.length() > MAX_LENGTH) {
            return Optional.empty();
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7E || !quoted && !isTokenChar(c)) {
                return Optional.empty();
            }
        }
        return Optional.of(new IdempotencyKey(value));
    }

    // RFC 9110 section 5.6.2 tchar, plus ':' and '/' which RFC 8941 section 3.3.4 allows in an sf-token. Excluded: the
    // delimiters of lists and parameters (',', ';', '='), whitespace and quotes.
    private static boolean isTokenChar(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
               || "!#$%&'*+-.^_`|~:/".indexOf(c) >= 0;
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
