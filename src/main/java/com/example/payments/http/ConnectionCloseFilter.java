package com.example.payments.http;

import java.util.function.BooleanSupplier;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.webserver.http.ServerRequest;

/**
 * Ends a response with {@code Connection: close} and really closes the connection after it when:
 * <ul>
 *     <li>the client asked for it with {@code Connection: close} (RFC 9112 section 9.6: the server closes the
 *     connection after the response);</li>
 *     <li>the request body was not read to its end when the response was sent (an early answer such as 415, 404,
 *     405, 413 or a 503 of the startup gate): the unread bytes, which the client may still send after an
 *     {@code Expect: 100-continue} that was never answered, would otherwise be parsed as the next request;</li>
 *     <li>the process is draining: keep-alive clients and load-balancer pools move off this pod one response at a
 *     time during the pre-drain delay, instead of finding their connection reset when the listener closes.</li>
 * </ul>
 * Helidon 4.5 sends the header in the first case but keeps reading the socket, and in the second case treats the
 * unread body of an unanswered {@code Expect: 100-continue} as absent. Throwing {@link CloseConnectionException}
 * after the response is what closes the socket. Register it first, so it sees the final response of every request,
 * including the problems Helidon's error handling writes.
 */
public final class ConnectionCloseFilter implements Filter {

    private final BooleanSupplier draining;

    private ConnectionCloseFilter(BooleanSupplier draining) {
        this.draining = draining;
    }

    /**
     * Creates the filter.
     *
     * @param draining whether the process is draining (the business listener), or always {@code false} (the health
     *                 listener, which serves probes until it closes last)
     * @return the filter
     */
    public static ConnectionCloseFilter create(BooleanSupplier draining) {
        return new ConnectionCloseFilter(draining);
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        boolean[] closing = new boolean[1];
        // Decided when the response is about to be written: by then a request that began before the signal may be
        // draining, and the handler has read the body or not.
        res.beforeSend(() -> {
            if (draining.getAsBoolean() || clientCloses(req) || bodyUnread(req)) {
                closing[0] = true;
                res.header(HeaderValues.CONNECTION_CLOSE);
            }
        });
        chain.proceed();
        if (closing[0]) {
            throw new CloseConnectionException("Connection closed after the response");
        }
    }

    private static boolean clientCloses(ServerRequest req) {
        return req.headers().containsToken(HeaderValues.CONNECTION_CLOSE);
    }

    private static boolean bodyUnread(ServerRequest req) {
        return bodyAnnounced(req) && !req.content().consumed();
    }

    /**
     * Whether the request announced a body.
     *
     * @param req the request
     * @return {@code true} for a {@code Content-Length} above 0 or a {@code Transfer-Encoding}
     */
    static boolean bodyAnnounced(ServerRequest req) {
        return req.headers().contains(HeaderNames.TRANSFER_ENCODING) || req.headers().contentLength().orElse(0) > 0;
    }
}
