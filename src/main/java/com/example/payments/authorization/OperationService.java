package com.example.payments.authorization;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.example.payments.authentication.Caller;
import com.example.payments.http.Json;
import com.example.payments.http.JsonBody;
import com.example.payments.http.Problem;
import com.example.payments.http.ProblemResponses;
import com.example.payments.idempotency.IdempotencyKey;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.IdempotentOperation;
import com.fasterxml.jackson.databind.JsonNode;

import io.helidon.http.Method;
import io.helidon.http.PathMatchers;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * Captures and voids of an authorization, on the business listener; each a sub-resource of its authorization, made
 * once per {@code Idempotency-Key} scoped by merchant, operation and the authorization's id ({@link IdempotentOperation}).
 * <ul>
 *     <li>{@code POST /v1/authorizations/{id}/captures} {@code {"amount":{"value","currency"}}}: 201 with the capture
 *     ({@code SUCCEEDED}, or {@code DECLINED} with the acquirer's {@code declineCode}) and {@code Location}; 415 not
 *     JSON, 400 key or body invalid, 404 unknown authorization or another merchant's, 409 not capturable (naming the
 *     state, or a void pending, or {@code authorization.max-captures} reached), 422 amount above the capturable
 *     remainder or another currency (naming the field), then the idempotency flow's own codes (replay, 409 in flight,
 *     422 key reused, 429 quota, 502/504 outcome unknown: the amount stays reserved, retry with the same key).</li>
 *     <li>{@code POST /v1/authorizations/{id}/voids} with no body or {@code {}} (the same request): 201 with the void
 *     of the whole uncaptured remainder; 409 nothing left or a capture pending; otherwise as a capture.</li>
 *     <li>{@code GET}/{@code HEAD} of {@code .../captures/{captureId}} and {@code .../voids/{voidId}}: 200 or 404.</li>
 * </ul>
 */
public final class OperationService implements HttpService {

    static final String CAPTURES = AuthorizationService.PATH + "/{id}/captures";
    static final String VOIDS = AuthorizationService.PATH + "/{id}/voids";
    /** The capture operation: keys, attempt ids and resources of its own. */
    public static final IdempotentOperation.Definition CAPTURE = new IdempotentOperation.Definition(
            "capture", "capture", CAPTURES, "POST " + CAPTURES);
    /** The void operation. */
    public static final IdempotentOperation.Definition VOID = new IdempotentOperation.Definition(
            "void", "void", VOIDS, "POST " + VOIDS);
    /** Every path this service serves and its methods. */
    public static final Map<String, List<Method>> RESOURCES = Map.of(
            CAPTURES, List.of(Method.POST),
            CAPTURES + "/{captureId}", List.of(Method.GET, Method.HEAD),
            VOIDS, List.of(Method.POST),
            VOIDS + "/{voidId}", List.of(Method.GET, Method.HEAD));

    private final IdempotentOperation captures;
    private final IdempotentOperation voids;
    private final AuthorizationStore store;
    private final OperationWork work;
    private final RequestValidator validator;

    private OperationService(IdempotentOperation captures, IdempotentOperation voids, AuthorizationStore store,
                             OperationWork work, Clock clock) {
        this.captures = captures;
        this.voids = voids;
        this.store = store;
        this.work = work;
        this.validator = new RequestValidator(clock);
    }

    /**
     * Creates the API.
     *
     * @param captures   the idempotent-operation flow of {@link #CAPTURE}
     * @param voids      the flow of {@link #VOID}
     * @param store      the resource store
     * @param authorizations the authorization API: its bounded authorizer makes the acquirer calls
     * @param lifecycle  {@code authorization.*}: the most captures of one authorization
     * @param clock      the time of reservations and settlements
     * @param meters     metrics registry ({@code captures_total}, {@code voids_total})
     * @return the service
     */
    public static OperationService create(IdempotentOperation captures, IdempotentOperation voids,
                                          AuthorizationStore store, AuthorizationService authorizations,
                                          AuthorizationSettings lifecycle, Clock clock,
                                          io.helidon.metrics.api.MeterRegistry meters) {
        return new OperationService(captures, voids, store, new OperationWork(authorizations.authorizer(), store,
                lifecycle.maxCaptures(), clock, meters), clock);
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post(CAPTURES, this::capture)
                .post(VOIDS, this::voidRemainder)
                .route(Method.predicate(Method.GET, Method.HEAD), PathMatchers.create(CAPTURES + "/{captureId}"),
                       (req, res) -> find(req, res, OperationRecord.CAPTURE, "captureId"))
                .route(Method.predicate(Method.GET, Method.HEAD), PathMatchers.create(VOIDS + "/{voidId}"),
                       (req, res) -> find(req, res, OperationRecord.VOID, "voidId"));
    }

    private void capture(ServerRequest req, ServerResponse res) {
        if (!Json.isUtf8Json(req.headers())) {
            ProblemResponses.send(req, res, ProblemResponses.unsupportedMediaType());
            return;
        }
        List<Problem.FieldError> errors = new ArrayList<>();
        Amount amount = switch (JsonBody.read(req)) {
        case JsonBody.Parsed parsed when parsed.json().isObject() -> {
            RequestValidator.unknownMembers(parsed.json(), "#", RequestValidator.CAPTURE_MEMBERS, errors);
            yield validator.amount(parsed.json().get("amount"), errors);
        }
        case JsonBody.Parsed parsed -> {
            errors.add(Problem.FieldError.body("#", "the body must be a JSON object"));
            yield null;
        }
        case JsonBody.Invalid invalid -> {
            errors.add(invalid.error());
            yield null;
        }
        case JsonBody.Unreadable unreadable ->
                throw ProblemResponses.sendAndClose(req, res, ProblemResponses.unreadableBody());
        };
        Optional<IdempotencyKey> key = captures.key(req, res);
        if (key.isEmpty()) {
            return;
        }
        if (!errors.isEmpty()) {
            invalid(req, res, errors);
            return;
        }
        parent(req, res).ifPresent(authorization -> captures.execute(req, res, authorization.merchantId(),
                authorization.id(), key.get(), "capture\nauthorization=" + authorization.id() + "\namount="
                + amount.value() + "\ncurrency=" + amount.currency(), work.capture(authorization, amount)));
    }

    // No body and {} are the same request: a void takes nothing but its authorization. An empty body is no body,
    // however it is framed (Content-Length: 0, or a chunked body of its last chunk alone), with or without a type.
    private void voidRemainder(ServerRequest req, ServerResponse res) {
        List<Problem.FieldError> errors = new ArrayList<>();
        byte[] body = JsonBody.bytes(req);
        if (body == null) {
            throw ProblemResponses.sendAndClose(req, res, ProblemResponses.unreadableBody());
        }
        if (body.length > 0) {
            if (!Json.isUtf8Json(req.headers())) {
                ProblemResponses.send(req, res, ProblemResponses.unsupportedMediaType());
                return;
            }
            switch (JsonBody.parse(body)) {
            case JsonBody.Parsed parsed when parsed.json().isObject() && parsed.json().isEmpty() -> { }
            case JsonBody.Parsed parsed -> errors.add(Problem.FieldError.body("#", "a void takes no fields: no body, "
                                                                                  + "or {}"));
            case JsonBody.Invalid invalid -> errors.add(invalid.error());
            case JsonBody.Unreadable unreadable ->
                    throw ProblemResponses.sendAndClose(req, res, ProblemResponses.unreadableBody());
            }
        }
        Optional<IdempotencyKey> key = voids.key(req, res);
        if (key.isEmpty()) {
            return;
        }
        if (!errors.isEmpty()) {
            invalid(req, res, errors);
            return;
        }
        parent(req, res).ifPresent(authorization -> voids.execute(req, res, authorization.merchantId(),
                authorization.id(), key.get(), "void\nauthorization=" + authorization.id(),
                work.voidRemainder(authorization)));
    }

    // The caller's own authorization, or a 404 (also for another merchant's) or 503 already sent.
    private Optional<AuthorizationRecord> parent(ServerRequest req, ServerResponse res) {
        String id = req.path().pathParameters().get("id");
        Optional<AuthorizationRecord> found;
        try {
            found = Resources.isId(id) ? store.find(id) : Optional.empty();
        } catch (IdempotencyStore.UnavailableException e) {
            storeUnavailable(req, res);
            return Optional.empty();
        }
        found = found.filter(a -> a.merchantId().equals(Caller.of(req).merchantId()));
        if (found.isEmpty()) {
            ProblemResponses.send(req, res, ProblemResponses.notFound("No authorization with this id."));
        }
        return found;
    }

    private void find(ServerRequest req, ServerResponse res, String kind, String parameter) {
        String id = req.path().pathParameters().get(parameter);
        String parent = req.path().pathParameters().get("id");
        Optional<OperationRecord> found;
        try {
            found = Resources.isId(id) && Resources.isId(parent) ? store.findOperation(id) : Optional.empty();
        } catch (IdempotencyStore.UnavailableException e) {
            storeUnavailable(req, res);
            return;
        }
        found = found.filter(o -> o.kind().equals(kind) && o.authorizationId().equals(parent)
                                  && o.merchantId().equals(Caller.of(req).merchantId()));
        if (found.isEmpty()) {
            ProblemResponses.send(req, res, ProblemResponses.notFound("No " + kind + " with this id."));
            return;
        }
        Resources.send(req, res, Json.bytes(found.get().body()));
    }

    private static void invalid(ServerRequest req, ServerResponse res, List<Problem.FieldError> errors) {
        ProblemResponses.send(req, res, Problem.of("invalid-request", "Invalid request", 400,
                                                   "The request body has invalid fields.").withErrors(errors));
    }

    private static void storeUnavailable(ServerRequest req, ServerResponse res) {
        ProblemResponses.sendRetryable(req, res, Problem.of("store-unavailable", "Temporarily unavailable", 503,
                "The store cannot be reached. Retry shortly."), 1);
    }
}
