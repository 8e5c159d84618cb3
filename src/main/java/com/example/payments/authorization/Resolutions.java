package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import com.example.payments.http.Json;
import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.Decision;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.KeyBindings;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * Resolves one unknown outcome for the {@link Reconciler}. It claims the idempotency key exactly as a retry of the
 * request would (same lookup key, same fingerprint), so the registry's fencing decides between it and a retry: only
 * one of them acts, the other gets a 409 (a retry) or waits for the next run (the reconciler). Then:
 * <ul>
 *     <li>a recorded decision (replayed), or an authorization already in the resource store: a retry resolved it;
 *     the record is dropped ({@code unknown_outcomes_total{resolution="retried"}}). When that authorization holds
 *     another attempt id (an acquirer that does not deduplicate: each execution sends its own), this attempt is
 *     reversed all the same ({@code resolution="reversed"}).</li>
 *     <li>the key acquired: a reversal of the attempt is sent under one reversal id derived from the attempt id (the
 *     same on every replica and after a restart), again with backoff until the acquirer confirms it
 *     ({@link Reversals}); then the authorization is recorded {@code DECLINED} with {@code declineCode: "reversed"}
 *     in state {@code REVERSED}, and every later retry replays that ({@code resolution="reversed"}). Unconfirmed, the
 *     key is released and the next runs send the same reversal id again.</li>
 *     <li>the key bound to another request (its first request's binding was released after the unknown outcome): the
 *     attempt is reversed all the same, nothing is recorded under the key.</li>
 * </ul>
 * A key held by a retry (in flight), or a store at its bound or over its quota, leaves the outcome for the next run.
 */
final class Resolutions {

    // Under the reconciler's name, as before the split: a log level or an alert set on it still sees the reversals.
    private static final System.Logger LOGGER = System.getLogger(Reconciler.class.getName());

    private final UnknownOutcomes outcomes;
    private final IdempotencyRegistry registry;
    private final KeyBindings bindings;
    private final AuthorizationStore store;
    private final Reversals reversals;
    private final Duration callTimeout;
    private final Duration reverseAfter;
    private final Counter retried;
    private final Counter reversed;

    /**
     * The resolutions.
     *
     * @param outcomes  the durable unknown outcomes: a resolved one is removed
     * @param registry  the idempotency registry: claims decide between the reconciler and a retry
     * @param bindings  the durable key bindings
     * @param store     the resource store
     * @param reversals sends the reversals, shared with the reconciler's run (which skips those backing off)
     * @param settings  {@code authorizer.*}: the timeout (each send must fit in the key's lease) and
     *                  {@code unknown-outcome.reverse-after} (in seconds in the log line of a reversal)
     * @param meters    where {@code unknown_outcomes_total{resolution}} goes
     */
    Resolutions(UnknownOutcomes outcomes, IdempotencyRegistry registry, KeyBindings bindings, AuthorizationStore store,
                Reversals reversals, AuthorizerSettings settings, MeterRegistry meters) {
        this.outcomes = outcomes;
        this.registry = registry;
        this.bindings = bindings;
        this.store = store;
        this.reversals = reversals;
        this.callTimeout = settings.timeout();
        this.reverseAfter = settings.reverseAfter();
        this.retried = resolutions(meters, "retried");
        this.reversed = resolutions(meters, "reversed");
    }

    /**
     * Resolves one unknown outcome now, whatever its deadline.
     *
     * @param outcome the outcome
     * @return what was done
     * @throws InterruptedException when the worker is stopped; a key held is released
     * @throws IdempotencyStore.UnavailableException when a store cannot be reached; a key held is released
     */
    Reconciler.Action resolve(UnknownOutcome outcome) throws InterruptedException {
        Identity identity = outcome.identity();
        Claim claim = registry.claim(outcome.lookupKey(), List.of(identity));
        return switch (claim) {
        case Claim.Replay replay -> {
            if (superseded(outcome)) {
                yield reverseOnly(outcome);
            }
            boolean ours = new String(replay.decision().body(), StandardCharsets.UTF_8)
                    .contains("\"declineCode\":\"" + Reconciler.DECLINE_CODE + "\"");
            dropped(outcome, ours ? null : retried);
            yield ours ? Reconciler.Action.REVERSED : Reconciler.Action.RETRIED;
        }
        case Claim.Acquired acquired -> acquired(outcome, acquired, identity);
        case Claim.Mismatch mismatch -> reverseOnly(outcome);
        case Claim.InFlight inFlight -> Reconciler.Action.WAITING;
        case Claim.Full full -> Reconciler.Action.WAITING;
        case Claim.OverQuota over -> Reconciler.Action.WAITING;
        };
    }

    private Reconciler.Action acquired(UnknownOutcome outcome, Claim.Acquired claim, Identity identity)
            throws InterruptedException {
        boolean decided = false;
        try {
            if (bindings.bind(claim.lookupKey(), List.of(identity), 0).identity() < 0) {
                registry.release(claim, ReleaseReason.KEY_REUSED);
                decided = true;
                return reverseOnly(outcome);
            }
            Optional<AuthorizationRecord> existing = store.find(outcome.resourceId());
            if (existing.isPresent()) {
                // A retry decided and wrote the authorization, but the registry lost (or never got) its decision.
                record(claim, identity, existing.get());
                decided = true;
                if (!existing.get().attemptId().equals(outcome.attemptId())) {
                    return reverseOnly(outcome);
                }
                boolean ours = existing.get().state() == AuthorizationState.REVERSED;
                dropped(outcome, ours ? null : retried);
                return ours ? Reconciler.Action.REVERSED : Reconciler.Action.RETRIED;
            }
            // Each send must fit in the lease (renewed while the key is held): otherwise a retry may take the key
            // and record another answer while a reversal is on its way.
            Optional<Instant> reversedAt = reversals.send(outcome, () -> registry.leaseCovers(claim, callTimeout));
            if (reversedAt.isEmpty()) {
                return Reconciler.Action.WAITING;
            }
            record(claim, identity, store.create(AuthorizationRecord.reversed(outcome, reversedAt.get())));
            decided = true;
            dropped(outcome, reversed);
            LOGGER.log(Level.INFO, "Authorization {0} reversed: its outcome was unknown and its client did not retry "
                                   + "within {1,number,#} s (attempt {2})", outcome.resourceId(),
                       reverseAfter.toSeconds(), outcome.attemptId());
            return Reconciler.Action.REVERSED;
        } finally {
            if (!decided) {
                registry.release(claim, ReleaseReason.ISSUER_UNAVAILABLE);
            }
        }
    }

    // Another attempt of the request is the recorded authorization (an acquirer that does not deduplicate: each
    // execution sends its own attempt id): this one must not hold an approval beside it.
    private boolean superseded(UnknownOutcome outcome) {
        return store.find(outcome.resourceId()).map(found -> !found.attemptId().equals(outcome.attemptId()))
                .orElse(false);
    }

    // The key is another request's: the attempt is reversed, and nothing recorded under the key.
    private Reconciler.Action reverseOnly(UnknownOutcome outcome) throws InterruptedException {
        if (reversals.send(outcome, () -> true).isEmpty()) {
            return Reconciler.Action.WAITING;
        }
        dropped(outcome, reversed);
        return Reconciler.Action.REVERSED;
    }

    // Recorded under the attempt id of the authorization it records, which the acquirer decided on.
    private void record(Claim.Acquired claim, Identity identity, AuthorizationRecord authorization) {
        registry.recordAndComplete(claim, new Identity(identity.fingerprint(), authorization.attemptId(),
                                                       identity.decision()), new Decision(identity.decision(),
                                                                 Json.bytes(authorization.createdView())));
    }

    private void dropped(UnknownOutcome outcome, Counter resolution) {
        reversals.forget(outcome.attemptId());
        if (outcomes.remove(outcome.attemptId()) && resolution != null) {
            resolution.increment();
        }
    }

    private static Counter resolutions(MeterRegistry meters, String resolution) {
        return meters.getOrCreate(Counter.builder("unknown_outcomes")
                .tags(List.of(Tag.create("resolution", resolution)))
                .description("Unknown outcomes of authorizations resolved, by how: a client's retry, or a reversal"));
    }
}
