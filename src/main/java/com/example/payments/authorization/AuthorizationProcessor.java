package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.IdempotencyKey;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;
import com.example.payments.idempotency.StoredResponse;

import io.helidon.http.HeaderValues;
import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * Authorizes a request whose idempotency key this process has just claimed: runs the bounded authorizer, keeps the
 * decision (authorization store + idempotency record) or releases the key when there is no decision, so that a retry
 * runs again. Once the issuer has decided, the key is never released: a retry must replay, not re-authorize.
 */
final class AuthorizationProcessor implements AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(AuthorizationProcessor.class.getName());

    private final IdempotencyRegistry registry;
    private final BoundedAuthorizer authorizer;
    private final AuthorizationStore store;
    private final Clock clock;
    private final MeterRegistry meters;

    AuthorizationProcessor(IdempotencyRegistry registry, BoundedAuthorizer authorizer, AuthorizationStore store,
                           Clock clock, MeterRegistry meters) {
        this.registry = registry;
        this.authorizer = authorizer;
        this.store = store;
        this.clock = clock;
        this.meters = meters;
    }

    /** What happened to a claimed request. */
    sealed interface Result {
    }

    /**
     * The issuer decided (approved or declined): answer the stored response.
     *
     * @param response status 201, Location and body bytes, as stored for replay
     */
    record Authorized(StoredResponse response) implements Result {
    }

    /** The issuer failed: 502, key released. */
    record IssuerUnavailable() implements Result {
    }

    /** The issuer did not answer within {@code authorizer.timeout}: 504, key released. */
    record IssuerTimeout() implements Result {
    }

    /**
     * Processes a claimed request.
     *
     * @param claim   the acquired key
     * @param request the validated request
     * @param key     the idempotency key, for the attempt id
     * @return the result
     * @throws InterruptedException when the drain timeout cut the request off; the key has been released
     */
    Result process(Claim.Acquired claim, AuthorizationRequest request, IdempotencyKey key)
            throws InterruptedException {
        boolean decided = false;
        try {
            AuthorizationAttempt attempt = new AuthorizationAttempt(attemptId(request.merchantId(), key), request);
            switch (authorizer.authorize(attempt)) {
            case BoundedAuthorizer.Decided decision -> {
                decided = true;
                return new Authorized(keep(claim, authorization(request, decision.decision())));
            }
            case BoundedAuthorizer.Failed failed -> {
                registry.release(claim, ReleaseReason.ISSUER_UNAVAILABLE);
                return new IssuerUnavailable();
            }
            case BoundedAuthorizer.TimedOut timedOut -> {
                registry.release(claim, ReleaseReason.ISSUER_TIMEOUT);
                return new IssuerTimeout();
            }
            }
        } catch (InterruptedException e) {
            // Only the end of the drain interrupts a request: free the key so a retry on another replica runs.
            if (!decided) {
                registry.release(claim, ReleaseReason.SHUTDOWN);
            }
            throw e;
        } finally {
            if (!decided) {
                registry.release(claim, ReleaseReason.ERROR);
            }
        }
    }

    /**
     * Keeps the decision for GET and for replays. A store failure here does not change the answer: the issuer has
     * decided, so the client gets its 201; the key stays IN_FLIGHT until its lease expires and a later retry reaches
     * the issuer with the same attempt id, which lets the issuer deduplicate.
     */
    private StoredResponse keep(Claim.Acquired claim, Authorization authorization) {
        StoredResponse response = new StoredResponse(201, AuthorizationService.PATH + "/" + authorization.id(),
                                                     HeaderValues.CONTENT_TYPE_JSON.values(),
                                                     Json.bytes(authorization));
        // Every failure is caught here, whatever its type: an exception escaping after the decision would leave the
        // key neither completed nor released, and a later release would let a retry authorize a second time.
        try {
            store.save(authorization);
        } catch (RuntimeException e) {
            LOGGER.log(Level.ERROR, "Authorization {0} decided but not stored for GET: {1}", authorization.id(),
                       String.valueOf(e));
        }
        try {
            registry.complete(claim, response);
        } catch (RuntimeException e) {
            LOGGER.log(Level.ERROR, "Authorization {0} decided but its response may not be stored for replay: {1}",
                       authorization.id(), String.valueOf(e));
        }
        meters.getOrCreate(Counter.builder("authorizations")
                                   .tags(List.of(Tag.create("status", authorization.status().toLowerCase(Locale.ROOT))))
                                   .description("Processed authorizations by status")).increment();
        return response;
    }

    private Authorization authorization(AuthorizationRequest request, Authorizer.Decision decision) {
        Card card = request.card();
        return new Authorization(UUID.randomUUID().toString(), decision.approved() ? "APPROVED" : "DECLINED",
                                 decision.declineCode(), request.merchantId(), request.reference(), request.amount(),
                                 new Authorization.CardSummary(card.brand(), card.last4()),
                                 Instant.now(clock).truncatedTo(ChronoUnit.MILLIS).toString());
    }

    // Same merchant + key -> same attempt id on every replica and every retry, so the issuer can deduplicate.
    static String attemptId(String merchantId, IdempotencyKey key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest((merchantId + '\n' + key.value()).getBytes(StandardCharsets.UTF_8));
            return "att_" + HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JDK", e);
        }
    }

    @Override
    public void close() {
        authorizer.close();
    }
}
