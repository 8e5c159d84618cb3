package com.example.payments.authorization;

import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.time.Duration;

import com.example.payments.authorization.Authorizer.IssuerUnavailableException;
import com.example.payments.observability.HttpClientSpans;
import com.example.payments.observability.Tracing;

import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HeaderNames;
import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webclient.api.ConnectedSocketChannelInfo;
import io.helidon.webclient.api.ConnectedSocketInfo;
import io.helidon.webclient.api.ConnectionListener;
import io.helidon.webclient.api.HttpClientRequest;
import io.helidon.webclient.api.HttpClientResponse;
import io.helidon.webclient.api.WebClient;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;

/**
 * The transport of {@link HttpAuthorizer}: one JSON {@code POST} to the issuer with an {@code Idempotency-Key},
 * answered by a {@code 200} body or else an unknown outcome ({@link IssuerUnavailableException}). It owns the
 * {@link WebClient} (connect and read timeouts {@code authorizer.timeout} + 1 s, no redirects, a connection pool of
 * its own), traces each request as a CLIENT span, and sends a call once more on a new connection only when a reused
 * keep-alive connection failed before the request could be written whole (counted in
 * {@code authorizer_connection_retries_total}). What goes in the body and what the answer means is
 * {@link HttpAuthorizer}'s.
 */
final class IssuerHttpClient {

    // The authorizer's logger: these log lines keep the logger name they always had.
    private static final System.Logger LOGGER = System.getLogger(HttpAuthorizer.class.getName());

    private static final Duration SOCKET_TIMEOUT_MARGIN = Duration.ofSeconds(1);
    private static final int MAX_RESPONSE_BYTES = 64 * 1024;

    private final WebClient client;
    private final Duration socketTimeout;
    private final boolean acquirerDeduplicates;
    private final NewConnections newConnections = new NewConnections();
    private final Counter staleConnectionRetries;

    /**
     * Creates the client; nothing connects before the first call.
     *
     * @param timeout {@code authorizer.timeout}; the socket timeouts are one second longer
     * @param meters  where {@code authorizer_connection_retries_total} goes
     * @param acquirerDeduplicates {@code authorizer.acquirer-deduplicates}: whether a request written in full on a
     *                reused connection that then failed before any answer may go out once more (see the call)
     */
    IssuerHttpClient(Duration timeout, MeterRegistry meters, boolean acquirerDeduplicates) {
        this.acquirerDeduplicates = acquirerDeduplicates;
        this.socketTimeout = timeout.plus(SOCKET_TIMEOUT_MARGIN);
        this.client = WebClient.builder()
                .connectTimeout(socketTimeout)
                .readTimeout(socketTimeout)
                // A payment must not follow a redirect to somewhere else.
                .followRedirects(false)
                // Its own connection pool, so that close() really closes this client's connections.
                .shareConnectionCache(false)
                .connectionListener(newConnections)
                .build();
        this.staleConnectionRetries = meters.getOrCreate(Counter.builder("authorizer_connection_retries")
                .description("Issuer calls sent again on a new connection after a reused keep-alive connection "
                             + "failed before any answer"));
    }

    /**
     * Sends one call and returns the body of its {@code 200} answer.
     *
     * @param uri  where to {@code POST}
     * @param key  the {@code Idempotency-Key}: the attempt id (the reversal id for a reversal)
     * @param body the JSON request body
     * @return the answer's body, at most 64 KiB
     * @throws IssuerUnavailableException any other status, or a failure after the request may have been read: an
     *                                    unknown outcome
     * @throws InterruptedException       when interrupted before or during the call
     */
    byte[] post(URI uri, String key, byte[] body) throws IssuerUnavailableException, InterruptedException {
        return answer(uri, key, body).body();
    }

    // The 200 answer to one call, its Idempotency-Key the key given; anything else is an unknown outcome.
    private Answer answer(URI uri, String key, byte[] body) throws IssuerUnavailableException, InterruptedException {
        String attemptId = key;
        if (Thread.interrupted()) {
            throw new InterruptedException("issuer call not started: interrupted");
        }
        long opened = newConnections.opened();
        long start = System.nanoTime();
        Answer answer;
        try {
            answer = exchange(uri, attemptId, body, true);
        } catch (NoResponse e) {
            // A pooled keep-alive connection can be dead by the time it is reused: the issuer closed it while idle
            // (its close and our reuse can cross: nothing on this side tells them apart in time). Sent again on a
            // new connection when the request provably never left (its bytes could not all be written: the socket
            // was already reset, so no issuer can have read a whole request), and, with an acquirer that
            // deduplicates attempt ids, also when it was written in full: the acquirer answers the same attempt id
            // with its first decision. Without deduplication, a request written in full and then answered by a
            // closed connection may have been read and decided (a server that crashed after reading it looks the
            // same from here): an unknown outcome, never sent twice. Never retried: a call that failed on a
            // connection it just opened (the issuer is unreachable), or that waited its whole read timeout.
            boolean waitedForAnswer = System.nanoTime() - start >= socketTimeout.toNanos();
            if ((e.written() && !acquirerDeduplicates) || newConnections.opened() != opened || waitedForAnswer
                || Thread.currentThread().isInterrupted()) {
                throw unknownOutcome(e.getCause());
            }
            staleConnectionRetries.increment();
            LOGGER.log(Level.DEBUG, "Issuer call failed before any answer on a reused connection ({0}); sending it once "
                                    + "on a new one, attempt {1}", e.getCause().getClass().getSimpleName(), attemptId);
            try {
                answer = exchange(uri, attemptId, body, false);
            } catch (NoResponse again) {
                throw unknownOutcome(again.getCause());
            }
        }
        if (answer.status() != 200) {
            throw new IssuerUnavailableException("issuer answered HTTP " + answer.status());
        }
        return answer;
    }

    /** A status and, for 200, the body. */
    private record Answer(int status, byte[] body) {
    }

    /** The request failed before the head of the answer was read. */
    private static final class NoResponse extends Exception {
        private final boolean written;

        NoResponse(Throwable cause, boolean written) {
            super(cause);
            this.written = written;
        }

        // Whether every byte of the request was handed to the socket: then the issuer may have read it all.
        boolean written() {
            return written;
        }
    }

    // keepAlive false: a connection of its own (Connection: close), never one from the pool.
    private Answer exchange(URI uri, String attemptId, byte[] body, boolean keepAlive)
            throws NoResponse, IssuerUnavailableException, InterruptedException {
        // Each HTTP request its own CLIENT span (a retry too), a child of the issuer call's span.
        Span span = HttpClientSpans.start("POST", uri);
        HttpClientResponse response;
        try (Scope ignored = span.makeCurrent()) {
            HttpClientRequest request = client.post()
                    .uri(uri)
                    .keepAlive(keepAlive)
                    .header(HttpAuthorizer.IDEMPOTENCY_KEY, attemptId)
                    .contentType(MediaTypes.APPLICATION_JSON)
                    .accept(MediaTypes.APPLICATION_JSON);
            // W3C Trace Context to the issuer: this request's span, or the caller's traceparent when tracing is off.
            Tracing.propagators().getTextMapPropagator().inject(Context.current(), request,
                    (carrier, name, value) -> carrier.header(HeaderNames.create(name), value));
            // Written through a stream of our own, so that a failure while writing (the request never left whole)
            // tells itself apart from one after it (the issuer may have read it).
            boolean[] written = new boolean[1];
            try {
                response = request.header(HeaderNames.CONTENT_LENGTH, Integer.toString(body.length))
                        .outputStream(out -> {
                            out.write(body);
                            out.close();
                            written[0] = true;
                        });
            } catch (RuntimeException e) {
                HttpClientSpans.failed(span, e);
                throw new NoResponse(e, written[0]);
            }
        } catch (RuntimeException e) {
            HttpClientSpans.failed(span, e);
            throw new NoResponse(e, true);
        }
        try (response) {
            int status = response.status().code();
            Answer answer = new Answer(status, status == 200 ? read(response.inputStream()) : new byte[0]);
            HttpClientSpans.answered(span, status);
            return answer;
        } catch (IOException | RuntimeException e) {
            HttpClientSpans.failed(span, e);
            throw unknownOutcome(e);
        }
    }

    // An interrupted virtual thread's socket is closed under it: whatever the exception, it was the interrupt.
    private static IssuerUnavailableException unknownOutcome(Throwable e) throws InterruptedException {
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedException("issuer call interrupted");
        }
        return new IssuerUnavailableException("issuer call failed: " + e.getClass().getSimpleName() + ": "
                                              + e.getMessage());
    }

    private static byte[] read(InputStream entity) throws IOException {
        byte[] bytes = entity.readNBytes(MAX_RESPONSE_BYTES + 1);
        if (bytes.length > MAX_RESPONSE_BYTES) {
            throw new IOException("response body over " + MAX_RESPONSE_BYTES + " bytes");
        }
        return bytes;
    }

    /** Counts the sockets the client opens, per calling thread: a call that opened none reused a pooled connection. */
    private static final class NewConnections implements ConnectionListener {

        private final ThreadLocal<long[]> opened = ThreadLocal.withInitial(() -> new long[1]);

        long opened() {
            return opened.get()[0];
        }

        @Override
        public void socketConnected(ConnectedSocketInfo socketInfo) {
            opened.get()[0]++;
        }

        @Override
        public void socketChannelConnected(ConnectedSocketChannelInfo socketInfo) {
            opened.get()[0]++;
        }
    }

    /** Closes the client's pooled connections. */
    void close() {
        client.closeResource();
    }
}
