package com.example.payments.http;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.http.BadRequestException;
import io.helidon.http.DirectHandler;
import io.helidon.http.RequestException;
import io.helidon.http.Status;
import io.helidon.webserver.http.DirectTransportRequest;

/**
 * The data reader of one HTTP/1.1 connection ({@link StrictHttp1}): the bytes the socket's reader has, with the two
 * places where Helidon 4.5.0's parser is lenient or fails with an unchecked exception held to RFC 9112.
 *
 * <p><b>The request line's method</b> (RFC 9112 section 3, RFC 9110 section 9.1: {@code method = token}, and
 * methods are case-sensitive). Helidon turns a method that is not a token ({@code G(T}, {@code {"merchantId":},
 * a leading control byte, a non-ASCII byte) into an {@code IllegalArgumentException} that escapes its parser and is
 * answered 500 with a logged stack trace; it upper-cases every other method, so {@code get} is served as
 * {@code GET}. Here the request line is checked when Helidon reads it: a method that is empty or not a token is
 * 400, a method that differs from a recognized one only in case is 501 (unrecognized, RFC 9110 section 9.1). Both
 * close the connection: the header section was not read, so where the next request starts is unknown. The same
 * kind covers the bytes left over after a too-short {@code Content-Length}, which Helidon reads as the next
 * request line. Helidon reads a whole line with {@link #readBytes(int)} only for a request line and a
 * {@code Connection} header's value; the request line is the first such read on the connection and the first after
 * each response ({@link #requestLineNext()}, called by the listener's send listener).
 *
 * <p><b>Chunked framing</b> (RFC 9112 section 7.1, {@code chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF},
 * {@code chunk-size = 1*HEXDIG}): each chunk's data must end in CRLF (Helidon skips the two bytes unread), and a
 * chunk-size line must be hexadecimal digits only (Helidon also takes {@code +9f} as {@code 9f}), at most
 * {@value #MAX_CHUNK_SIZE_LINE} of them. Each byte of a chunk-size line is checked as it arrives, so a body that
 * is not chunked at all ({@code {"merchantId":...}} under {@code Transfer-Encoding: chunked}) is refused at its first
 * byte instead of waiting for a line end that never comes. Broken framing is 400 and the connection is closed
 * (the route's problem, or the listener's direct handler).
 */
final class StrictRequestReader extends DataReader {

    /** Longest chunk-size line accepted, in bytes: a 2 GiB chunk is 8 hex digits; the rest leaves room for zeros. */
    static final int MAX_CHUNK_SIZE_LINE = 64;

    // The methods of RFC 9110 section 9 and PATCH (RFC 5789); any other token is unrecognized (501), here and in
    // RequestRulesFilter.
    static final Set<String> RECOGNIZED = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT",
                                                         "OPTIONS", "TRACE", "PATCH");
    // RFC 9110 section 5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`"
    // / "|" / "~" / DIGIT / ALPHA.
    private static final String TCHAR_SYMBOLS = "!#$%&'*+-.^_`|~";

    private int readingData;
    private volatile boolean requestLineNext = true;

    // The supplier constructor is the only one a subclass can call in Helidon 4.5 (deprecated for removal in
    // favour of a factory that cannot be subclassed); a Helidon without it fails the build here, not at run time.
    @SuppressWarnings("removal")
    StrictRequestReader(DataReader socket) {
        super(() -> {
            socket.ensureAvailable();
            return socket.readBytes(socket.available());
        }, false);
    }

    /** The next line Helidon reads whole is a request line: a response was just written. */
    void requestLineNext() {
        requestLineNext = true;
    }

    /**
     * Whether a string is an HTTP token (RFC 9110 section 5.6.2): one or more tchar.
     *
     * @param value the string
     * @return {@code true} for a token
     */
    static boolean isToken(String value) {
        if (value.isEmpty()) {
            return false;
        }
        for (int i = 0; i < value.length(); i++) {
            if (!isTokenChar(value.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean isTokenChar(int c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || TCHAR_SYMBOLS.indexOf(c) >= 0;
    }

    @Override
    public int findNewLine(int max) {
        if (requestLineNext) {
            // Each byte of the method is checked as it arrives: the bytes left after a too-short Content-Length (a
            // JSON body's tail) are refused at once, not after a line end that a JSON body does not have.
            for (int i = 0; i < max; i++) {
                int b = byteAt(i);
                if (b == ' ' || b == '\r') {
                    break;
                }
                if (!isTokenChar(b)) {
                    throw new BadRequestException("Request method is not a token");
                }
            }
        }
        return super.findNewLine(max);
    }

    @Override
    public byte[] readBytes(int len) {
        byte[] bytes = super.readBytes(len);
        if (requestLineNext) {
            requestLineNext = false;
            checkMethod(bytes);
        }
        return bytes;
    }

    private static void checkMethod(byte[] requestLine) {
        int space = 0;
        while (space < requestLine.length && requestLine[space] != ' ') {
            space++;
        }
        // ISO-8859-1 keeps every byte one char, so a non-ASCII byte fails the token check.
        String method = new String(requestLine, 0, space, StandardCharsets.ISO_8859_1);
        if (!isToken(method)) {
            // The message is Helidon's to log at DEBUG only; it quotes nothing from the request.
            throw new BadRequestException("Request method is not a token");
        }
        if (!RECOGNIZED.contains(method) && RECOGNIZED.contains(method.toUpperCase(Locale.ROOT))) {
            throw RequestException.builder()
                    .type(DirectHandler.EventType.BAD_REQUEST)
                    .status(Status.NOT_IMPLEMENTED_501)
                    .setKeepAlive(false)
                    .request(DirectTransportRequest.create("HTTP/1.1", method, "/"))
                    .message("Request method not recognized (methods are case-sensitive)")
                    .build();
        }
    }

    @Override
    public void skip(int length) {
        // Data of two bytes is skipped by readBuffer below; any other skip of two is a line end.
        if (length == 2 && readingData == 0 && !startsWithNewLine()) {
            throw new BadRequestException("Chunk data not followed by CRLF");
        }
        super.skip(length);
    }

    @Override
    public String readLine() {
        // Helidon reads whole lines only for chunk sizes and the end of a chunked body (an empty line). Each byte is
        // checked as it arrives: a line that can no longer be a chunk size is refused now, not at a line end.
        for (int i = 0; byteAt(i) != '\r'; i++) {
            if (i >= MAX_CHUNK_SIZE_LINE || !isHexDigit(byteAt(i))) {
                throw new BadRequestException("Chunk size not hexadecimal digits");
            }
        }
        return super.readLine();
    }

    private static boolean isHexDigit(int b) {
        return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F';
    }

    // The byte at an offset from the read position, waiting for it to arrive.
    private int byteAt(int offset) {
        return getBuffer(offset + 1).get(offset);
    }

    @Override
    public BufferData readBuffer() {
        readingData++;
        try {
            return super.readBuffer();
        } finally {
            readingData--;
        }
    }

    @Override
    public BufferData readBuffer(int length) {
        readingData++;
        try {
            return super.readBuffer(length);
        } finally {
            readingData--;
        }
    }
}
