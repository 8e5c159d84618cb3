package com.example.payments.http;

import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;
import java.util.OptionalLong;

import com.example.payments.carddata.PanDetector;
import com.example.payments.http.Problem.FieldError;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;

import io.helidon.http.RequestException;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;

/**
 * Reads a request body as JSON strictly (RFC 8259): the bytes must be UTF-8 without a byte order mark and without
 * NUL bytes (so neither UTF-16 nor UTF-32, with or without a BOM, reaches the parser's encoding detection: see
 * {@link Json}), every string must be Unicode text (no unpaired surrogate escape), and the text must be one
 * JSON value (no trailing content, no duplicate keys: see {@link Json}).
 *
 * <p>Error details name the field and the byte offset and never quote the input: a parser message can quote a card
 * number or a CVC. The UTF-8 and surrogate checks, and why they are strict, are {@link StrictJsonText}'s.
 */
public final class JsonBody {

    private JsonBody() {
    }

    /** What reading a body gave. */
    public sealed interface Result {
    }

    /**
     * A JSON value.
     *
     * @param json the parsed body
     */
    public record Parsed(JsonNode json) implements Result {
    }

    /**
     * A body that was read whole but is not strict UTF-8 JSON: answer 400, the connection may stay open.
     *
     * @param error the field (or {@code #}, the whole body) and what is wrong with it
     */
    public record Invalid(FieldError error) implements Result {
    }

    /**
     * A body that could not be read: its framing is broken (a chunk size that is not hex, a chunk extension, a bad
     * last chunk, a body shorter than announced, content that cannot be decoded). Where the next request would
     * start is unknown, so answer 400 and close the connection (see
     * {@link ProblemResponses#sendAndClose(io.helidon.webserver.http.ServerRequest,
     * io.helidon.webserver.http.ServerResponse, Problem)}).
     */
    public record Unreadable() implements Result {
    }

    /**
     * The JSON pointer (RFC 6901) of a member to name in a problem: {@code parent/name} when the name is a plain
     * identifier (a letter or {@code _}, then at most 63 letters, digits or {@code _}; or at most 5 digits) that holds
     * no card number, else {@code parent} alone: member names come from the client and are echoed in the problem.
     *
     * @param parent the object's pointer, e.g. {@code #/amount}
     * @param name   the member's name as sent
     * @return the pointer, e.g. {@code #/amount/x}
     */
    public static String memberPointer(String parent, String name) {
        boolean plain = StrictJsonText.PLAIN_NAME.matcher(name).matches() && !PanDetector.containsPan(name);
        return plain ? parent + "/" + name : parent;
    }

    /**
     * Reads and parses the body.
     *
     * @param req the request; its entity is consumed
     * @return the parsed body, or why it is invalid or unreadable
     * @throws RequestException with status 413 when a chunked body outgrows the listener's {@code max-payload-size}
     *                          (answered by the listener's direct handler)
     */
    public static Result read(ServerRequest req) {
        if (!req.content().hasEntity()) {
            return new Invalid(FieldError.body("#", "the body must be a JSON object"));
        }
        byte[] bytes = bytes(req);
        return bytes == null ? new Unreadable() : parse(bytes);
    }

    /**
     * Reads the body's bytes, whatever its framing: no body, {@code Content-Length: 0} and a chunked body of its last
     * chunk alone ({@code 0\r\n\r\n}) all read as zero bytes, the same empty content (RFC 9112 section 7.1).
     *
     * @param req the request; its entity is consumed
     * @return the bytes, or {@code null} when the body ended before its length or its chunks are malformed
     * @throws RequestException with status 413 when a chunked body outgrows the listener's {@code max-payload-size}
     *                          (answered by the listener's direct handler)
     */
    public static byte[] bytes(ServerRequest req) {
        if (!req.content().hasEntity()) {
            return new byte[0];
        }
        try {
            OptionalLong length = req.headers().contentLength();
            return length.isPresent() ? readExactly(req, length.getAsLong()) : req.content().as(byte[].class);
        } catch (RequestException e) {
            if (e.status().code() == Status.REQUEST_ENTITY_TOO_LARGE_413.code()) {
                throw e;
            }
            return null;
        } catch (RuntimeException e) {
            // Helidon's chunk parser throws NumberFormatException quoting the bad line, which may be the whole body:
            // neither the exception nor its message goes anywhere.
            return null;
        }
    }

    // With a Content-Length (at most max-payload-size: the listener answers 413 before routing), one array of exactly
    // that size: reading "all bytes" allocates 16 KiB chunks per request and copies them. Null when the body ends early.
    private static byte[] readExactly(ServerRequest req, long length) {
        if (length > Integer.MAX_VALUE - 8) {
            return null;
        }
        byte[] bytes = new byte[(int) length];
        try (InputStream in = req.content().inputStream()) {
            return in.readNBytes(bytes, 0, bytes.length) == bytes.length ? bytes : null;
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Parses bytes as strict UTF-8 JSON. Refused before the parser sees them (400, naming the encoding where it can
     * be told): a byte order mark of UTF-8, UTF-16 or UTF-32; a NUL byte anywhere (UTF-16 and UTF-32 text hold one in
     * every ASCII character, and JSON has no place for an unescaped U+0000: the parser would otherwise guess UTF-16 or
     * UTF-32 from the first four bytes, and accept a body that a UTF-8 firewall or card scanner in front of this
     * service read as NUL-interleaved bytes); bytes that are not well-formed UTF-8.
     *
     * @param bytes the body
     * @return the parsed body or why it is invalid (never {@link Unreadable})
     */
    public static Result parse(byte[] bytes) {
        String wrongEncoding = Json.notUtf8(bytes);
        if (wrongEncoding != null) {
            return new Invalid(FieldError.body("#", wrongEncoding + "; send UTF-8 JSON without a byte order mark "
                                                    + "(RFC 8259 section 8.1)"));
        }
        // Plain ASCII without NUL (nearly every request) is valid UTF-8 by construction, and without a backslash it
        // holds no escape, so no unpaired surrogate: only other bodies pay for the strict checks.
        boolean ascii = true;
        boolean escapes = false;
        for (byte b : bytes) {
            ascii &= b >= 0;
            escapes |= b == '\\';
        }
        if (!ascii) {
            Optional<FieldError> notUtf8 = StrictJsonText.notStrictUtf8(bytes);
            if (notUtf8.isPresent()) {
                return new Invalid(notUtf8.get());
            }
        }
        JsonNode json;
        try {
            // From the bytes: Jackson's UTF-8 parser reads the array in place, with no Reader and no char buffer
            // of its own per request (buffers come from the mapper's shared pool, see Json). Its encoding detection
            // (a BOM, or NUL bytes among the first four) cannot fire: both were refused above.
            json = Json.mapper().readTree(bytes);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            String where = at == null ? "" : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
            return new Invalid(FieldError.body("#", "the body is not valid JSON" + where));
        } catch (IOException e) {
            // Reading an array in memory does no I/O; Jackson declares it anyway.
            return new Invalid(FieldError.body("#", "the body is not valid JSON"));
        }
        if (json == null || json.isMissingNode()) {
            return new Invalid(FieldError.body("#", "the body must be a JSON object"));
        }
        // A surrogate can only come from a backslash-u escape: strict UTF-8 refuses an encoded one.
        Optional<FieldError> surrogate = escapes ? StrictJsonText.unpairedSurrogate(json) : Optional.empty();
        return surrogate.isPresent() ? new Invalid(surrogate.get()) : new Parsed(json);
    }
}
