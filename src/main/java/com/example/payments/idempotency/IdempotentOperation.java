package com.example.payments.idempotency;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;

import com.example.payments.http.ProblemResponses;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * One idempotent operation over HTTP, reusable by every operation that creates a resource once per
 * {@code Idempotency-Key} ({@code POST /v1/authorizations} today; a capture or a refund in a fork): header parsing,
 * the claim and its status codes, the lease and drain checks, recording the decision, and the release when there is
 * no decision. The caller validates the body, names the scope (the merchant the caller acts for) and supplies the
 * {@link Work}.
 *
 * <p>Status codes: 400 missing or invalid key; a recorded decision replayed with {@code Idempotent-Replayed: true};
 * 409 in flight; 422 key reused with another request; 429 the merchant's {@link Quota} (new claims only); 503 store
 * full or unavailable, draining (the work could not finish before the drain deadline) or lease lost; then the work's
 * own answer: the decision (e.g. 201 with {@code Location}), or its problem when there is no decision (e.g. 502, 504;
 * the key is released); 504 {@code outcome-unknown} when the request was cut off or its decision could not be
 * recorded. The flow's own 409, 429, 503 and 504 carry {@code Retry-After}. Reading a resource back is its resource
 * store's ({@code GET /v1/authorizations/{id}} reads the authorization, not its recorded answer).
 *
 * <p>The promise: every answer that carries a decision is built from the recorded decision, so every answer for one
 * key is byte-identical; the work runs only after a claim, under a lease that covers it.
 *
 * <p>What happens once a key is acquired (binding, lease and drain checks, the work, recording or release) is
 * {@code AcquiredKeys}.
 */
public final class IdempotentOperation {

    private static final System.Logger LOGGER = System.getLogger(IdempotentOperation.class.getName());
    /** Response header marking a replayed response (IETF idempotency-key draft practice). */
    public static final HeaderName IDEMPOTENT_REPLAYED = HeaderNames.create("Idempotent-Replayed");
    private static final HeaderName IDEMPOTENCY_KEY = HeaderNames.create(IdempotencyKey.HEADER);

    /**
     * What the operation is.
     *
     * @param operation name in lookup keys and attempt ids, e.g. {@code authorize}; keys of two operations never meet
     * @param kind      kind of the resource it creates, e.g. {@code authorization}
     * @param basePath  where the resources are read back, e.g. {@code /v1/authorizations}: {@code Location} is
     *                  {@code basePath/id}; a {@code {id}} in it is the request's path parameter {@code id} (the
     *                  parent of a sub-resource, e.g. {@code /v1/authorizations/{id}/captures})
     * @param route     the route, for problem details, e.g. {@code POST /v1/authorizations}
     */
    public record Definition(String operation, String kind, String basePath, String route) {
    }

    /** When the drain must be over. */
    @FunctionalInterface
    public interface DrainDeadline {

        /**
         * The drain deadline, while draining.
         *
         * @return {@link System#nanoTime()} by which in-flight requests must be done, empty when not draining
         */
        OptionalLong nanos();
    }

    private final Definition definition;
    private final IdempotencyRegistry registry;
    private final RequestIdentities identities;
    private final IdempotencySettings.StoreBounds bounds;
    private final Duration workTimeout;
    private final AcquiredKeys acquiredKeys;
    private final Consumer<String> unavailable;

    private IdempotentOperation(Definition definition, IdempotencyRegistry registry, KeyBindings bindings,
                                RequestIdentities identities, IdempotencySettings.StoreBounds bounds,
                                Duration workTimeout, DrainDeadline drain, Consumer<String> unavailable) {
        this.definition = definition;
        this.registry = registry;
        this.unavailable = unavailable;
        this.acquiredKeys = new AcquiredKeys(definition, registry, bindings, bounds, workTimeout, drain, unavailable);
        this.identities = identities;
        this.bounds = bounds;
        this.workTimeout = workTimeout;
    }

    /**
     * Creates the flow of one operation.
     *
     * @param definition  what the operation is
     * @param registry    the idempotency registry
     * @param bindings    the system of record's binding of each used key to its request: checked after every new
     *                    claim, before the work, so a registry that lost its records never lets another request
     *                    under a used key run
     * @param identities  fingerprints, attempt ids and resource ids
     * @param bounds      the store's worst case ({@code BackendSettings.bounds()})
     * @param workTimeout the longest the work takes, e.g. {@code authorizer.timeout}
     * @param drain       the drain deadline while draining
     * @return the flow
     */
    public static IdempotentOperation create(Definition definition, IdempotencyRegistry registry,
                                             KeyBindings bindings, RequestIdentities identities,
                                             IdempotencySettings.StoreBounds bounds, Duration workTimeout,
                                             DrainDeadline drain) {
        return create(definition, registry, bindings, identities, bounds, workTimeout, drain,
                      message -> LOGGER.log(Level.WARNING, message));
    }

    /**
     * Creates the flow of one operation that reports a store's refusals to {@code unavailable} instead of logging
     * each at WARN (the startup warm-up's sandbox sums them up in one line).
     *
     * @param definition  what the operation is
     * @param registry    the idempotency registry
     * @param bindings    the system of record's binding of each used key to its request
     * @param identities  fingerprints, attempt ids and resource ids
     * @param bounds      the store's worst case ({@code BackendSettings.bounds()})
     * @param workTimeout the longest the work takes, e.g. {@code authorizer.timeout}
     * @param drain       the drain deadline while draining
     * @param unavailable gets, for each request refused with a 503 because a store failed, the line that would have
     *                    been logged, e.g. {@code Idempotency store unavailable, refusing the request: database: claim
     *                    failed: …}
     * @return the flow
     */
    public static IdempotentOperation create(Definition definition, IdempotencyRegistry registry,
                                             KeyBindings bindings, RequestIdentities identities,
                                             IdempotencySettings.StoreBounds bounds, Duration workTimeout,
                                             DrainDeadline drain, Consumer<String> unavailable) {
        return new IdempotentOperation(definition, registry, bindings, identities, bounds, workTimeout, drain,
                                       unavailable);
    }

    /**
     * Reads the {@code Idempotency-Key} header: exactly one, valid (IETF draft: an sf-string or a bare token, 1-255
     * printable ASCII characters).
     *
     * @param req the request
     * @param res the response: a 400 problem naming the header is sent when the key is missing or invalid
     * @return the key, or empty when a 400 was sent
     */
    public Optional<IdempotencyKey> key(ServerRequest req, ServerResponse res) {
        List<String> headers = req.headers().all(IDEMPOTENCY_KEY, List::of);
        Optional<IdempotencyKey> key = headers.size() == 1 ? IdempotencyKey.parse(headers.getFirst())
                : Optional.empty();
        if (key.isEmpty()) {
            ProblemResponses.send(req, res, IdempotencyProblems.invalidKey(headers.size(), definition.route()));
        }
        return key;
    }

    /**
     * Runs a validated request through the flow and answers it.
     *
     * @param req           the request, read to its end
     * @param res           the response, not yet sent
     * @param scope         the merchant the caller acts for: keys, attempt ids and resources are scoped by it
     * @param key           the idempotency key
     * @param canonicalForm the validated request in canonical form (fixed field order, CVC excluded)
     * @param work          the work, run only when this request acquired the key
     */
    public void execute(ServerRequest req, ServerResponse res, String scope, IdempotencyKey key, String canonicalForm,
                        Work work) {
        execute(req, res, scope, "", key, canonicalForm, work);
    }

    /**
     * Runs a validated request on a sub-resource through the flow: its keys are scoped by the parent too, so one key
     * used on two parents (a capture of two authorizations) is two requests, never a replay.
     *
     * @param req           the request, read to its end
     * @param res           the response, not yet sent
     * @param scope         the merchant the caller acts for
     * @param parent        the parent resource's id, e.g. the authorization a capture is of; empty for none
     * @param key           the idempotency key
     * @param canonicalForm the validated request in canonical form, the parent id included
     * @param work          the work, run only when this request acquired the key
     */
    public void execute(ServerRequest req, ServerResponse res, String scope, String parent, IdempotencyKey key,
                        String canonicalForm, Work work) {
        String operation = parent.isEmpty() ? definition.operation() : definition.operation() + "/" + parent;
        List<Identity> ids = identities.of(operation, definition.kind(), scope, key, canonicalForm);
        // Nothing is claimed that could not finish before the drain deadline: a claim, the work and the recording.
        if (!acquiredKeys.finishesBeforeTheDrainDeadline(bounds.total().plus(workTimeout))) {
            registry.refused("draining");
            ProblemResponses.sendRetryable(req, res, IdempotencyProblems.draining(), 1);
            return;
        }
        Claim claim;
        try {
            claim = registry.claim(RequestIdentities.lookupKey(operation, scope, key), ids);
        } catch (IdempotencyStore.UnavailableException e) {
            unavailable.accept("Idempotency store unavailable, refusing the request: " + e.getMessage());
            ProblemResponses.sendRetryable(req, res, IdempotencyProblems.storeUnavailable(), 1);
            return;
        }
        switch (claim) {
        case Claim.Acquired acquired -> acquiredKeys.bindThenRun(req, res, acquired, ids, work);
        case Claim.Replay replay -> acquiredKeys.answer(req, res, replay.decision(), true);
        case Claim.InFlight inFlight -> ProblemResponses.sendRetryable(req, res, IdempotencyProblems.inProgress(), 1);
        case Claim.Mismatch mismatch -> ProblemResponses.send(req, res, IdempotencyProblems.reused());
        case Claim.Full full -> ProblemResponses.sendRetryable(req, res, IdempotencyProblems.full(), 5);
        case Claim.OverQuota over -> ProblemResponses.sendRetryable(req, res, IdempotencyProblems.overQuota(over.limit()),
                over.limit() == Quota.Limit.IN_FLIGHT ? 1 : IdempotencyProblems.RECORDS_RETRY_AFTER_SECONDS);
        }
    }
}
