package com.example.payments.http;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Status;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.webserver.http1.Http1ConnectionListener;

/**
 * Bounds how long a client may take to send a request, on one listener: the header section must arrive within
 * {@code http.header-timeout} of the request line, the body within {@code http.body-timeout} of the header section.
 * A client that is late is disconnected without an answer (RFC 9112 section 9.5 lets a server close a connection it
 * no longer wants to wait on); nothing it sent was processed, so no idempotency key was taken.
 *
 * <p>Why our own: Helidon 4.5 reads with NIO channels, on which the listener's {@code connection-options.read-timeout}
 * has no effect, and its {@code idle-connection-timeout} interrupts a connection only while it waits for a request
 * line. A client trickling its headers or its body one byte at a time would otherwise hold a connection, and a body
 * also a concurrency permit, forever. The request line itself is bounded by {@code idle-connection-timeout}.
 *
 * <p>The way out is Helidon's own: the connection's thread is interrupted, which closes its socket. A sweeper thread
 * checks the deadlines every few hundred ms. While draining, {@link #closeHalfSent()} closes every connection still
 * waiting for its header section, so the drain never waits on a client that has not finished sending a request.
 */
public final class RequestDeadlines implements AutoCloseable {

    private final Duration headerTimeout;
    private final Duration bodyTimeout;
    private final Map<ConnectionContext, Deadline> heads = new ConcurrentHashMap<>();
    private final Map<Thread, Deadline> bodies = new ConcurrentHashMap<>();
    private final ScheduledExecutorService sweeper;
    private volatile boolean draining;

    private RequestDeadlines(String listener, Duration headerTimeout, Duration bodyTimeout) {
        this.headerTimeout = headerTimeout;
        this.bodyTimeout = bodyTimeout;
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon(true)
                .name(listener + "-request-deadlines").unstarted(r));
        long period = Math.clamp(Math.min(headerTimeout.toMillis(), bodyTimeout.toMillis()) / 10, 10, 250);
        sweeper.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts the deadlines of one listener.
     *
     * @param listener      name of the listener, for the sweeper thread
     * @param headerTimeout longest time from the request line to the end of the header section
     * @param bodyTimeout   longest time from the end of the header section to the end of the body
     * @return the running deadlines; close them when the listener stops
     */
    public static RequestDeadlines start(String listener, Duration headerTimeout, Duration bodyTimeout) {
        return new RequestDeadlines(listener, headerTimeout, bodyTimeout);
    }

    /**
     * The header deadline, as a receive listener of the listener's HTTP/1.1 protocol: it sees the end of the request
     * line and the end of the header section on the connection's own thread.
     *
     * @return the listener
     */
    public Http1ConnectionListener headers() {
        return new Http1ConnectionListener() {
            @Override
            public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
                if (draining) {
                    throw new CloseConnectionException("Draining: no new request is read");
                }
                heads.put(ctx, new Deadline(Thread.currentThread(), System.nanoTime() + headerTimeout.toNanos()));
            }

            @Override
            public void headers(ConnectionContext ctx, Headers headers) {
                Deadline deadline = heads.remove(ctx);
                if (deadline != null && !deadline.finish()) {
                    throw new CloseConnectionException("Header section completed after its deadline");
                }
            }
        };
    }

    /**
     * The body deadline, as a filter of the listener's routing: from the end of the header section until the
     * handler has read the body to its end, or answers without it.
     *
     * @return the filter; register it after the request metrics filter, which then records a late body as 408
     */
    public Filter bodyDeadlineFilter() {
        return this::filterBody;
    }

    /**
     * Closes every connection of this listener that is still waiting for its header section, and from now on every
     * connection whose request line arrives: while draining, nothing is in flight on them.
     *
     * @return how many connections were waiting for their header section
     */
    public int closeHalfSent() {
        draining = true;
        int closed = 0;
        for (Map.Entry<ConnectionContext, Deadline> entry : heads.entrySet()) {
            if (heads.remove(entry.getKey(), entry.getValue()) && entry.getValue().expire()) {
                closed++;
            }
        }
        return closed;
    }

    private void filterBody(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (!ConnectionCloseFilter.bodyAnnounced(req)) {
            chain.proceed();
            return;
        }
        Thread thread = Thread.currentThread();
        Deadline deadline = new Deadline(thread, System.nanoTime() + bodyTimeout.toNanos());
        bodies.put(thread, deadline);
        req.streamFilter(in -> new WatchedBody(in, deadline));
        // Once the answer is on its way, the client's pace no longer matters.
        res.beforeSend(() -> {
            if (!deadline.finish()) {
                throw new CloseConnectionException("Request body deadline passed");
            }
        });
        try {
            chain.proceed();
        } catch (CloseConnectionException e) {
            if (deadline.expired()) {
                res.status(Status.REQUEST_TIMEOUT_408);
            }
            throw e;
        } finally {
            bodies.remove(thread, deadline);
            deadline.finish();
        }
    }

    private void sweep() {
        long now = System.nanoTime();
        heads.forEach((ctx, deadline) -> {
            if (deadline.passed(now) && heads.remove(ctx, deadline)) {
                deadline.expire();
            }
        });
        bodies.forEach((thread, deadline) -> {
            if (deadline.passed(now) && bodies.remove(thread, deadline)) {
                deadline.expire();
            }
        });
    }

    /** Stops the sweeper. */
    @Override
    public void close() {
        sweeper.shutdownNow();
    }

    /** One request part awaited on one connection thread: open, then either finished or expired, never both. */
    private static final class Deadline {
        private static final int OPEN = 0;
        private static final int FINISHED = 1;
        private static final int EXPIRED = 2;

        private final Thread thread;
        private final long deadlineNanos;
        private final AtomicInteger state = new AtomicInteger(OPEN);

        private Deadline(Thread thread, long deadlineNanos) {
            this.thread = thread;
            this.deadlineNanos = deadlineNanos;
        }

        boolean passed(long nowNanos) {
            return nowNanos - deadlineNanos > 0;
        }

        /** @return {@code false} when the deadline expired first */
        boolean finish() {
            return state.compareAndSet(OPEN, FINISHED) || state.get() == FINISHED;
        }

        /** @return {@code true} when this call disconnected the client */
        boolean expire() {
            if (state.compareAndSet(OPEN, EXPIRED)) {
                // Helidon's own way of ending a connection: the interrupt closes the socket the thread reads from.
                thread.interrupt();
                return true;
            }
            return false;
        }

        boolean expired() {
            return state.get() == EXPIRED;
        }
    }

    /** The request body as the handler reads it: its end finishes the deadline; past the deadline, reads fail. */
    private static final class WatchedBody extends FilterInputStream {
        private final Deadline deadline;

        private WatchedBody(InputStream in, Deadline deadline) {
            super(in);
            this.deadline = deadline;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n;
            try {
                n = in.read(b, off, len);
            } catch (IOException | RuntimeException e) {
                if (deadline.expired()) {
                    throw new CloseConnectionException("Request body deadline passed", e);
                }
                throw e;
            }
            if (deadline.expired()) {
                throw new CloseConnectionException("Request body deadline passed");
            }
            if (n < 0 && !deadline.finish()) {
                throw new CloseConnectionException("Request body deadline passed");
            }
            return n;
        }
    }
}
