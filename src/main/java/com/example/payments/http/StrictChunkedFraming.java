package com.example.payments.http;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.regex.Pattern;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.common.buffers.DataWriter;
import io.helidon.common.socket.HelidonSocket;
import io.helidon.common.socket.PeerInfo;
import io.helidon.http.BadRequestException;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.ListenerContext;
import io.helidon.webserver.ProxyProtocolData;
import io.helidon.webserver.Router;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http1.Http1ConnectionSelector;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;

/**
 * Helidon's HTTP/1.1 connections, with the framing of chunked request bodies held to RFC 9112 section 7.1
 * ({@code chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF}, {@code chunk-size = 1*HEXDIG}) where Helidon 4.5.0 is
 * lenient: each chunk's data must end in CRLF, and a chunk-size line must be hexadecimal digits only (Helidon also
 * takes {@code +9f} as {@code 9f}).
 *
 * <p>Why: Helidon 4.5.0 skips the two bytes after a chunk's data without looking at them, so
 * {@code 5\r\nhelloXX0\r\n\r\n} is read as the body {@code hello}. On its own that only accepts a broken
 * message, but next to a proxy in front of the service that reads the same bytes differently (one that also accepts a
 * bare LF there, as many do), the two disagree on where the body ends: with {@code 5\r\nhello\n45\r\n...} the
 * proxy sees one 0x45-byte chunk while Helidon skips {@code \n4}, reads a 5-byte chunk and takes the rest of what the
 * proxy forwarded as the body as the next request on the connection. That is request smuggling: a request the proxy
 * never saw (and never authenticated, routed or logged) runs here, or swallows the next client's request. A signed
 * chunk size is the same kind: a proxy that stops at the first character that is not a hex digit reads {@code +9f}
 * as a last chunk. Such a chunk is now refused: 400 (the route's problem, or the listener's direct handler) and the
 * connection closed, so nothing after it is read as a request.
 *
 * <p>How: Helidon has no option for it, so the connection is Helidon's own, handed a data reader that refuses to skip
 * two bytes that are not CRLF, and to return a line that is neither empty nor hexadecimal digits. In Helidon's
 * HTTP/1.1 parser every other two-byte skip is a line end it has already found, and whole lines are read only for
 * chunk sizes and the end of a chunked body (the request line and headers are parsed in place), so only the
 * unchecked cases can fail.
 */
public final class StrictChunkedFraming implements ServerConnectionSelector {

    private final Http1ConnectionSelector http1;

    private StrictChunkedFraming(Http1ConnectionSelector http1) {
        this.http1 = http1;
    }

    /**
     * Creates the connection selector of a listener that serves HTTP/1.1 only; register it as the listener's only
     * protocol (no {@code addProtocol}), so that no second selector makes Helidon sniff each connection.
     *
     * @param config the listener's HTTP/1.1 settings (prologue and header limits, receive and send listeners)
     * @return the selector
     */
    public static StrictChunkedFraming create(Http1Config config) {
        return new StrictChunkedFraming(Http1ConnectionSelector.builder().config(config).build());
    }

    @Override
    public int bytesToIdentifyConnection() {
        return http1.bytesToIdentifyConnection();
    }

    @Override
    public Support supports(BufferData data) {
        return http1.supports(data);
    }

    @Override
    public Set<String> supportedApplicationProtocols() {
        return http1.supportedApplicationProtocols();
    }

    @Override
    public ServerConnection connection(ConnectionContext ctx) {
        return http1.connection(new StrictContext(ctx, new StrictReader(ctx.dataReader())));
    }

    /** The connection's data reader: what the socket's reader has, with line ends and chunk sizes checked. */
    private static final class StrictReader extends DataReader {

        private static final Pattern CHUNK_SIZE = Pattern.compile("[0-9A-Fa-f]+");

        private int readingData;

        // The supplier constructor is the only one a subclass can call in Helidon 4.5 (deprecated for removal in
        // favour of a factory that cannot be subclassed); a Helidon without it fails the build here, not at run time.
        @SuppressWarnings("removal")
        private StrictReader(DataReader socket) {
            super(() -> {
                socket.ensureAvailable();
                return socket.readBytes(socket.available());
            }, false);
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
            String line = super.readLine();
            if (!line.isEmpty() && !CHUNK_SIZE.matcher(line).matches()) {
                throw new BadRequestException("Chunk size not hexadecimal digits");
            }
            return line;
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

    /** The connection's context with the strict reader; everything else is the socket's own. */
    private static final class StrictContext implements ConnectionContext {

        private final ConnectionContext socket;
        private final DataReader reader;

        private StrictContext(ConnectionContext socket, DataReader reader) {
            this.socket = socket;
            this.reader = reader;
        }

        @Override
        public DataReader dataReader() {
            return reader;
        }

        @Override
        public ListenerContext listenerContext() {
            return socket.listenerContext();
        }

        @Override
        public ExecutorService executor() {
            return socket.executor();
        }

        @Override
        public DataWriter dataWriter() {
            return socket.dataWriter();
        }

        @Override
        public Router router() {
            return socket.router();
        }

        @Override
        public Optional<ProxyProtocolData> proxyProtocolData() {
            return socket.proxyProtocolData();
        }

        @Override
        public HelidonSocket serverSocket() {
            return socket.serverSocket();
        }

        @Override
        public PeerInfo remotePeer() {
            return socket.remotePeer();
        }

        @Override
        public PeerInfo localPeer() {
            return socket.localPeer();
        }

        @Override
        public boolean isSecure() {
            return socket.isSecure();
        }

        @Override
        public String socketId() {
            return socket.socketId();
        }

        @Override
        public String childSocketId() {
            return socket.childSocketId();
        }
    }
}
