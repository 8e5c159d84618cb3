package com.example.payments.idempotency;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;

import com.example.payments.http.Problem;
import com.example.payments.http.ProblemResponses;
import com.example.payments.http.ResponseBodies;
import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
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
 * recorded. The flow's own 409, 429, 503 and 504 carry {@code Retry-After}. Reads ({@link #find}) answer only the
 * scope's own resources: another scope's is 404, exactly like an unknown id.
 *
 * <p>The promise: every answer that carries a decision is built from the recorded decision, so every answer for one
 * key is byte-identical; the work runs only after a claim, under a lease that covers it.
 *
 * <p>Size: the claim-to-status flow and its replay rules are one state machine, kept in one place.
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
     * @param owner     reads the scope a recorded body belongs to, e.g. its {@code merchantId}; {@link #find} answers
     *                  404 to any other scope
     */
    public record Definition(String operation, String kind, String basePath, String route, Owner owner) {
    }

    /** Which scope a recorded resource belongs to. */
    @FunctionalInterface
    public interface Owner {

        /**
         * Reads the owner from a body the operation's work recorded.
         *
         * @param body the recorded body
         * @return its scope (merchant), or empty when the body names none (then nobody may read it)
         */
        Optional<String> of(byte[] body);
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
    private final DrainDeadline drain;
    private final KeyBindings bindings;

    private IdempotentOperation(Definition definition, IdempotencyRegistry registry, KeyBindings bindings,
                                RequestIdentities identities, IdempotencySettings.StoreBounds bounds,
                                Duration workTimeout, DrainDeadline drain) {
        this.definition = definition;
        this.registry = registry;
        this.bindings = bindings;
        this.identities = identities;
        this.bounds = bounds;
        this.workTimeout = workTimeout;
        this.drain = drain;
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
     * @param bounds      the store's worst case ({@code IdempotencySettings.bounds()})
     * @param workTimeout the longest the work takes, e.g. {@code authorizer.timeout}
     * @param drain       the drain deadline while draining
     * @return the flow
     */
    public static IdempotentOperation create(Definition definition, IdempotencyRegistry registry,
                                             KeyBindings bindings, RequestIdentities identities,
                                             IdempotencySettings.StoreBounds bounds, Duration workTimeout,
                                             DrainDeadline drain) {
        return new IdempotentOperation(definition, registry, bindings, identities, bounds, workTimeout, drain);
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
        if (!finishesBeforeTheDrainDeadline(bounds.total().plus(workTimeout))) {
            registry.refused("draining");
            ProblemResponses.sendRetryable(req, res, IdempotencyProblems.draining(), 1);
            return;
        }
        Claim claim;
        try {
            claim = registry.claim(RequestIdentities.lookupKey(operation, scope, key), ids);
        } catch (IdempotencyStore.UnavailableException e) {
            LOGGER.log(Level.WARNING, "Idempotency store unavailable, refusing the request: {0}", e.getMessage());
            ProblemResponses.sendRetryable(req, res, IdempotencyProblems.storeUnavailable(), 1);
            return;
        }
        switch (claim) {
        case Claim.Acquired acquired -> bindThenRun(req, res, acquired, ids, work);
        case Claim.Replay replay -> answer(req, res, replay.decision(), true);
        case Claim.InFlight inFlight -> ProblemResponses.sendRetryable(req, res, IdempotencyProblems.inProgress(), 1);
        case Claim.Mismatch mismatch -> ProblemResponses.send(req, res, IdempotencyProblems.reused());
        case Claim.Full full -> ProblemResponses.sendRetryable(req, res, IdempotencyProblems.full(), 5);
        case Claim.OverQuota over -> ProblemResponses.sendRetryable(req, res, IdempotencyProblems.overQuota(over.limit()),
                over.limit() == Quota.Limit.IN_FLIGHT ? 1 : IdempotencyProblems.RECORDS_RETRY_AFTER_SECONDS);
        }
    }

    /**
     * Answers {@code GET basePath/{id}}: 200 with the recorded body, 404 when unknown, past retention or another
     * scope's (the same answer, so that no caller learns which ids exist), 503 when the store cannot be reached; a
     * {@code HEAD} gets the same status and headers without the body.
     *
     * @param req   the {@code GET} or {@code HEAD} request
     * @param res   the response, not yet sent
     * @param scope the merchant the caller acts for
     * @param id    the id from the path
     */
    public void find(ServerRequest req, ServerResponse res, String scope, String id) {
        if (!isUuid(id)) {
            ProblemResponses.send(req, res, ProblemResponses.notFound("No " + definition.kind() + " with this id."));
            return;
        }
        Optional<Decision> found;
        try {
            found = registry.findDecision(new DecisionKey(definition.kind(), id));
        } catch (IdempotencyStore.UnavailableException e) {
            LOGGER.log(Level.WARNING, "Store unavailable for GET: {0}", e.getMessage());
            ProblemResponses.sendRetryable(req, res, Problem.of("store-unavailable", "Temporarily unavailable", 503,
                    "The store cannot be reached. Retry shortly."), 1);
            return;
        }
        if (found.isEmpty() || !definition.owner().of(found.get().body()).map(scope::equals).orElse(false)) {
            ProblemResponses.send(req, res, ProblemResponses.notFound("No " + definition.kind() + " with this id."));
            return;
        }
        res.header(HeaderValues.CONTENT_TYPE_JSON)
                .header(HeaderNames.CACHE_CONTROL, "no-store");
        ResponseBodies.send(req, res, found.get().body());
    }

    // The key's durable binding decides which request it belongs to: the registry may have lost the record that did.
    private void bindThenRun(ServerRequest req, ServerResponse res, Claim.Acquired claim, List<Identity> ids,
                             Work work) {
        KeyBindings.Bound bound;
        try {
            bound = bindings.bind(claim.lookupKey(), ids, claim.identity());
        } catch (IdempotencyStore.UnavailableException | StoreFullException e) {
            LOGGER.log(Level.WARNING, "Key bindings unavailable, refusing the request: {0}", e.getMessage());
            registry.release(claim, ReleaseReason.ERROR);
            boolean full = e instanceof StoreFullException;
            ProblemResponses.sendRetryable(req, res, full ? IdempotencyProblems.full()
                    : IdempotencyProblems.storeUnavailable(), full ? 5 : 1);
            return;
        }
        if (bound.identity() < 0) {
            registry.release(claim, ReleaseReason.KEY_REUSED);
            ProblemResponses.send(req, res, IdempotencyProblems.reused());
            return;
        }
        Identity identity = ids.get(bound.identity());
        run(req, res, claim, identity, work, reason -> {
            registry.release(claim, reason);
            if (bound.created()) {
                unbindQuietly(claim.lookupKey(), identity.fingerprint());
            }
        });
    }

    // Released without a decision: the key may carry another request, as after any release. A binding left behind
    // only makes that other request 422 until it is retried with the first body.
    private void unbindQuietly(String lookupKey, String fingerprint) {
        try {
            bindings.unbind(lookupKey, fingerprint);
        } catch (RuntimeException e) {
            LOGGER.log(Level.WARNING, "Could not unbind a released idempotency key: {0}", String.valueOf(e));
        }
    }

    private void run(ServerRequest req, ServerResponse res, Claim.Acquired claim, Identity identity, Work work,
                     java.util.function.Consumer<ReleaseReason> release) {
        // The lease must cover the work and the recording: otherwise another replica may claim the key while the
        // work runs. Checked locally (renewals' verdict and deadline), without a round trip.
        if (!registry.leaseCovers(claim, workTimeout)) {
            release.accept(ReleaseReason.LEASE_LOST);
            ProblemResponses.sendRetryable(req, res, IdempotencyProblems.leaseLost(), 1);
            return;
        }
        if (!finishesBeforeTheDrainDeadline(workTimeout.plus(bounds.record()))) {
            release.accept(ReleaseReason.SHUTDOWN);
            ProblemResponses.sendRetryable(req, res, IdempotencyProblems.draining(), 1);
            return;
        }
        Work.Outcome outcome;
        try {
            outcome = work.perform(new Work.Attempt(identity.attemptId(), identity.decision().id()));
        } catch (InterruptedException e) {
            // Only the end of the drain interrupts a request: free the key so a retry on another replica runs, and
            // answer if the connection still lets us. The interrupt ends here, with the request: set again, it would
            // make Helidon fail the answer with a 500.
            release.accept(ReleaseReason.SHUTDOWN);
            sendQuietly(req, res, IdempotencyProblems.outcomeUnknown());
            return;
        } catch (RuntimeException | Error e) {
            release.accept(ReleaseReason.ERROR);
            throw e;
        }
        switch (outcome) {
        case Work.Decided decided -> record(req, res, claim, identity, decided);
        case Work.Undecided undecided -> {
            release.accept(undecided.reason());
            if (undecided.retryAfterSeconds() > 0) {
                ProblemResponses.sendRetryable(req, res, undecided.problem(), undecided.retryAfterSeconds());
            } else {
                ProblemResponses.send(req, res, undecided.problem());
            }
        }
        }
    }

    private void record(ServerRequest req, ServerResponse res, Claim.Acquired claim, Identity identity,
                        Work.Decided decided) {
        Recorded recorded;
        try {
            recorded = registry.recordAndComplete(claim, identity, new Decision(identity.decision(), decided.body()));
        } catch (RuntimeException e) {
            // Whatever failed, the key is never released after a decision: the retry recovers the decision if it
            // was written, or runs the work again with the same attempt id, which the issuer deduplicates.
            LOGGER.log(Level.ERROR, "{0} {1} decided but its recording is unknown: {2}", definition.kind(),
                       identity.decision().id(), String.valueOf(e));
            sendQuietly(req, res, IdempotencyProblems.outcomeUnknown());
            return;
        }
        if (recorded.inserted()) {
            decided.whenRecordedFirst().run();
        }
        answer(req, res, recorded.winner(), false);
    }

    private void answer(ServerRequest req, ServerResponse res, Decision decision, boolean replayed) {
        res.status(Status.CREATED_201)
                .header(HeaderNames.LOCATION, definition.basePath().replace("{id}", req.path().pathParameters()
                        .first("id").orElse("")) + "/" + decision.key().id())
                .header(HeaderValues.CONTENT_TYPE_JSON);
        if (replayed) {
            res.header(IDEMPOTENT_REPLAYED, "true");
        }
        ResponseBodies.send(req, res, decision.body());
    }

    private boolean finishesBeforeTheDrainDeadline(Duration needed) {
        OptionalLong deadline = drain.nanos();
        return deadline.isEmpty() || deadline.getAsLong() - System.nanoTime() > needed.toNanos();
    }

    private static void sendQuietly(ServerRequest req, ServerResponse res, Problem problem) {
        try {
            if (!res.isSent()) {
                ProblemResponses.sendRetryable(req, res, problem, 1);
            }
        } catch (RuntimeException e) {
            LOGGER.log(Level.DEBUG, "Could not answer a cut-off request: {0}", String.valueOf(e));
        }
    }

    private static boolean isUuid(String id) {
        try {
            return UUID.fromString(id).toString().equals(id);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
