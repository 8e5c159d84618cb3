package com.example.payments.authorization;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import com.example.payments.authentication.AuthFailures;
import com.example.payments.authentication.Caller;
import com.example.payments.http.Json;
import com.example.payments.http.JsonBody;
import com.example.payments.http.Problem;
import com.example.payments.http.ProblemResponses;
import com.example.payments.idempotency.IdempotencyKey;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.IdempotentOperation;

import io.helidon.http.HeaderName;
import io.helidon.http.Method;
import io.helidon.http.PathMatchers;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * The authorization API of the business listener (port 8080).
 *
 * <p>Every request reaching it is authenticated: the {@link Caller} (401 comes before, from the authentication
 * filter) is the merchant it may act for, whatever authenticated it.
 * <ul>
 *     <li>{@code POST /v1/authorizations} with {@code Content-Type: application/json} and an {@code Idempotency-Key}
 *     header: 201 with the authorization and {@code Location}; checks in this order: 415 content type, 413 size
 *     (16 KiB, answered before routing by {@link com.example.payments.http.ProblemDirectHandler}), 400 missing or
 *     invalid key, 400 invalid body, 403 a {@code merchantId} other than the caller's, then the idempotent-operation
 *     flow scoped by the caller's merchant ({@link IdempotentOperation}: replay, 409, 422, 429 merchant quota, 503,
 *     504 outcome unknown) around the authorizer (502 issuer failed, 504 issuer timed out; the key is released so a
 *     retry runs again).</li>
 *     <li>{@code GET /v1/authorizations/{id}}: 200 with the same bytes as the 201, or 404 for an unknown id and for
 *     another merchant's authorization alike; {@code HEAD} gets the same status and headers without a body.</li>
 * </ul>
 * Every error is an RFC 9457 problem. A decline is a processed request: 201 with {@code "status":"DECLINED"}. The
 * body must be strict UTF-8 JSON and hold no card number outside {@code card} (400, docs/card-data.md); a body whose
 * chunked framing is broken is a 400 with {@code Connection: close}.
 */
public final class AuthorizationService implements HttpService, AutoCloseable {

    // One line per GET refused because the resource store is unreachable: rate-limited in log4j2.xml.
    private static final System.Logger REFUSALS = System.getLogger(AuthorizationService.class.getName()
                                                                    + ".refusals");

    static final String PATH = "/v1/authorizations";
    /** The operation: its keys, attempt ids and resources are its own. */
    public static final IdempotentOperation.Definition OPERATION = new IdempotentOperation.Definition(
            "authorize", "authorization", PATH, "POST " + PATH);
    /** Response header marking a replayed response (IETF idempotency-key draft practice). */
    public static final HeaderName IDEMPOTENT_REPLAYED = IdempotentOperation.IDEMPOTENT_REPLAYED;
    /** Every path this service serves and its methods, in the order an {@code Allow} header lists them. */
    public static final Map<String, List<Method>> RESOURCES = Map.of(
            PATH, List.of(Method.POST),
            PATH + "/{id}", List.of(Method.GET, Method.HEAD));

    private final IdempotentOperation operation;
    private final BoundedAuthorizer authorizer;
    private final AuthorizeWork work;
    private final RequestValidator validator;
    private final AuthFailures failures;
    private final AuthorizationStore store;

    private AuthorizationService(IdempotentOperation operation, BoundedAuthorizer authorizer,
                                 AuthorizationStore store, AuthorizationSettings lifecycle, Clock clock,
                                 MeterRegistry meters, AuthFailures failures, UnknownOutcomes outcomes,
                                 AuthorizerSettings settings) {
        this.operation = operation;
        this.authorizer = authorizer;
        this.store = store;
        this.failures = failures;
        this.work = new AuthorizeWork(authorizer, store, lifecycle.validity(), meters, outcomes, settings, clock);
        this.validator = new RequestValidator(clock);
    }

    /**
     * Creates the API.
     *
     * @param operation  the idempotent-operation flow of {@link #OPERATION}
     * @param authorizer the issuer seam
     * @param settings   {@code authorizer.*}: its timeout bounds every call
     * @param store      the resource store: each authorization is written there before its decision is recorded,
     *                   and {@code GET} reads its current state from there
     * @param lifecycle  {@code authorization.*}: the validity sets {@code expiresAt}
     * @param clock      clock of card expiry ({@code createdAt} is the issuer's time of the decision)
     * @param meters     metrics registry
     * @param failures   answers and counts the 403 of a caller naming another merchant
     * @return the service
     * @throws NullPointerException if an argument is null; the message names the parameter
     */
    public static AuthorizationService create(IdempotentOperation operation, Authorizer authorizer,
                                              AuthorizerSettings settings, AuthorizationStore store,
                                              AuthorizationSettings lifecycle, Clock clock, MeterRegistry meters,
                                              AuthFailures failures) {
        Objects.requireNonNull(lifecycle, "lifecycle");
        return create(operation, authorizer, settings, store, lifecycle, clock, meters, failures,
                      InMemoryUnknownOutcomes.create(lifecycle.maxResources()));
    }

    /**
     * Creates the API with where its unknown outcomes are recorded.
     *
     * @param operation  the idempotent-operation flow of {@link #OPERATION}
     * @param authorizer the issuer seam
     * @param settings   {@code authorizer.*}: its timeout bounds every call; {@code unknown-outcome.reverse-after}
     *                   sets each unknown outcome's deadline
     * @param store      the resource store
     * @param lifecycle  {@code authorization.*}
     * @param clock      clock of card expiry and of unknown outcomes' deadlines
     * @param meters     metrics registry
     * @param failures   answers and counts the 403 of a caller naming another merchant
     * @param outcomes   where unknown outcomes are recorded for the {@link Reconciler}
     * @return the service
     * @throws NullPointerException if an argument is null; the message names the parameter
     */
    public static AuthorizationService create(IdempotentOperation operation, Authorizer authorizer,
                                              AuthorizerSettings settings, AuthorizationStore store,
                                              AuthorizationSettings lifecycle, Clock clock, MeterRegistry meters,
                                              AuthFailures failures, UnknownOutcomes outcomes) {
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(authorizer, "authorizer");
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(lifecycle, "lifecycle");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(meters, "meters");
        Objects.requireNonNull(failures, "failures");
        Objects.requireNonNull(outcomes, "outcomes");
        LateDecisions late = new LateDecisions(settings.timeout(), settings.reverseAfter());
        return new AuthorizationService(operation, new BoundedAuthorizer(authorizer, settings.timeout(), meters, late),
                                        store, lifecycle, clock, meters, failures, outcomes, settings);
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post(PATH, this::authorize)
                .route(Method.predicate(Method.GET, Method.HEAD), PathMatchers.create(PATH + "/{id}"), this::find);
    }

    /**
     * The bounded authorizer, shared with captures and voids (one executor, one set of meters).
     *
     * @return the authorizer
     */
    BoundedAuthorizer authorizer() {
        return authorizer;
    }

    /** Stops the authorizer's executor; in-flight calls are interrupted. Called in the shutdown cleanup phase. */
    @Override
    public void close() {
        authorizer.close();
    }

    private void authorize(ServerRequest req, ServerResponse res) {
        if (!Json.isUtf8Json(req.headers())) {
            ProblemResponses.send(req, res, ProblemResponses.unsupportedMediaType());
            return;
        }
        // The body is read before the key is looked at: a chunked body over the limit only shows its size while it
        // is read, and 413 comes before 400. Reading throws the 413 for the direct handler to answer.
        RequestValidator.Result body = read(req, res);
        Optional<IdempotencyKey> key = operation.key(req, res);
        if (key.isEmpty()) {
            return;
        }
        switch (body) {
        case RequestValidator.Valid valid -> authorize(req, res, key.get(), valid.request());
        case RequestValidator.Invalid invalid -> ProblemResponses.send(req, res, Problem.of(
                "invalid-request", "Invalid request", 400, "The request body has invalid fields.")
                .withErrors(invalid.errors()));
        }
    }

    private void authorize(ServerRequest req, ServerResponse res, IdempotencyKey key, AuthorizationRequest request) {
        Caller caller = Caller.of(req);
        if (!caller.actsFor(request.merchantId())) {
            failures.forbidden(req, res, caller, AuthFailures.MERCHANT_MISMATCH, "#/merchantId");
            return;
        }
        operation.execute(req, res, caller.merchantId(), key, request.canonicalForm(), work.of(request));
    }

    // Strict UTF-8 JSON (RFC 8259); a body whose framing is broken is answered here and its connection closed.
    private RequestValidator.Result read(ServerRequest req, ServerResponse res) {
        return switch (JsonBody.read(req)) {
        case JsonBody.Parsed parsed -> validator.validate(parsed.json());
        case JsonBody.Invalid invalid -> new RequestValidator.Invalid(List.of(invalid.error()));
        case JsonBody.Unreadable unreadable ->
                throw ProblemResponses.sendAndClose(req, res, ProblemResponses.unreadableBody());
        };
    }

    // The current state from the resource store, whatever the idempotency retention: it bounds replays only.
    private void find(ServerRequest req, ServerResponse res) {
        String id = req.path().pathParameters().get("id");
        Optional<AuthorizationRecord> found;
        try {
            found = Resources.isId(id) ? store.find(id) : Optional.empty();
        } catch (IdempotencyStore.UnavailableException e) {
            REFUSALS.log(System.Logger.Level.WARNING, "Resource store unavailable for GET: {0}", e.getMessage());
            ProblemResponses.sendRetryable(req, res, Problem.of("store-unavailable", "Temporarily unavailable", 503,
                    "The store cannot be reached. Retry shortly."), 1);
            return;
        }
        // Another merchant's authorization is answered exactly like an unknown id: no caller learns which ids exist.
        if (found.isEmpty() || !found.get().merchantId().equals(Caller.of(req).merchantId())) {
            ProblemResponses.send(req, res, ProblemResponses.notFound("No authorization with this id."));
            return;
        }
        Resources.send(req, res, Json.bytes(found.get().currentView()));
    }
}
