package com.example.payments.http;

import java.util.List;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

import io.helidon.http.HeaderNames;
import io.helidon.http.Headers;
import io.helidon.http.HttpMediaType;

/**
 * The one Jackson {@link ObjectMapper} of the service, shared by the Helidon Jackson media support and by the code
 * that serializes responses to bytes (an idempotent replay must be byte-identical, so bodies are serialized once and
 * stored as bytes); and which request bodies are UTF-8 JSON, from the {@code Content-Type} and from the first bytes.
 *
 * <p>RFC 8259 section 8.1: JSON text exchanged between systems that are not part of a closed ecosystem MUST be
 * encoded in UTF-8, without a byte order mark. A parser that guesses the encoding (Jackson reads UTF-16 and UTF-32
 * from a BOM or from NUL bytes among the first four) would accept a body that a UTF-8 firewall or card scanner in
 * front of this service read as NUL-interleaved bytes, and saw no card number in: such a body is refused before the
 * parser sees it.
 */
public final class Json {

    // Strict parsing: trailing content and duplicate keys are errors, so that this service and every proxy, WAF or
    // log pipeline in front of it read the same request (with duplicates, each parser may keep a different value).
    // Buffers from one shared pool: Jackson's default pool is per thread, and every request runs on a virtual thread
    // of its own, so each parse and each serialization would allocate fresh buffers.
    private static final ObjectMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
                                                                          .recyclerPool(JsonRecyclerPools
                                                                                  .sharedConcurrentDequePool())
                                                                          .build())
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            // A parser error must never carry the body it was reading (it could hold a card number or a CVC).
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            .build();

    private Json() {
    }

    /**
     * The shared mapper. Thread-safe; do not reconfigure it.
     *
     * @return mapper
     */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /**
     * Serializes a value to UTF-8 JSON bytes.
     *
     * @param value a record or map
     * @return the bytes
     * @throws IllegalStateException if the value cannot be serialized (a bug, never a client error)
     */
    public static byte[] bytes(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("Cannot serialize " + value.getClass().getName(), e);
        }
    }

    /**
     * Whether a {@code Content-Type} announces JSON this service reads: {@code application/json} with no
     * {@code charset} parameter or {@code charset=utf-8} (any case, quoted or not). {@code application/json} defines
     * no charset parameter (RFC 8259 section 11) and its text is UTF-8: a body announced in another charset is
     * answered 415 rather than decoded as something it says it is not. Other parameters are ignored; a wildcard type
     * is no content type. Read from the header's text by RFC 9110 section 8.3.1 ({@code type "/" subtype
     * *( OWS ";" OWS [ parameter ] )}): whitespace around {@code ;} and empty parameters
     * ({@code application/json;}, {@code application/json ; charset=utf-8}) are JSON too, where Helidon's parser
     * refused the first (400) and read the second as another type (415).
     *
     * @param headers the request's headers
     * @return {@code true} for UTF-8 JSON; {@code false} without a {@code Content-Type} (or with more than one)
     */
    public static boolean isUtf8Json(Headers headers) {
        if (!headers.contains(HeaderNames.CONTENT_TYPE)) {
            return false;
        }
        List<String> values = headers.get(HeaderNames.CONTENT_TYPE).allValues();
        return values.size() == 1 && isUtf8Json(values.getFirst());
    }

    /**
     * {@link #isUtf8Json(Headers)} for one {@code Content-Type} value.
     *
     * @param contentType the header's value, e.g. {@code application/json; charset=utf-8}
     * @return {@code true} for UTF-8 JSON
     */
    public static boolean isUtf8Json(String contentType) {
        String[] parts = contentType.split(";", -1);
        if (!parts[0].strip().equalsIgnoreCase("application/json")) {
            return false;
        }
        for (int i = 1; i < parts.length; i++) {
            String parameter = parts[i].strip();
            int equals = parameter.indexOf('=');
            if (equals > 0 && parameter.substring(0, equals).strip().equalsIgnoreCase(HttpMediaType.CHARSET_PARAMETER)
                && !unquoted(parameter.substring(equals + 1).strip()).equalsIgnoreCase("utf-8")) {
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
