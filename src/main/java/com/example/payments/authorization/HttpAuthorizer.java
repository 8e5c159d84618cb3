package com.example.payments.authorization;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.io.InputStream;
import java.net.URI;
import java.time.Duration;
import java.util.regex.Pattern;

import com.example.payments.http.Json;
import com.example.payments.observability.Tracing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.webclient.api.HttpClientRequest;
import io.helidon.webclient.api.HttpClientResponse;
import io.helidon.webclient.api.WebClient;
import io.opentelemetry.context.Context;

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
 * answered {@code 200 {"attemptId":"att_3f2a...","status":"APPROVED"}} or
 * {@code 200 {"attemptId":"att_3f2a...","status":"DECLINED","declineCode":"card_declined"}}.
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
 */
public final class HttpAuthorizer implements Authorizer, AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(HttpAuthorizer.class.getName());

    /** Request header carrying the attempt id, the issuer's idempotency key. */
    public static final HeaderName IDEMPOTENCY_KEY = HeaderNames.create("Idempotency-Key");
    /** Path of the authorization endpoint, appended to {@code authorizer.http.uri}. */
    public static final String PATH = "/v1/authorizations";

    private static final Duration SOCKET_TIMEOUT_MARGIN = Duration.ofSeconds(1);
    private static final int MAX_RESPONSE_BYTES = 64 * 1024;
    private static final Pattern DECLINE_CODE = Pattern.compile("[a-z0-9_]{1,64}");

    private final WebClient client;
    private final URI endpoint;

    private HttpAuthorizer(URI baseUri, Duration timeout) {
        this.endpoint = URI.create(baseUri.toString().replaceAll("/+$", "") + PATH);
        Duration socketTimeout = timeout.plus(SOCKET_TIMEOUT_MARGIN);
        this.client = WebClient.builder()
                .connectTimeout(socketTimeout)
                .readTimeout(socketTimeout)
                // A payment must not follow a redirect to somewhere else.
                .followRedirects(false)
                // Its own connection pool, so that close() really closes this client's connections.
                .shareConnectionCache(false)
                .build();
    }

    /**
     * Creates the authorizer; nothing connects before the first call.
     *
     * @param baseUri {@code authorizer.http.uri}, e.g. {@code http://127.0.0.1:8090}
     * @param timeout {@code authorizer.timeout}, default PT5S
     * @return the authorizer
     */
    public static HttpAuthorizer create(URI baseUri, Duration timeout) {
        return new HttpAuthorizer(baseUri, timeout);
    }

    @Override
    public Decision authorize(AuthorizationAttempt attempt) throws IssuerUnavailableException, InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("issuer call not started: interrupted");
        }
        byte[] body = Json.bytes(body(attempt.request()));
        byte[] answer;
        int status;
        HttpClientRequest request = client.post()
                .uri(endpoint)
                .header(IDEMPOTENCY_KEY, attempt.attemptId())
                .contentType(MediaTypes.APPLICATION_JSON)
                .accept(MediaTypes.APPLICATION_JSON);
        // W3C Trace Context to the issuer: the issuer call's span, or the caller's traceparent when tracing is off.
        Tracing.propagators().getTextMapPropagator().inject(Context.current(), request,
                (carrier, name, value) -> carrier.header(HeaderNames.create(name), value));
        try (HttpClientResponse response = request.submit(body)) {
            status = response.status().code();
            answer = status == 200 ? read(response.inputStream()) : new byte[0];
        } catch (IOException | RuntimeException e) {
            // An interrupted virtual thread's socket is closed under it: whatever the exception, it was the interrupt.
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException("issuer call interrupted");
            }
            throw new IssuerUnavailableException("issuer call failed: " + e.getClass().getSimpleName() + ": "
                                                 + e.getMessage());
        }
        if (status != 200) {
            throw new IssuerUnavailableException("issuer answered HTTP " + status);
        }
        return decision(answer, attempt.attemptId());
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

    private static Decision decision(byte[] answer, String attemptId) throws IssuerUnavailableException {
        JsonNode json;
        try {
            json = Json.mapper().readTree(answer);
        } catch (IOException e) {
            throw new IssuerUnavailableException("issuer answered a body that is not JSON");
        }
        if (json == null || !attemptId.equals(json.path("attemptId").asText(attemptId))) {
            throw new IssuerUnavailableException("issuer answered for another attempt");
        }
        String code = json.path("declineCode").asText("");
        return switch (json.path("status").asText("")) {
        case "APPROVED" -> Decision.approve();
        case "DECLINED" -> {
            if (!DECLINE_CODE.matcher(code).matches()) {
                throw new IssuerUnavailableException("issuer declined without a valid decline code");
            }
            yield Decision.decline(code);
        }
        default -> throw new IssuerUnavailableException("issuer answered without an APPROVED or DECLINED status");
        };
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
