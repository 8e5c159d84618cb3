package com.example.payments.lifecycle;

import com.example.payments.health.HealthState;

import io.helidon.http.HeaderValues;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * While draining, ends every business response with {@code Connection: close} and really closes the connection after
 * it. Keep-alive clients (and load-balancer connection pools) are moved off this pod one request at a time during the
 * pre-drain delay, instead of finding their connection reset when the listener closes. Helidon only sends the header;
 * throwing {@link CloseConnectionException} after the response is what closes the socket.
 */
public final class ConnectionCloseWhileDraining implements Filter {

    private final HealthState state;

    private ConnectionCloseWhileDraining(HealthState state) {
        this.state = state;
    }

    /**
     * Creates the filter.
     *
     * @param state where {@code draining} is read
     * @return the filter
     */
    public static ConnectionCloseWhileDraining create(HealthState state) {
        return new ConnectionCloseWhileDraining(state);
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        boolean[] closing = new boolean[1];
        // Decided when the response is about to be written, so a request that began before the signal closes too.
        res.beforeSend(() -> {
            if (state.draining()) {
                closing[0] = true;
                res.header(HeaderValues.CONNECTION_CLOSE);
            }
        });
        chain.proceed();
        if (closing[0]) {
            throw new CloseConnectionException("Draining: connection closed after the response");
        }
    }
}
