package com.example.payments.http;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.common.buffers.DataWriter;
import io.helidon.common.socket.HelidonSocket;
import io.helidon.common.socket.PeerInfo;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Status;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.ListenerContext;
import io.helidon.webserver.ProxyProtocolData;
import io.helidon.webserver.Router;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http1.Http1ConnectionListener;
import io.helidon.webserver.http1.Http1ConnectionSelector;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;

/**
 * Helidon's HTTP/1.1 connections, read through a {@link StrictRequestReader}: where Helidon 4.5.0 is lenient or fails
 * with a 500 on a client's bytes, the request is refused with the 4xx RFC 9112 asks for and the connection closed.
 * <ul>
 *     <li>A request line whose method is not a token ({@code G(T}, {@code {"merchantId":}, a control byte, also the
 *     bytes left after a too-short {@code Content-Length}): 400 (Helidon: 500 and a logged stack trace). A method
 *     that differs from a recognized one only in case ({@code get}): 501 (Helidon serves it as {@code GET}).</li>
 *     <li>Chunked framing (RFC 9112 section 7.1): chunk data not followed by CRLF, a chunk size that is not hex
 *     digits (a signed one, {@code +9f}, included), a body that is not chunked at all under
 *     {@code Transfer-Encoding: chunked}: 400 at the first wrong byte.</li>
 * </ul>
 *
 * <p>Why the chunk data rule: Helidon 4.5.0 skips the two bytes after a chunk's data without looking at them, so
 * {@code 5\r\nhelloXX0\r\n\r\n} is read as the body {@code hello}. On its own that only accepts a broken
 * message, but next to a proxy in front of the service that reads the same bytes differently (one that also accepts a
 * bare LF there, as many do), the two disagree on where the body ends: with {@code 5\r\nhello\n45\r\n...} the
 * proxy sees one 0x45-byte chunk while Helidon skips {@code \n4}, reads a 5-byte chunk and takes the rest of what the
 * proxy forwarded as the body as the next request on the connection. That is request smuggling: a request the proxy
 * never saw (and never authenticated, routed or logged) runs here, or swallows the next client's request. A signed
 * chunk size is the same kind: a proxy that stops at the first character that is not a hex digit reads {@code +9f}
 * as a last chunk.
 *
 * <p>How: Helidon has no option for either, so the connection is Helidon's own, handed the strict reader; a send
 * listener tells the reader that a response was written, so that the next line read whole is a request line.
 */
public final class StrictHttp1 implements ServerConnectionSelector {

    private final Http1ConnectionSelector http1;

    private StrictHttp1(Http1ConnectionSelector http1) {
        this.http1 = http1;
    }

    /**
     * Creates the connection selector of a listener that serves HTTP/1.1 only; register it as the listener's only
     * protocol (no {@code addProtocol}), so that no second selector makes Helidon sniff each connection.
     *
     * @param config the listener's HTTP/1.1 settings (prologue and header limits, receive and send listeners)
     * @return the selector
     */
    public static StrictHttp1 create(Http1Config config) {
        // One send listener that also calls the configured ones: Helidon 4.5.0's composite of several listeners
        // calls none of them for status, prologue or headers (Http1ConnectionListenerUtil.ListFrameListener).
        Http1Config withRequestEnds = Http1Config.builder()
                .from(config)
                .sendListeners(List.of(new RequestEnds(config.compositeSendListener())))
                .build();
        return new StrictHttp1(Http1ConnectionSelector.builder().config(withRequestEnds).build());
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
        return http1.connection(new StrictContext(ctx, new StrictRequestReader(ctx.dataReader())));
    }

    /** Tells a connection's reader that a response was written, then the listener configured for the listener. */
    private record RequestEnds(Http1ConnectionListener configured) implements Http1ConnectionListener {

        @Override
        public void status(ConnectionContext ctx, Status status) {
            if (ctx instanceof StrictContext strict) {
                strict.reader.requestLineNext();
            }
            configured.status(ctx, status);
        }

        @Override
        public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
            configured.prologue(ctx, prologue);
        }

        @Override
        public void headers(ConnectionContext ctx, Headers headers) {
            configured.headers(ctx, headers);
        }

        @Override
        public void data(ConnectionContext ctx, BufferData data) {
            configured.data(ctx, data);
        }

        @Override
        public void data(ConnectionContext ctx, byte[] data, int position, int length) {
            configured.data(ctx, data, position, length);
        }
    }

    /** The connection's context with the strict reader; everything else is the socket's own. */
    private static final class StrictContext implements ConnectionContext {

        private final ConnectionContext socket;
        private final StrictRequestReader reader;

        private StrictContext(ConnectionContext socket, StrictRequestReader reader) {
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
