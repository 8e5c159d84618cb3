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
import java.util.Optional;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.http.Problem;
import com.example.payments.http.ProblemResponses;
import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.Fingerprint;
import com.example.payments.idempotency.IdempotencyKey;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.StoredResponse;
import com.fasterxml.jackson.databind.JsonNode;

import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.http.media.jackson.JacksonRuntimeException;
import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * The authorization API of the business listener (port 8080).
 *
 * <ul>
 *     <li>{@code POST /v1/authorizations} with {@code Content-Type: application/json} and an {@code Idempotency-Key}
 *     header: 201 with the authorization and {@code Location}; checks in this order: 415 content type, 413 size
 *     (16 KiB, answered before routing by {@link com.example.payments.http.ProblemDirectHandler}), 400 missing or
 *     invalid key, 400 invalid body, then the idempotency claim (replay with {@code Idempotent-Replayed: true}, 409
 *     in flight, 422 fingerprint mismatch, 503 registry full or unavailable), then the authorizer (502 issuer failed,
 *     504 issuer timed out; the key is released so a retry runs again).</li>
 *     <li>{@code GET /v1/authorizations/{id}}: 200 with the same body, or 404.</li>
 * </ul>
 * Every error is an RFC 9457 problem. A decline is a processed request: 201 with {@code "status":"DECLINED"}.
 */
public final class AuthorizationService implements HttpService {

    private static final System.Logger LOGGER = System.getLogger(AuthorizationService.class.getName());
    private static final String PATH = "/v1/authorizations";
    private static final HeaderName IDEMPOTENCY_KEY = HeaderNames.create(IdempotencyKey.HEADER);
    /** Response header marking a replayed response (IETF idempotency-key draft practice). */
    public static final HeaderName IDEMPOTENT_REPLAYED = HeaderNames.create("Idempotent-Replayed");

    private final IdempotencyRegistry registry;
    private final Fingerprint fingerprint;
    private final BoundedAuthorizer authorizer;
    private final AuthorizationStore store;
    private final RequestValidator validator;
    private final Clock clock;
    private final MeterRegistry meters;

    private AuthorizationService(Builder builder) {
        this.registry = builder.registry;
        this.fingerprint = builder.fingerprint;
        this.authorizer = new BoundedAuthorizer(builder.authorizer, builder.settings.timeout(), builder.meters);
        this.store = builder.store;
        this.clock = builder.clock;
        this.validator = new RequestValidator(clock);
        this.meters = builder.meters;
    }

    /**
     * A builder; every setter is required except the clock.
     *
     * @return builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post(PATH, this::authorize)
                .get(PATH + "/{id}", this::find);
    }

    private void authorize(ServerRequest req, ServerResponse res) throws InterruptedException {
        if (!req.headers().contentType().map(type -> type.test(MediaTypes.APPLICATION_JSON)).orElse(false)) {
            ProblemResponses.send(res, ProblemResponses.unsupportedMediaType());
            return;
        }
        Optional<IdempotencyKey> key = req.headers().first(IDEMPOTENCY_KEY).flatMap(IdempotencyKey::parse);
        if (key.isEmpty()) {
            ProblemResponses.send(res, invalidKey(req.headers().contains(IDEMPOTENCY_KEY)));
            return;
        }
        AuthorizationRequest request;
        switch (validate(req)) {
        case RequestValidator.Valid valid -> request = valid.request();
        case RequestValidator.Invalid invalid -> {
            ProblemResponses.send(res, Problem.of("invalid-request", "Invalid request", 400,
                                                  "The request body has invalid fields.").withErrors(invalid.errors()));
            return;
        }
        }
        Claim claim;
        try {
            claim = registry.claim(request.merchantId(), key.get(), fingerprint.of(request.canonicalForm()));
        } catch (IdempotencyStore.UnavailableException e) {
            LOGGER.log(Level.WARNING, "Idempotency store unavailable, refusing to authorize: {0}", e.getMessage());
            ProblemResponses.sendRetryable(res, storeUnavailable(), 1);
            return;
        }
        switch (claim) {
        case Claim.Acquired acquired -> runAuthorizer(res, acquired, request, key.get());
        case Claim.Replay replay -> replay(res, replay.response());
        case Claim.InFlight inFlight -> ProblemResponses.sendRetryable(res, Problem.of(
                "request-in-progress", "Request in progress", 409,
                "A request with this Idempotency-Key is still being processed; retry after it completes."), 1);
        case Claim.Mismatch mismatch -> ProblemResponses.send(res, Problem.of(
                "idempotency-key-reused", "Idempotency-Key reused", 422,
                "This Idempotency-Key was already used with a different request body."));
        case Claim.Full full -> ProblemResponses.sendRetryable(res, Problem.of(
                "idempotency-capacity", "Idempotency registry full", 503,
                "This instance holds its maximum number of idempotency keys; retry shortly."), 5);
        }
    }

    private RequestValidator.Result validate(ServerRequest req) {
        JsonNode body;
        try {
            body = req.content().as(JsonNode.class);
        } catch (JacksonRuntimeException e) {
            // Jackson's message quotes the offending input, which may be a card number: never pass it on.
            return new RequestValidator.Invalid(List.of(Problem.FieldError.body("#", "the body is not valid JSON")));
        }
        return validator.validate(body);
    }

    private void runAuthorizer(ServerResponse res, Claim.Acquired claim, AuthorizationRequest request,
                               IdempotencyKey key) throws InterruptedException {
        boolean decided = false;
        try {
            AuthorizationAttempt attempt = new AuthorizationAttempt(attemptId(request.merchantId(), key), request);
            switch (authorizer.authorize(attempt)) {
            case BoundedAuthorizer.Decided decision -> {
                // From here on the issuer has decided: the key must never be released, or a retry would authorize
                // the same payment a second time.
                decided = true;
                Authorization authorization = record(request, decision.decision());
                byte[] body = Json.bytes(authorization);
                String location = PATH + "/" + authorization.id();
                persist(claim, authorization, new StoredResponse(201, location,
                        HeaderValues.CONTENT_TYPE_JSON.values(), body));
                meters.getOrCreate(Counter.builder("authorizations").tags(List.of(
                        Tag.create("status", authorization.status().toLowerCase(Locale.ROOT))))
                        .description("Processed authorizations by status")).increment();
                res.status(Status.CREATED_201)
                        .header(HeaderNames.LOCATION, location)
                        .header(HeaderValues.CONTENT_TYPE_JSON)
                        .send(body);
            }
            case BoundedAuthorizer.Failed failed -> {
                registry.release(claim, ReleaseReason.ISSUER_UNAVAILABLE);
                ProblemResponses.send(res, Problem.of("issuer-unavailable", "Issuer unavailable", 502,
                        "The card issuer could not be reached; the outcome is unknown. Retry with the same "
                        + "Idempotency-Key."));
            }
            case BoundedAuthorizer.TimedOut timedOut -> {
                registry.release(claim, ReleaseReason.ISSUER_TIMEOUT);
                ProblemResponses.send(res, Problem.of("issuer-timeout", "Issuer timeout", 504,
                        "The card issuer did not answer in time; the outcome is unknown. Retry with the same "
                        + "Idempotency-Key."));
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
    private void persist(Claim.Acquired claim, Authorization authorization, StoredResponse response) {
        try {
            store.save(authorization);
        } catch (AuthorizationStore.StoreUnavailableException e) {
            LOGGER.log(Level.ERROR, "Authorization {0} decided but not stored for GET: {1}", authorization.id(),
                       e.getMessage());
        }
        try {
            registry.complete(claim, response);
        } catch (IdempotencyStore.UnavailableException e) {
            LOGGER.log(Level.ERROR, "Authorization {0} decided but its response not stored for replay: {1}",
                       authorization.id(), e.getMessage());
        }
    }

    private void replay(ServerResponse res, StoredResponse stored) {
        res.status(Status.create(stored.status()))
                .header(IDEMPOTENT_REPLAYED, "true")
                .header(HeaderNames.CONTENT_TYPE, stored.contentType());
        if (stored.location() != null) {
            res.header(HeaderNames.LOCATION, stored.location());
        }
        res.send(stored.body());
    }

    private void find(ServerRequest req, ServerResponse res) {
        String id = req.path().pathParameters().get("id");
        Optional<Authorization> found;
        try {
            found = store.find(id);
        } catch (AuthorizationStore.StoreUnavailableException e) {
            LOGGER.log(Level.WARNING, "Authorization store unavailable: {0}", e.getMessage());
            ProblemResponses.sendRetryable(res, storeUnavailable(), 1);
            return;
        }
        if (found.isEmpty()) {
            ProblemResponses.send(res, ProblemResponses.notFound("No authorization with this id."));
            return;
        }
        res.header(HeaderValues.CONTENT_TYPE_JSON).send(Json.bytes(found.get()));
    }

    private Authorization record(AuthorizationRequest request, Authorizer.Decision decision) {
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

    private static Problem invalidKey(boolean present) {
        String detail = present
                ? "Idempotency-Key must be 1 to 255 printable ASCII characters, as a quoted string or a bare token."
                : "Idempotency-Key header is required for POST /v1/authorizations.";
        return Problem.of("invalid-idempotency-key", "Invalid Idempotency-Key", 400, detail)
                .withErrors(List.of(Problem.FieldError.header(IdempotencyKey.HEADER, detail)));
    }

    private static Problem storeUnavailable() {
        return Problem.of("store-unavailable", "Temporarily unavailable", 503,
                          "The idempotency store cannot be reached; nothing was authorized. Retry shortly.");
    }

    /** Builder of {@link AuthorizationService}. */
    public static final class Builder {
        private IdempotencyRegistry registry;
        private Fingerprint fingerprint;
        private Authorizer authorizer;
        private AuthorizerSettings settings;
        private AuthorizationStore store;
        private MeterRegistry meters;
        private Clock clock = Clock.systemUTC();

        private Builder() {
        }

        /**
         * @param registry the idempotency registry
         * @return this builder
         */
        public Builder registry(IdempotencyRegistry registry) {
            this.registry = registry;
            return this;
        }

        /**
         * @param fingerprint request fingerprinter
         * @return this builder
         */
        public Builder fingerprint(Fingerprint fingerprint) {
            this.fingerprint = fingerprint;
            return this;
        }

        /**
         * @param authorizer the issuer seam
         * @param settings   its timeout
         * @return this builder
         */
        public Builder authorizer(Authorizer authorizer, AuthorizerSettings settings) {
            this.authorizer = authorizer;
            this.settings = settings;
            return this;
        }

        /**
         * @param store where authorizations are kept for GET
         * @return this builder
         */
        public Builder store(AuthorizationStore store) {
            this.store = store;
            return this;
        }

        /**
         * @param meters metrics registry
         * @return this builder
         */
        public Builder meters(MeterRegistry meters) {
            this.meters = meters;
            return this;
        }

        /**
         * @param clock clock for {@code createdAt} and card expiry, default UTC system clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Builds the service.
         *
         * @return the service
         */
        public AuthorizationService build() {
            return new AuthorizationService(this);
        }
    }
}
