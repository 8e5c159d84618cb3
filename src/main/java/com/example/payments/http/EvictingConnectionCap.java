package com.example.payments.http;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.concurrency.limits.Limit;
import io.helidon.common.task.InterruptableTask;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Status;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http1.Http1ConnectionListener;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;

/**
 * A connection cap that makes room instead of making new connections wait: once more than {@code cap} connections
 * are held, each new one closes the held connections that have waited longer than {@link #GRACE} (1 s) for a request
 * line (idle, or trickling it) or for the rest of a head whose request line came (half-sent), the longest waiting
 * first, until {@code cap} are held. A connection whose request has been read in full is never closed by the cap.
 *
 * <p>Why, on the health listener: Helidon 4.5's {@code max-tcp-connections} stops calling {@code accept()} at the
 * cap, so new connections wait in the kernel's accept queue, first come first served, until held ones close. Clients
 * that hold idle or half-sent connections and reopen each as it closes keep the queue ahead of the kubelet's probe
 * (measured: 64 such connections on a cap of 32 left 7 of 8 one-second probes unanswered), and a pod whose liveness
 * probe times out is restarted. Closing the oldest at once is not enough: the reopened connections arrive so fast
 * that a probe became the oldest within ms (measured: 5 of 8 probes closed unanswered). A probe sends its whole
 * request at once and is answered in ms, well within the grace, so it is never closed.
 *
 * <p>The bound: connections in their grace and closed ones whose threads have not ended yet are held beyond the cap,
 * so the listener's Helidon cap must leave room for them ({@code Listeners} gives it four times {@code cap}); up to
 * that many idle and half-sent connections cost a probe nothing. A client may lose an idle keep-alive connection (a
 * scraper between scrapes) while others flood the listener; it reconnects, as after an idle timeout (RFC 9112
 * section 9.3.1 lets either side close an idle connection).
 *
 * <p>How: the listener's connections come from {@link #around(ServerConnectionSelector)}, which registers each for
 * as long as Helidon handles it, and {@link #requestHeads()} (a receive and send listener of the listener's HTTP/1.1
 * protocol) tells a request line from a complete head and sees each answer. A connection is closed the way Helidon
 * closes an idle one: its thread is interrupted, which closes the socket it reads from. Room is made when a
 * connection arrives, so nothing runs while no one connects; when Helidon's cap is full of connections in their grace,
 * the next arrival waits for one to end (header deadline or idle timeout) and then makes room for the rest.
 */
public final class EvictingConnectionCap {

    /** How long a connection may wait for a request, or for the rest of its head, before it may be closed: 1 s. */
    public static final Duration GRACE = Duration.ofSeconds(1);

    private final int cap;
    private final long graceNanos = GRACE.toNanos();
    private final List<Held> held = new ArrayList<>();

    private EvictingConnectionCap(int cap) {
        this.cap = cap;
    }

    /**
     * Creates the cap of one listener.
     *
     * @param cap connections held at once, at least 1
     * @return the cap; wire both {@link #requestHeads()} and {@link #around(ServerConnectionSelector)}
     * @throws IllegalArgumentException when {@code cap} is below 1
     */
    public static EvictingConnectionCap create(int cap) {
        if (cap < 1) {
            throw new IllegalArgumentException("cap must be at least 1, was " + cap);
        }
        return new EvictingConnectionCap(cap);
    }

    /**
     * Sees where each connection is in its request: from the end of its request line to the end of its header
     * section it is half-sent (and may be closed beyond the cap); from its answer on it waits for the next request.
     *
     * @return a listener to register both as a receive and as a send listener of the listener's HTTP/1.1 protocol
     */
    public Http1ConnectionListener requestHeads() {
        return new Http1ConnectionListener() {
            @Override
            public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
                mark(true, false);
            }

            @Override
            public void headers(ConnectionContext ctx, Headers headers) {
                mark(false, false);
            }

            @Override
            public void status(ConnectionContext ctx, Status status) {
                mark(false, true);
            }
        };
    }

    /**
     * The listener's connection selector, its connections held under this cap.
     *
     * @param selector the selector that makes the listener's connections (HTTP/1.1 only)
     * @return the selector to register on the listener
     */
    public ServerConnectionSelector around(ServerConnectionSelector selector) {
        return new ServerConnectionSelector() {
            @Override
            public int bytesToIdentifyConnection() {
                return selector.bytesToIdentifyConnection();
            }

            @Override
            public Support supports(BufferData data) {
                return selector.supports(data);
            }

            @Override
            public Set<String> supportedApplicationProtocols() {
                return selector.supportedApplicationProtocols();
            }

            @Override
            public ServerConnection connection(ConnectionContext ctx) {
                return new CappedConnection(selector.connection(ctx));
            }
        };
    }

    // On the connection's own thread: the request line came (half-sent), or its head is complete (in a request), or
    // its answer is being written (waiting again from now).
    private void mark(boolean halfSent, boolean answered) {
        Thread thread = Thread.currentThread();
        synchronized (this) {
            for (Held connection : held) {
                if (connection.thread == thread) {
                    connection.halfSent = halfSent;
                    if (answered) {
                        connection.sinceNanos = System.nanoTime();
                    }
                    return;
                }
            }
        }
    }

    // Registers the newcomer; beyond the cap, closes connections that have waited longer than the grace for a request
    // or for the rest of its head, the longest waiting first, until the cap is met or none is left to close.
    private Held admit(ServerConnection connection) {
        Held newcomer = new Held(Thread.currentThread(), connection);
        List<Held> victims = new ArrayList<>();
        long now = System.nanoTime();
        synchronized (this) {
            held.add(newcomer);
            while (held.size() > cap) {
                Held victim = null;
                for (Held candidate : held) {
                    if (candidate.waitedPast(now, graceNanos)
                        && (victim == null || candidate.sinceNanos - victim.sinceNanos < 0)) {
                        victim = candidate;
                    }
                }
                if (victim == null) {
                    break;
                }
                held.remove(victim);
                victims.add(victim);
            }
        }
        for (Held victim : victims) {
            victim.thread.interrupt();
        }
        return newcomer;
    }

    private synchronized void leave(Held connection) {
        held.remove(connection);
    }

    private static final class Held {
        private final Thread thread;
        private final ServerConnection connection;
        private volatile boolean halfSent;
        // since it was accepted or its last answer was written
        private volatile long sinceNanos = System.nanoTime();

        private Held(Thread thread, ServerConnection connection) {
            this.thread = thread;
            this.connection = connection;
        }

        // Not in a request (Helidon's HTTP/1.1 connection can be interrupted exactly while it waits for a request
        // line; half-sent: the line came, the head did not), and waiting for longer than the grace.
        boolean waitedPast(long nowNanos, long grace) {
            return nowNanos - sinceNanos > grace
                   && (halfSent || connection instanceof InterruptableTask<?> task && task.canInterrupt());
        }
    }

    private final class CappedConnection implements ServerConnection {
        private final ServerConnection connection;

        private CappedConnection(ServerConnection connection) {
            this.connection = connection;
        }

        @Override
        public void handle(Limit limit) throws InterruptedException {
            Held self = admit(connection);
            try {
                connection.handle(limit);
            } finally {
                leave(self);
            }
        }

        @Override
        public Duration idleTime() {
            return connection.idleTime();
        }

        @Override
        public void close(boolean interrupt) {
            connection.close(interrupt);
        }
    }
}
