package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.time.Clock;
import java.util.List;
import java.util.Optional;

import com.example.payments.http.Json;
import com.example.payments.http.JsonBody;
import com.example.payments.http.Problem;
import com.example.payments.http.ProblemResponses;
import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.Fingerprint;
import com.example.payments.idempotency.IdempotencyKey;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.StoredResponse;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.HttpMediaType;
import io.helidon.http.Status;
import io.helidon.metrics.api.MeterRegistry;
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
 * Every error is an RFC 9457 problem. A decline is a processed request: 201 with {@code "status":"DECLINED"}. The
 * body must be strict UTF-8 JSON and hold no card number outside {@code card} (400, docs/card-data.md); a body whose
 * chunked framing is broken is a 400 with {@code Connection: close}.
 */
public final class AuthorizationService implements HttpService, AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(AuthorizationService.class.getName());
    static final String PATH = "/v1/authorizations";
    private static final HeaderName IDEMPOTENCY_KEY = HeaderNames.create(IdempotencyKey.HEADER);
    /** Response header marking a replayed response (IETF idempotency-key draft practice). */
    public static final HeaderName IDEMPOTENT_REPLAYED = HeaderNames.create("Idempotent-Replayed");

    private final IdempotencyRegistry registry;
    private final Fingerprint fingerprint;
    private final AuthorizationStore store;
    private final RequestValidator validator;
    private final AuthorizationProcessor processor;

    private AuthorizationService(Builder builder) {
        this.registry = builder.registry;
        this.fingerprint = builder.fingerprint;
        this.store = builder.store;
        this.validator = new RequestValidator(builder.clock);
        this.processor = new AuthorizationProcessor(builder.registry,
                new BoundedAuthorizer(builder.authorizer, builder.settings.timeout(), builder.meters),
                builder.store, builder.clock, builder.meters);
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

    /** Stops the authorizer's executor; in-flight calls are interrupted. Called in the shutdown cleanup phase. */
    @Override
    public void close() {
        processor.close();
    }

    private void authorize(ServerRequest req, ServerResponse res) throws InterruptedException {
        if (!isJson(req.headers().contentType())) {
            ProblemResponses.send(res, ProblemResponses.unsupportedMediaType());
            return;
        }
        // The body is read before the key is looked at: a chunked body over the limit only shows its size while it
        // is read, and 413 comes before 400 (DESIGN §6). Reading throws the 413 for the direct handler to answer.
        RequestValidator.Result body = read(req, res);
        List<String> keys = req.headers().all(IDEMPOTENCY_KEY, List::of);
        Optional<IdempotencyKey> key = keys.size() == 1 ? IdempotencyKey.parse(keys.getFirst()) : Optional.empty();
        if (key.isEmpty()) {
            ProblemResponses.send(res, invalidKey(keys.size()));
            return;
        }
        AuthorizationRequest request;
        switch (body) {
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
        case Claim.Acquired acquired -> answer(res, processor.process(acquired, request, key.get()));
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

    // Strict UTF-8 JSON (RFC 8259); a body whose framing is broken is answered here and its connection closed.
    private RequestValidator.Result read(ServerRequest req, ServerResponse res) {
        return switch (JsonBody.read(req)) {
        case JsonBody.Parsed parsed -> validator.validate(parsed.json());
        case JsonBody.Invalid invalid -> new RequestValidator.Invalid(List.of(invalid.error()));
        case JsonBody.Unreadable unreadable ->
                throw ProblemResponses.sendAndClose(res, ProblemResponses.unreadableBody());
        };
    }

    // Exactly application/json (any parameters, such as charset): a wildcard such as */* is not a content type.
    private static boolean isJson(Optional<HttpMediaType> contentType) {
        return contentType.map(type -> type.mediaType().type().equalsIgnoreCase("application")
                                       && type.mediaType().subtype().equalsIgnoreCase("json"))
                .orElse(false);
    }

    private void answer(ServerResponse res, AuthorizationProcessor.Result result) {
        switch (result) {
        case AuthorizationProcessor.Authorized authorized -> {
            StoredResponse stored = authorized.response();
            res.status(Status.create(stored.status()))
                    .header(HeaderNames.LOCATION, stored.location())
                    .header(HeaderNames.CONTENT_TYPE, stored.contentType())
                    .send(stored.body());
        }
        case AuthorizationProcessor.IssuerUnavailable unavailable -> ProblemResponses.send(res, Problem.of(
                "issuer-unavailable", "Issuer unavailable", 502,
                "The card issuer could not be reached; the outcome is unknown. Retry with the same Idempotency-Key."));
        case AuthorizationProcessor.IssuerTimeout timeout -> ProblemResponses.send(res, Problem.of(
                "issuer-timeout", "Issuer timeout", 504,
                "The card issuer did not answer in time; the outcome is unknown. Retry with the same "
                + "Idempotency-Key."));
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
            ProblemResponses.sendRetryable(res, Problem.of("store-unavailable", "Temporarily unavailable", 503,
                    "The authorization store cannot be reached. Retry shortly."), 1);
            return;
        }
        if (found.isEmpty()) {
            ProblemResponses.send(res, ProblemResponses.notFound("No authorization with this id."));
            return;
        }
        res.header(HeaderValues.CONTENT_TYPE_JSON)
                .header(HeaderNames.CACHE_CONTROL, "no-store")
                .send(Json.bytes(found.get()));
    }

    private static Problem invalidKey(int headers) {
        String detail = switch (headers) {
        case 0 -> "Idempotency-Key header is required for POST /v1/authorizations.";
        case 1 -> "Idempotency-Key must be 1 to 255 printable ASCII characters, as a quoted string or a bare token.";
        default -> "Send exactly one Idempotency-Key header.";
        };
        return Problem.of("invalid-idempotency-key", "Invalid Idempotency-Key", 400, detail)
                .withErrors(List.of(Problem.FieldError.header(IdempotencyKey.HEADER, detail)));
    }

    private static Problem storeUnavailable() {
        return Problem.of("store-unavailable", "Temporarily unavailable", 503,
                          "The idempotency store could not record this request; nothing was authorized. Retry shortly.");
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
