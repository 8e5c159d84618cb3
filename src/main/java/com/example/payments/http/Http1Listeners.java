package com.example.payments.http;

import java.util.List;

import io.helidon.common.buffers.BufferData;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Status;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http1.Http1ConnectionListener;

/**
 * Several HTTP/1.1 connection listeners as one, each called for every event in order. A listener's
 * {@code Http1Config} must be given one receive and one send listener: Helidon 4.5.0's own composite of several
 * ({@code Http1ConnectionListener.create(List)}, also what {@code addSendListener} twice makes) calls none of them for
 * the prologue, the headers or the status, so a second listener would silently switch the first one off.
 */
public final class Http1Listeners implements Http1ConnectionListener {

    private final List<Http1ConnectionListener> listeners;

    private Http1Listeners(List<Http1ConnectionListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    /**
     * Combines listeners.
     *
     * @param listeners called in this order for every event
     * @return one listener
     */
    public static Http1ConnectionListener of(List<Http1ConnectionListener> listeners) {
        return listeners.size() == 1 ? listeners.getFirst() : new Http1Listeners(listeners);
    }

    @Override
    public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
        for (Http1ConnectionListener listener : listeners) {
            listener.prologue(ctx, prologue);
        }
    }

    @Override
    public void headers(ConnectionContext ctx, Headers headers) {
        for (Http1ConnectionListener listener : listeners) {
            listener.headers(ctx, headers);
        }
    }

    @Override
    public void status(ConnectionContext ctx, Status status) {
        for (Http1ConnectionListener listener : listeners) {
            listener.status(ctx, status);
        }
    }

    @Override
    public void data(ConnectionContext ctx, BufferData data) {
        for (Http1ConnectionListener listener : listeners) {
            listener.data(ctx, data);
        }
    }

    @Override
    public void data(ConnectionContext ctx, byte[] bytes, int offset, int length) {
        for (Http1ConnectionListener listener : listeners) {
            listener.data(ctx, bytes, offset, length);
        }
    }
}
