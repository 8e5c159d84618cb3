package com.example.payments.idempotency;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import com.example.payments.http.Problem;
import com.example.payments.http.ProblemResponses;
import com.example.payments.http.ResponseBodies;
import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * What {@link IdempotentOperation} does once a request acquired its key: binds the key durably ({@link KeyBindings};
 * another request bound to it is 422; a store that bound it with the claim saves the round trip), checks that the
 * lease and the drain deadline cover the work, runs the work,
 * records its decision (the key is never released after a decision) or releases the key when there is none (and the
 * binding this claim made, when the work never began), and answers every decision, first or replayed, from the
 * recorded bytes.
 */
final class AcquiredKeys {

    private static final System.Logger LOGGER = System.getLogger(IdempotentOperation.class.getName());

    private final IdempotentOperation.Definition definition;
    private final IdempotencyRegistry registry;
    private final KeyBindings bindings;
    private final IdempotencySettings.StoreBounds bounds;
    private final Duration workTimeout;
    private final IdempotentOperation.DrainDeadline drain;
    private final Consumer<String> unavailable;

    AcquiredKeys(IdempotentOperation.Definition definition, IdempotencyRegistry registry, KeyBindings bindings,
                 IdempotencySettings.StoreBounds bounds, Duration workTimeout, IdempotentOperation.DrainDeadline drain,
                 Consumer<String> unavailable) {
        this.unavailable = unavailable;
        this.definition = definition;
        this.registry = registry;
        this.bindings = bindings;
        this.bounds = bounds;
        this.workTimeout = workTimeout;
        this.drain = drain;
    }

    // The key's durable binding decides which request it belongs to: the registry may have lost the record that did.
    void bindThenRun(ServerRequest req, ServerResponse res, Claim.Acquired claim, List<Identity> ids,
                             Work work) {
        KeyBindings.Bound bound = claim.bound();
        try {
            if (bound == null) {
                bound = bindings.bind(claim.lookupKey(), ids, claim.identity());
            }
        } catch (IdempotencyStore.UnavailableException e) {
            unavailable.accept("Key bindings unavailable, refusing the request: " + e.getMessage());
            registry.release(claim, ReleaseReason.ERROR);
            ProblemResponses.sendRetryable(req, res, IdempotencyProblems.storeUnavailable(), 1);
            return;
        } catch (StoreFullException e) {
            // The bindings count against the resource store's bound, not the registry's: store-full, as the work
            // would answer had the resource store refused the write itself.
            unavailable.accept("Key bindings full, refusing the request: " + e.getMessage());
            registry.release(claim, ReleaseReason.ERROR);
            ProblemResponses.sendRetryable(req, res, IdempotencyProblems.storeFull(), 5);
            return;
        }
        if (bound.identity() < 0) {
            registry.release(claim, ReleaseReason.KEY_REUSED);
            ProblemResponses.send(req, res, IdempotencyProblems.reused());
            return;
        }
        Identity identity = ids.get(bound.identity());
        boolean created = bound.created();
        run(req, res, claim, identity, work, (reason, workBegan) -> {
            registry.release(claim, reason);
            if (created && !workBegan) {
                unbindQuietly(claim.lookupKey(), identity.fingerprint());
            }
        });
    }

    // Released before the work began: nothing was done for this request, so the key may carry another one. Once the
    // work began, the binding stays: the issuer may have acted on this request's attempt id (a 502, a 504, the drain
    // cut it off), so only a retry with the same body, which sends that attempt id again, may use the key; another
    // body is 422 (the IETF idempotency-key draft's rule for a reused key), never a new payment under it.
    private void unbindQuietly(String lookupKey, String fingerprint) {
        try {
            bindings.unbind(lookupKey, fingerprint);
        } catch (RuntimeException e) {
            LOGGER.log(Level.WARNING, "Could not unbind a released idempotency key: {0}", String.valueOf(e));
        }
    }

    private void run(ServerRequest req, ServerResponse res, Claim.Acquired claim, Identity identity, Work work,
                     BiConsumer<ReleaseReason, Boolean> release) {
        // The lease must cover the work and the recording: otherwise another replica may claim the key while the
        // work runs. Checked locally (renewals' verdict and deadline), without a round trip.
        if (!registry.leaseCovers(claim, workTimeout)) {
            release.accept(ReleaseReason.LEASE_LOST, false);
            ProblemResponses.sendRetryable(req, res, IdempotencyProblems.leaseLost(), 1);
            return;
        }
        if (!finishesBeforeTheDrainDeadline(workTimeout.plus(bounds.record()))) {
            release.accept(ReleaseReason.SHUTDOWN, false);
            ProblemResponses.sendRetryable(req, res, IdempotencyProblems.draining(), 1);
            return;
        }
        Work.Outcome outcome;
        try {
            outcome = work.perform(Work.Attempt.of(claim.lookupKey(), identity, claim.token(),
                                                          call -> registry.leaseCovers(claim, call)));
        } catch (InterruptedException e) {
            // Only the end of the drain interrupts a request: free the key so a retry on another replica runs, and
            // answer if the connection still lets us. The interrupt ends here, with the request: set again, it would
            // make Helidon fail the answer with a 500.
            release.accept(ReleaseReason.SHUTDOWN, true);
            sendQuietly(req, res, IdempotencyProblems.outcomeUnknown());
            return;
        } catch (RuntimeException | Error e) {
            release.accept(ReleaseReason.ERROR, true);
            throw e;
        }
        switch (outcome) {
        case Work.Decided decided -> record(req, res, claim, identity, decided);
        case Work.Undecided undecided -> {
            release.accept(undecided.reason(), true);
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
            recorded = registry.recordAndComplete(claim, decided.recordedAs(identity),
                                                  new Decision(identity.decision(), decided.body()));
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
        decided.whenRecorded().accept(recorded);
        answer(req, res, recorded.winner(), false);
    }

    void answer(ServerRequest req, ServerResponse res, Decision decision, boolean replayed) {
        res.status(Status.CREATED_201)
                .header(HeaderNames.LOCATION, definition.basePath().replace("{id}", req.path().pathParameters()
                        .first("id").orElse("")) + "/" + decision.key().id())
                .header(HeaderValues.CONTENT_TYPE_JSON);
        if (replayed) {
            res.header(IdempotentOperation.IDEMPOTENT_REPLAYED, "true");
        }
        ResponseBodies.send(req, res, decision.body());
    }

    boolean finishesBeforeTheDrainDeadline(Duration needed) {
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
}
