package com.example.payments.http;

import java.util.Map;
import java.util.Optional;

import io.helidon.http.HttpMediaType;

/**
 * Which request bodies are UTF-8 JSON, from the {@code Content-Type} and from the first bytes. RFC 8259 section 8.1:
 * JSON text exchanged between systems that are not part of a closed ecosystem MUST be encoded in UTF-8, without a byte
 * order mark. A parser that guesses the encoding (Jackson reads UTF-16 and UTF-32 from a BOM or from NUL bytes among
 * the first four) would accept a body that a UTF-8 firewall or card scanner in front of this service read as
 * NUL-interleaved bytes, and saw no card number in: such a body is refused before the parser sees it.
 */
public final class JsonEncoding {

    private JsonEncoding() {
    }

    /**
     * Whether a {@code Content-Type} announces JSON this service reads: {@code application/json} with no
     * {@code charset} parameter or {@code charset=utf-8} (any case, quoted or not). {@code application/json} defines
     * no charset parameter (RFC 8259 section 11) and its text is UTF-8: a body announced in another charset is
     * answered 415 rather than decoded as something it says it is not. Other parameters are ignored; a wildcard type
     * is no content type.
     *
     * @param contentType the request's content type, empty when it sent none
     * @return {@code true} for UTF-8 JSON
     */
    public static boolean isUtf8Json(Optional<HttpMediaType> contentType) {
        if (contentType.isEmpty()) {
            return false;
        }
        HttpMediaType type = contentType.get();
        if (!type.mediaType().type().equalsIgnoreCase("application")
            || !type.mediaType().subtype().equalsIgnoreCase("json")) {
            return false;
        }
        for (Map.Entry<String, String> parameter : type.parameters().entrySet()) {
            if (parameter.getKey().equalsIgnoreCase(HttpMediaType.CHARSET_PARAMETER)
                && !unquoted(parameter.getValue()).equalsIgnoreCase("utf-8")) {
                return false;
            }
        }
        return true;
    }

    private static String unquoted(String value) {
        return value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")
                ? value.substring(1, value.length() - 1) : value;
    }

    /**
     * What a body is instead of UTF-8 without a byte order mark, told by a BOM or by where its NUL bytes are (the
     * patterns of RFC 4627 section 3: {@code 00 00 00 xx} is UTF-32BE, {@code xx 00 00 00} UTF-32LE, {@code 00 xx}
     * UTF-16BE, {@code xx 00} UTF-16LE). A NUL byte anywhere else is named by its offset. The bytes are not otherwise
     * checked: well-formed UTF-8 is {@link JsonBody}'s strict decoder's part.
     *
     * @param bytes the body
     * @return what is wrong, starting with "the body", or {@code null} when the body has no BOM and no NUL byte
     */
    static String notUtf8(byte[] bytes) {
        if (startsWith(bytes, 0x00, 0x00, 0xFE, 0xFF)) {
            return "the body is UTF-32BE (byte order mark 00 00 FE FF), not UTF-8";
        }
        if (startsWith(bytes, 0xFF, 0xFE, 0x00, 0x00)) {
            return "the body is UTF-32LE (byte order mark FF FE 00 00), not UTF-8";
        }
        if (startsWith(bytes, 0xFE, 0xFF)) {
            return "the body is UTF-16BE (byte order mark FE FF), not UTF-8";
        }
        if (startsWith(bytes, 0xFF, 0xFE)) {
            return "the body is UTF-16LE (byte order mark FF FE), not UTF-8";
        }
        if (startsWith(bytes, 0xEF, 0xBB, 0xBF)) {
            return "the body starts with a byte order mark (EF BB BF)";
        }
        int nul = indexOfNul(bytes);
        if (nul < 0) {
            return null;
        }
        String encoding = null;
        if (nul == 0) {
            encoding = startsWith(bytes, 0x00, 0x00, 0x00) ? "UTF-32BE" : "UTF-16BE";
        } else if (nul == 1) {
            encoding = bytes.length >= 4 && bytes[2] == 0 && bytes[3] == 0 ? "UTF-32LE" : "UTF-16LE";
        }
        return encoding != null
                ? "the body is " + encoding + " (NUL bytes between its characters), not UTF-8"
                : "the body holds a NUL byte (byte " + nul + "), which UTF-8 JSON text never does";
    }

    private static boolean startsWith(byte[] bytes, int... prefix) {
        if (bytes.length < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if ((bytes[i] & 0xFF) != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    private static int indexOfNul(byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        return -1;
    }

}
