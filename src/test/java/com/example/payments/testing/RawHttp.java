package com.example.payments.testing;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * One HTTP/1.1 connection over a plain {@link Socket}, for tests that must see what a client library hides: the
 * {@code Connection} header, when the server closes the socket, a refused connect, a reset before any response byte.
 * Records every step in a {@link Timeline} under one source name. Test code only: no chunked uploads (but raw bytes
 * can be sent as they are), no TLS. A header sent twice reads as its values joined with ", ".
 */
public final class RawHttp implements AutoCloseable {

    /** How a connection attempt or exchange ended without a response. */
    public static final class NoResponseException extends IOException {
        NoResponseException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * A complete response.
     *
     * @param status         status code
     * @param headers        header names in lower case; a header sent more than once has its values joined by ", "
     * @param body           the body, read to its {@code Content-Length}
     * @param firstByteNanos when the first response byte arrived
     * @param endNanos       when the last body byte arrived
     */
    public record Response(int status, Map<String, String> headers, String body, long firstByteNanos,
                           long endNanos) {
        /**
         * Whether the server announced it closes the connection.
         *
         * @return {@code true} for {@code Connection: close}
         */
        public boolean connectionClose() {
            return "close".equalsIgnoreCase(headers.getOrDefault("connection", ""));
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final Timeline timeline;
    private final String source;
    private final int port;

    private RawHttp(Socket socket, int port, Timeline timeline, String source) throws IOException {
        this.socket = socket;
        this.port = port;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
        this.timeline = timeline;
        this.source = source;
    }

    /**
     * Opens a connection to 127.0.0.1.
     *
     * @param port     the port
     * @param timeline where {@code connected} or {@code refused} and every later step is recorded; {@code null}
     *                 records nothing
     * @param source   the timeline source, e.g. {@code keep-alive}
     * @return the connection
     * @throws ConnectException when the connection is refused (recorded)
     * @throws IOException      on any other failure
     */
    public static RawHttp connect(int port, Timeline timeline, String source) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        } catch (ConnectException e) {
            if (timeline != null) {
                timeline.add(source, "refused");
            }
            socket.close();
            throw e;
        }
        socket.setSoTimeout(30_000);
        RawHttp connection = new RawHttp(socket, port, timeline, source);
        connection.record("connected (local port " + socket.getLocalPort() + ")");
        return connection;
    }

    /**
     * Sends one request and reads the whole response.
     *
     * @param method  e.g. {@code GET}
     * @param path    e.g. {@code /ping}
     * @param headers extra headers
     * @param body    request body, or {@code null}
     * @return the response
     * @throws NoResponseException when the connection ended before any response byte (recorded)
     * @throws IOException         when it ended in the middle of a response, or timed out
     */
    public Response exchange(String method, String path, Map<String, String> headers, String body)
            throws IOException {
        byte[] content = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        StringBuilder request = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\n")
                .append("Host: 127.0.0.1:").append(port).append("\r\n");
        headers.forEach((name, value) -> request.append(name).append(": ").append(value).append("\r\n"));
        if (body != null) {
            request.append("Content-Length: ").append(content.length).append("\r\n");
        }
        request.append("\r\n");
        record("send " + method + " " + path);
        try {
            out.write(request.toString().getBytes(StandardCharsets.US_ASCII));
            out.write(content);
            out.flush();
        } catch (IOException e) {
            record("no response: " + e.getMessage());
            throw new NoResponseException("no response byte: " + e.getMessage(), e);
        }
        Response response = readResponse(method.equals("HEAD"));
        OpenApiContract.check(method, port, path.split("\\?", 2)[0], response.status(), name -> Optional.ofNullable(
                                      response.headers().get(name.toLowerCase(Locale.ROOT))), response.body());
        return response;
    }

    /**
     * Writes raw bytes: a request exactly as a hostile or broken client would send it, or part of one.
     *
     * @param bytes what to write
     * @throws IOException when the connection is broken
     */
    public void send(byte[] bytes) throws IOException {
        record("send " + bytes.length + " raw bytes");
        out.write(bytes);
        out.flush();
    }

    /**
     * Writes raw text (ISO-8859-1) with {@link #send(byte[])}.
     *
     * @param text e.g. {@code "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"}
     * @throws IOException when the connection is broken
     */
    public void send(String text) throws IOException {
        send(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    /**
     * Writes raw text that the server may refuse to read: it may answer and close before the client is done, so a
     * failed write is no error here (what the server did is asserted on its answer and on the connection).
     *
     * @param text e.g. a request head and a body the server should never parse as a request
     */
    public void sendQuietly(String text) {
        try {
            send(text);
        } catch (IOException e) {
            record("send failed: " + e.getMessage());
        }
    }

    /**
     * Reads one response: status line, headers and the body by its {@code Content-Length} (none for a {@code HEAD}).
     *
     * @param head whether the request was a {@code HEAD}, whose response has no body whatever its headers say
     * @return the response
     * @throws NoResponseException when the connection ended before any response byte
     * @throws IOException         when it ended in the middle of a response, or timed out
     */
    public Response readResponse(boolean head) throws IOException {
        int first;
        try {
            first = in.read();
        } catch (SocketTimeoutException e) {
            throw e;
        } catch (IOException e) {
            record("no response: " + e.getMessage());
            throw new NoResponseException("no response byte: " + e.getMessage(), e);
        }
        if (first < 0) {
            record("no response: EOF");
            throw new NoResponseException("EOF before any response byte", new EOFException());
        }
        return readResponse(first, head);
    }

    /**
     * Whether the server sends nothing more within the timeout (no stray body after a {@code HEAD} answer, no
     * answer to bytes it must not parse as a request), without closing.
     *
     * @param timeout how long to listen
     * @return {@code true} when nothing arrived and the connection is still open
     * @throws IOException when the server sent bytes
     */
    public boolean silentFor(Duration timeout) throws IOException {
        socket.setSoTimeout((int) timeout.toMillis());
        try {
            int next = in.read();
            if (next >= 0) {
                byte[] more = in.readNBytes(Math.min(in.available(), 200));
                throw new IOException("unexpected bytes: " + (char) next
                                      + new String(more, StandardCharsets.ISO_8859_1));
            }
            return false;
        } catch (SocketTimeoutException e) {
            return true;
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("unexpected bytes")) {
                throw e;
            }
            return false;
        } finally {
            socket.setSoTimeout(30_000);
        }
    }

    private Response readResponse(int first, boolean head) throws IOException {
        long firstByte = System.nanoTime();
        recordAt(firstByte, "first-byte");
        String statusLine = (char) first + readLine();
        Map<String, String> responseHeaders = new LinkedHashMap<>();
        for (String line = readLine(); !line.isEmpty(); line = readLine()) {
            int colon = line.indexOf(':');
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            responseHeaders.merge(name, value, (a, b) -> a + ", " + b);
        }
        int length = head ? 0 : Integer.parseInt(responseHeaders.getOrDefault("content-length", "0"));
        byte[] bodyBytes = in.readNBytes(length);
        if (bodyBytes.length != length) {
            record("truncated body");
            throw new EOFException("body truncated: " + new String(bodyBytes, StandardCharsets.UTF_8));
        }
        Response response = new Response(Integer.parseInt(statusLine.split(" ")[1]), responseHeaders,
                                          new String(bodyBytes, StandardCharsets.UTF_8), firstByte, System.nanoTime());
        recordAt(response.endNanos(), "status " + response.status()
                + (response.connectionClose() ? " Connection: close" : "") + " (" + length + " body bytes)");
        return response;
    }

    /**
     * Waits for the server to close the connection (EOF), recording when it did.
     *
     * @param timeout how long to wait
     * @return {@code true} when the server closed it (EOF or reset) within the timeout
     * @throws IOException when the server sent more bytes instead
     */
    public boolean awaitServerClose(Duration timeout) throws IOException {
        socket.setSoTimeout((int) timeout.toMillis());
        try {
            int next = in.read();
            if (next >= 0) {
                throw new IOException("unexpected byte after the response: " + next);
            }
            record("server closed the connection (EOF)");
            return true;
        } catch (SocketTimeoutException e) {
            record("still open after " + timeout.toMillis() + " ms");
            return false;
        } catch (IOException e) {
            record("server closed the connection (" + e.getMessage() + ")");
            return true;
        }
    }

    private void record(String what) {
        recordAt(System.nanoTime(), what);
    }

    private void recordAt(long nanos, String what) {
        if (timeline != null) {
            timeline.addAt(nanos, source, what);
        }
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new EOFException("connection closed in the middle of the response head");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
