package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import com.example.payments.http.Json;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webclient.api.WebClient;

/**
 * The {@link Authorizer} a fork copies and points at its acquirer or issuer: one HTTP call per attempt with Helidon's
 * {@link WebClient} ({@code authorizer.type: http}). In this repository it calls the issuer simulator
 * ({@code com.example.payments.issuer.IssuerSimulator}, test scope: the test-tools jar, never the service's);
 * {@code docs/authorizer.md} walks through replacing it.
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
 * <p>This class is the wire format: the URI and JSON body of each call, and the answer read into a decision
 * ({@link IssuerAnswers}); sending it, the timeouts, the one resend on a new connection and what counts as an unknown
 * outcome are {@link IssuerHttpClient}'s.
 */
public final class HttpAuthorizer implements Authorizer, AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(HttpAuthorizer.class.getName());

    /** Request header carrying the attempt id, the issuer's idempotency key. */
    public static final HeaderName IDEMPOTENCY_KEY = HeaderNames.create("Idempotency-Key");
    /** Path of the authorization endpoint, appended to {@code authorizer.http.uri}. */
    public static final String PATH = "/v1/authorizations";

    private final URI endpoint;
    private final URI reversals;
    private final IssuerHttpClient issuer;

    private HttpAuthorizer(URI baseUri, Duration timeout, MeterRegistry meters, boolean acquirerDeduplicates) {
        this.endpoint = URI.create(baseUri.toString().replaceAll("/+$", "") + PATH);
        this.reversals = URI.create(baseUri.toString().replaceAll("/+$", "") + "/v1/reversals");
        this.issuer = new IssuerHttpClient(timeout, meters, acquirerDeduplicates);
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
        byte[] answer = issuer.post(reversals, reversal.reversalId(), Json.bytes(body));
        return IssuerAnswers.decision(answer, reversal.attemptId());
    }

    private URI operationUri(AcquirerOperation operation, String kind) {
        return URI.create(endpoint + "/" + URLEncoder.encode(operation.authorizationAttemptId(), StandardCharsets.UTF_8)
                          + "/" + kind);
    }

    private Decision post(URI uri, String attemptId, byte[] body)
            throws IssuerUnavailableException, InterruptedException {
        return IssuerAnswers.decision(issuer.post(uri, attemptId, body), attemptId);
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

    /** Closes the client's pooled connections; called once, in the shutdown cleanup phase. */
    @Override
    public void close() {
        issuer.close();
        // Scheme, host and port only: the configured URI may carry credentials.
        LOGGER.log(Level.INFO, "Issuer client closed: {0}://{1}", endpoint.getScheme(),
                   endpoint.getHost() + (endpoint.getPort() < 0 ? "" : ":" + endpoint.getPort()));
    }
}
