package com.example.payments;

import java.util.ArrayList;
import java.util.List;

import com.example.payments.http.EvictingConnectionCap;
import com.example.payments.http.Http1Listeners;
import com.example.payments.http.HttpSettings;
import com.example.payments.http.ProblemDirectHandler;
import com.example.payments.http.RequestDeadlines;
import com.example.payments.http.StrictHttp1;

import io.helidon.http.DirectHandler;
import io.helidon.http.DirectHandler.EventType;
import io.helidon.http.Status;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http.DirectHandlers;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http1.Http1ConnectionListener;
import io.helidon.webserver.spi.ServerConnectionSelector;

/**
 * The bounds both listeners get against hostile and broken clients (docs/hostile-clients.md): a connection cap and idle
 * timeout from their config nodes, a header deadline, problem bodies for what Helidon answers before routing, a request
 * line of at most {@value #MAX_REQUEST_LINE_BYTES} bytes (414 beyond) and a header section of at most
 * {@value #MAX_HEADER_SECTION_BYTES} bytes (431 beyond), and Helidon's HTTP/1.1 parser held to RFC 9112 where it is
 * lenient ({@link StrictHttp1}: a method that is not a token, chunked framing; 400 and the connection closed).
 */
final class ListenerBounds {

    /** Longest request line (method, target, version): 4 KiB, Helidon's default; longer is 414. */
    static final int MAX_REQUEST_LINE_BYTES = 4096;
    /** Largest header section: 16 KiB, Helidon's default; larger is 431. */
    static final int MAX_HEADER_SECTION_BYTES = 16 * 1024;
    /**
     * The health listener's Helidon cap, as a multiple of {@code health-server.max-tcp-connections}: beyond that cap
     * its connections are closed once they wait longer than {@link EvictingConnectionCap#GRACE}, and this leaves them
     * room meanwhile (docs/hostile-clients.md).
     */
    static final int HEALTH_CEILING = 4;

    private ListenerBounds() {
    }

    // The listener's builder with the bounds set, for the caller to add its port, features and routing.
    // evicting: null for Helidon's cap (new connections wait in the accept queue); else the cap that makes room, with
    // Helidon's cap four times as high: it holds the connections still in their grace and the closed ones whose threads
    // have not ended yet (EvictingConnectionCap).
    static WebServerConfig.Builder bounded(WebServerConfig.Builder builder, HttpSettings.ListenerLimits limits,
                                           EvictingConnectionCap evicting, RequestDeadlines deadlines,
                                           Runnable onResponse, ProblemDirectHandler problems) {
        Http1ConnectionListener responses = new Http1ConnectionListener() {
            @Override
            public void status(ConnectionContext ctx, Status status) {
                onResponse.run();
            }
        };
        List<Http1ConnectionListener> receive = new ArrayList<>(List.of(deadlines.headers()));
        List<Http1ConnectionListener> send = new ArrayList<>(List.of(responses));
        if (evicting != null) {
            receive.add(evicting.requestHeads());
            send.add(evicting.requestHeads());
        }
        // One receive and one send listener each (Http1Listeners says why).
        ServerConnectionSelector selector = StrictHttp1.create(Http1Config.builder()
                .maxPrologueLength(MAX_REQUEST_LINE_BYTES)
                .maxHeadersSize(MAX_HEADER_SECTION_BYTES)
                .addReceiveListener(Http1Listeners.of(receive))
                .addSendListener(Http1Listeners.of(send))
                .build());
        return builder
                .maxTcpConnections(evicting == null ? limits.maxTcpConnections()
                                                    : HEALTH_CEILING * limits.maxTcpConnections())
                .idleConnectionTimeout(limits.idleConnectionTimeout())
                .idleConnectionPeriod(limits.idleConnectionPeriod())
                // Hands Helidon's messages to the direct handler, which needs one to tell 431 from 400; they never
                // reach a response body.
                .errorHandling(errors -> errors.includeEntity(true))
                .directHandlers(problemHandlers(problems))
                // Ours only: a discovered default HTTP/1.1 protocol beside it would make Helidon sniff every new
                // connection for the right one, and close an HTTP/1.0 or HTTP/2.0 request line without an answer.
                // Helidon's HTTP/1.1, with request methods and chunk framing checked (see StrictHttp1).
                .protocolsDiscoverServices(false)
                .addConnectionSelector(evicting == null ? selector : evicting.around(selector));
    }

    private static DirectHandlers problemHandlers(DirectHandler handler) {
        DirectHandlers.Builder builder = DirectHandlers.builder();
        for (EventType type : EventType.values()) {
            builder.addHandler(type, handler);
        }
        return builder.build();
    }
}
