package com.example.payments.authorization;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;

import com.example.payments.http.Json;
import com.example.payments.observability.HttpClientSpans;
import com.example.payments.observability.Tracing;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HeaderName;
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
 * The {@link Authorizer} a fork copies and points at its acquirer or issuer: one HTTP call per attempt with Helidon's
 * {@link WebClient} ({@code authorizer.type: http}). In this repository it calls the issuer simulator
 * ({@code com.example.payments.issuer.IssuerSimulator}); {@code docs/authorizer.md} walks through replacing it.
 *
 * <p>The call, {@code POST <authorizer.http.uri>/v1/authorizations}:
 * <pre>
 * Idempotency-Key: att_3f2a...            (the attempt id: the issuer's deduplication key)
 * Content-Type: application/json
 *
 * {"merchantId":"m_123","reference":"order-42","amount":{"value":1299,"currency":"EUR"},
 *  "card":{"number":"4111111111111111","expiryMonth":12,"expiryYear":2030,"cvc":"123"}}
 * </pre>
 * answered {@code 200 {"attemptId":"att_3f2a...","status":"APPROVED","decidedAt":"2026-11-30T20:38:51.378Z"}} or
 * {@code 200 {"attemptId":"att_3f2a...","status":"DECLINED","declineCode":"card_declined","decidedAt":"..."}}:
 * {@code decidedAt} is the issuer's time of its first decision for the attempt id, and becomes {@code createdAt}.
 *
 * <p>What a fork must keep when it changes the wire format:
 * <ul>
 *     <li><b>The attempt id goes to the issuer as its idempotency key.</b> It is the same for every retry of one
 *     request, on every replica, so an issuer that deduplicates answers a retry with its first decision even when this
 *     service lost its own record. Without it, no design on this side can rule out a double authorization.</li>
 *     <li><b>Anything but a well-formed decision is an unknown outcome</b>: an error status, a redirect, an unreadable
 *     body, a connection or read failure throw {@link IssuerUnavailableException} (the service answers 502, releases
 *     the key, and the client's retry carries the same attempt id). Never map them to a decline: the issuer may have
 *     approved.</li>
 *     <li><b>Bounded and interruptible.</b> {@code authorizer.timeout} bounds the call: the caller interrupts it then
 *     (504), and an interrupted call throws {@link InterruptedException}. The client's own connect and read timeouts
 *     are set one second past it, so they bound a call made without that caller and never race it.</li>
 *     <li><b>Closed in the shutdown cleanup phase</b> ({@link #close()}, registered by {@code Main} as
 *     {@code issuer-client}), after the drain, so no in-flight call loses its connection.</li>
 *     <li><b>No card data in logs or exception messages</b>: the PAN and CVC live only in the request body.</li>
 * </ul>
 *
 * <p>Size: request building, status mapping and timeouts of the issuer call are the one contract listed above.
 */
public final class HttpAuthorizer implements Authorizer, AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(HttpAuthorizer.class.getName());

    /** Request header carrying the attempt id, the issuer's idempotency key. */
    public static final HeaderName IDEMPOTENCY_KEY = HeaderNames.create("Idempotency-Key");
    /** Path of the authorization endpoint, appended to {@code authorizer.http.uri}. */
    public static final String PATH = "/v1/authorizations";

    private static final Duration SOCKET_TIMEOUT_MARGIN = Duration.ofSeconds(1);
    private static final int MAX_RESPONSE_BYTES = 64 * 1024;

    private final WebClient client;
    private final URI endpoint;
    private final URI reversals;
    private final Duration socketTimeout;
    private final boolean acquirerDeduplicates;
    private final NewConnections newConnections = new NewConnections();
    private final Counter staleConnectionRetries;

    private HttpAuthorizer(URI baseUri, Duration timeout, MeterRegistry meters, boolean acquirerDeduplicates) {
        this.acquirerDeduplicates = acquirerDeduplicates;
        this.endpoint = URI.create(baseUri.toString().replaceAll("/+$", "") + PATH);
        this.reversals = URI.create(baseUri.toString().replaceAll("/+$", "") + "/v1/reversals");
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
     * Creates the authorizer for an acquirer that may not deduplicate attempt ids (a call that failed on a reused
     * connection is sent again only when its request provably never left); nothing connects before the first call.
     *
     * @param baseUri {@code authorizer.http.uri}, e.g. {@code http://127.0.0.1:8090}
     * @param timeout {@code authorizer.timeout}, default PT5S
     * @param meters  where {@code authorizer_connection_retries_total} goes: calls retried once on a new connection
     *                because a reused one was dead
     * @return the authorizer
     */
    public static HttpAuthorizer create(URI baseUri, Duration timeout, MeterRegistry meters) {
        return new HttpAuthorizer(baseUri, timeout, meters, false);
    }

    /**
     * Creates the authorizer for an acquirer that does, or may not, deduplicate attempt ids; nothing connects before
     * the first call.
     *
     * @param baseUri              {@code authorizer.http.uri}, e.g. {@code http://127.0.0.1:8090}
     * @param timeout              {@code authorizer.timeout}, default PT5S
     * @param meters               where {@code authorizer_connection_retries_total} goes
     * @param acquirerDeduplicates {@code authorizer.acquirer-deduplicates}, default {@code true}: a call that failed
     *                             before any answer on a reused keep-alive connection is sent once more on a new
     *                             connection even when its request was written in full (the acquirer answers the
     *                             same attempt id with its first decision, so the re-send costs nothing and saves a
     *                             502); {@code false}: only when the request provably never left whole
     * @return the authorizer
     */
    public static HttpAuthorizer create(URI baseUri, Duration timeout, MeterRegistry meters,
                                        boolean acquirerDeduplicates) {
        return new HttpAuthorizer(baseUri, timeout, meters, acquirerDeduplicates);
    }

    @Override
    public Decision authorize(AuthorizationAttempt attempt) throws IssuerUnavailableException, InterruptedException {
        return post(endpoint, attempt.attemptId(), Json.bytes(body(attempt.request())));
    }

    /**
     * {@code POST <uri>/v1/authorizations/{authorizationAttemptId}/captures} {@code {"amount":{"value","currency"}}}
     * with the capture's attempt id as {@code Idempotency-Key}; the answer has the shape of an authorization's.
     */
    @Override
    public Decision capture(AcquirerOperation operation) throws IssuerUnavailableException, InterruptedException {
        ObjectNode body = Json.mapper().createObjectNode();
        body.putObject("amount").put("value", operation.amount()).put("currency", operation.currency());
        return post(operationUri(operation, "captures"), operation.attemptId(), Json.bytes(body));
    }

    /**
     * {@code POST <uri>/v1/authorizations/{authorizationAttemptId}/voids} {@code {}} with the void's attempt id as
     * {@code Idempotency-Key}.
     */
    @Override
    public Decision voidRemainder(AcquirerOperation operation)
            throws IssuerUnavailableException, InterruptedException {
        return post(operationUri(operation, "voids"), operation.attemptId(), "{}".getBytes(StandardCharsets.UTF_8));
    }

    /**
     * {@code POST <uri>/v1/reversals} {@code {"attemptId","reversalId"}} with the reversal id as
     * {@code Idempotency-Key}: the acquirer applies it at most once per reversal id; its answer has the shape of an
     * authorization's ({@code APPROVED}: reversed, {@code DECLINED not_approved}: nothing to reverse), and the
     * {@code attemptId} it names is the reversed attempt's.
     */
    @Override
    public Decision reverse(Reversal reversal) throws IssuerUnavailableException, InterruptedException {
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("attemptId", reversal.attemptId()).put("reversalId", reversal.reversalId());
        Answer answer = answer(reversals, reversal.reversalId(), Json.bytes(body));
        return IssuerAnswers.decision(answer.body(), reversal.attemptId());
    }

    private URI operationUri(AcquirerOperation operation, String kind) {
        return URI.create(endpoint + "/" + URLEncoder.encode(operation.authorizationAttemptId(), StandardCharsets.UTF_8)
                          + "/" + kind);
    }

    private Decision post(URI uri, String attemptId, byte[] body)
            throws IssuerUnavailableException, InterruptedException {
        return IssuerAnswers.decision(answer(uri, attemptId, body).body(), attemptId);
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
                    .header(IDEMPOTENCY_KEY, attemptId)
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

    private static ObjectNode body(AuthorizationRequest request) {
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("merchantId", request.merchantId());
        body.put("reference", request.reference());
        body.putObject("amount")
                .put("value", request.amount().value())
                .put("currency", request.amount().currency());
        body.putObject("card")
                .put("number", request.card().number())
                .put("expiryMonth", request.card().expiryMonth())
                .put("expiryYear", request.card().expiryYear())
                .put("cvc", request.card().cvc());
        return body;
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

    /** Closes the client's pooled connections; called once, in the shutdown cleanup phase. */
    @Override
    public void close() {
        client.closeResource();
        // Scheme, host and port only: the configured URI may carry credentials.
        LOGGER.log(Level.INFO, "Issuer client closed: {0}://{1}", endpoint.getScheme(),
                   endpoint.getHost() + (endpoint.getPort() < 0 ? "" : ":" + endpoint.getPort()));
    }
}
