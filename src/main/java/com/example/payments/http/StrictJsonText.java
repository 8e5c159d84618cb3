package com.example.payments.http;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

import com.example.payments.carddata.PanDetector;
import com.example.payments.http.Problem.FieldError;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * The text checks of {@link JsonBody}: the body's bytes are strict UTF-8, and every string of the parsed body is
 * Unicode text (RFC 8259 sections 8.1 and 8.2). Lenient decoding would replace a bad byte by U+FFFD, so two bodies
 * that differ only in that byte would look alike and one would be replayed as the other; an unpaired surrogate would
 * turn into {@code ?} the same way when encoded. A problem names the field where the fault is as a JSON pointer, cut
 * before the first name that is not a plain identifier or holds a card number (field names come from the client and
 * are echoed), and never quotes the input.
 */
final class StrictJsonText {

    static final Pattern PLAIN_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}|[0-9]{1,5}");

    private StrictJsonText() {
    }

    /**
     * The first bytes that are not well-formed UTF-8 (strict: no replacement of a bad byte), if any. The decoder needs
     * a char buffer as large as the body: call it only for a body that is not plain ASCII.
     *
     * @param bytes the body, already checked for a byte order mark and NUL bytes ({@link Json#notUtf8})
     * @return the problem's field (the value being read where the bad byte is) and the byte offset; empty when the
     *         bytes are UTF-8
     */
    static Optional<FieldError> notStrictUtf8(byte[] bytes) {
        return Optional.ofNullable(decodeStrictly(bytes));
    }

    /**
     * The first string, or field name, that holds an unpaired UTF-16 surrogate escape (not a Unicode character,
     * RFC 8259 section 8.2), if any. Only a backslash-u escape can make one (strict UTF-8 refuses an encoded
     * surrogate), so a body without a backslash needs no walk.
     *
     * @param json the parsed body
     * @return the problem naming it (a JSON pointer, cut before a name that is not a plain identifier); empty when
     *         every string is Unicode text
     */
    static Optional<FieldError> unpairedSurrogate(JsonNode json) {
        String surrogate = unpairedSurrogate(json, "");
        return surrogate == null ? Optional.empty()
                : Optional.of(FieldError.body(safePointer(surrogate), "contains an unpaired UTF-16 surrogate "
                        + "escape, which is not a Unicode character (RFC 8259 section 8.2)"));
    }

    // Strict UTF-8 (no replacement of bad bytes): the problem naming where the first bad byte is, or null when valid.
    private static FieldError decodeStrictly(byte[] bytes) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult result = decoder.decode(in, out, true);
        if (!result.isError()) {
            result = decoder.flush(out);
        }
        if (!result.isError()) {
            return null;
        }
        int offset = in.position();
        String prefix = out.flip().toString();
        return FieldError.body(pointerAtEnd(prefix), "not valid UTF-8 (byte " + offset
                + " of the body); request bodies are UTF-8 JSON (RFC 8259 section 8.1)");
    }

    // Pointer of the value being read where the text ends (the text is the body up to a bad byte).
    private static String pointerAtEnd(String prefix) {
        try (JsonParser parser = Json.mapper().createParser(prefix)) {
            try {
                while (parser.nextToken() != null) {
                    // read on to the end of the valid prefix
                }
            } catch (IOException e) {
                // expected: the prefix stops in the middle of a value
            }
            return safePointer(parser.getParsingContext().pathAsPointer().toString());
        } catch (IOException e) {
            return "#";
        }
    }

    // The RFC 6901 pointer of the first string (or, for a field name, of its object) that is not Unicode text.
    private static String unpairedSurrogate(JsonNode node, String pointer) {
        if (node.isTextual()) {
            return isUnicode(node.textValue()) ? null : pointer;
        }
        if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                String found = unpairedSurrogate(node.get(i), pointer + "/" + i);
                if (found != null) {
                    return found;
                }
            }
        }
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> field : node.properties()) {
                if (!isUnicode(field.getKey())) {
                    return pointer;
                }
                String found = unpairedSurrogate(field.getValue(), pointer + "/" + segment(field.getKey()));
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    private static boolean isUnicode(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    // RFC 6901 escaping of one reference token.
    private static String segment(String name) {
        return name.replace("~", "~0").replace("/", "~1");
    }

    // A pointer as "#/a/b", cut before the first name that is not a plain identifier: field names come from the client
    // and are echoed in the problem, so one that could carry card data is never repeated.
    private static String safePointer(String pointer) {
        StringBuilder safe = new StringBuilder("#");
        if (pointer.isEmpty()) {
            return safe.toString();
        }
        for (String name : pointer.substring(1).split("/", -1)) {
            if (!PLAIN_NAME.matcher(name).matches() || PanDetector.containsPan(name)) {
                break;
            }
            safe.append('/').append(name);
        }
        return safe.toString();
    }
}
