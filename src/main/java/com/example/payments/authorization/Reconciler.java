package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import com.example.payments.http.Json;
import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.Decision;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.IdempotencyRegistry.ReleaseReason;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.KeyBindings;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * The reconciler's unit of work (run by the {@code unknown-outcome-reconciler} worker, whose heartbeat liveness
 * watches): resolves every authorization whose outcome became unknown and whose client did not retry within
 * {@code authorizer.unknown-outcome.reverse-after}, at most a batch per run, reading the durable records of
 * {@link UnknownOutcomes} (so a restart or another replica picks up what this one left).
 *
 * <p>For each: it claims the idempotency key exactly as a retry of the request would (same lookup key, same
 * fingerprint), so the registry's fencing decides between it and a retry: only one of them acts, the other gets a
 * 409 (a retry) or waits for the next run (the reconciler). Then:
 * <ul>
 *     <li>a recorded decision (replayed), or an authorization already in the resource store: a retry resolved it;
 *     the record is dropped ({@code unknown_outcomes_total{resolution="retried"}}). When that authorization holds
 *     another attempt id (an acquirer that does not deduplicate: each execution sends its own), this attempt is
 *     reversed all the same ({@code resolution="reversed"}).</li>
 *     <li>the key acquired: a reversal of the attempt is sent under one reversal id derived from the attempt id (the
 *     same on every replica and after a restart), again with backoff until the acquirer confirms it; then the
 *     authorization is recorded {@code DECLINED} with {@code declineCode: "reversed"} in state {@code REVERSED}, and
 *     every later retry replays that ({@code resolution="reversed"}). Unconfirmed, the key is released and the next
 *     runs send the same reversal id again.</li>
 *     <li>the key bound to another request (its first request's binding was released after the unknown outcome): the
 *     attempt is reversed all the same, nothing is recorded under the key.</li>
 * </ul>
 * Also counts {@code unknown_outcome_reversals_total{outcome}} (each send: {@code confirmed}, {@code unconfirmed})
 * and exports {@code unknown_outcomes_overdue}: records still unresolved twice their wait after they were recorded.
 */
public final class Reconciler implements Runnable {

    /** The decline code of a reversed authorization. */
    public static final String DECLINE_CODE = "reversed";

    private static final System.Logger LOGGER = System.getLogger(Reconciler.class.getName());
    private static final Duration RUN_BUDGET = Duration.ofSeconds(5);

    /** What one reconciliation did. */
    public enum Action {
        /** A retry had resolved it: dropped. */
        RETRIED,
        /** This call reversed the attempt and recorded the reversed authorization. */
        REVERSED,
        /** A retry holds the key, or the reversal is not confirmed yet: the next run tries again. */
        WAITING
    }

    private final UnknownOutcomes outcomes;
    private final IdempotencyRegistry registry;
    private final KeyBindings bindings;
    private final AuthorizationStore store;
    private final BoundedAuthorizer authorizer;
    private final Duration callTimeout;
    private final Duration reverseAfter;
    private final Clock clock;
    private final int batch;
    private final Counter retried;
    private final Counter reversed;
    private final Reversals reversals;
    private final AtomicLong overdue = new AtomicLong();
    private volatile boolean failing;

    private Reconciler(UnknownOutcomes outcomes, IdempotencyRegistry registry, KeyBindings bindings,
                       AuthorizationStore store, BoundedAuthorizer authorizer, AuthorizerSettings settings,
                       Clock clock, int batch, MeterRegistry meters) {
        this.outcomes = outcomes;
        this.registry = registry;
        this.bindings = bindings;
        this.store = store;
        this.authorizer = authorizer;
        this.callTimeout = settings.timeout();
        this.reverseAfter = settings.reverseAfter();
        this.clock = clock;
        this.batch = batch;
        this.retried = resolutions(meters, "retried");
        this.reversed = resolutions(meters, "reversed");
        this.reversals = new Reversals(authorizer, meters);
        meters.getOrCreate(Gauge.builder("unknown_outcomes_overdue", overdue, AtomicLong::doubleValue)
                .description("Unknown outcomes still unresolved twice their reverse-after after they were "
                             + "recorded, as of the reconciler's last run"));
    }

    /**
     * Creates the work.
     *
     * @param outcomes       the durable unknown outcomes
     * @param registry       the idempotency registry: claims decide between the reconciler and a retry
     * @param bindings       the durable key bindings
     * @param store          the resource store
     * @param authorizations the API: its bounded authorizer sends the reversals
     * @param settings       {@code authorizer.*}: the timeout and {@code unknown-outcome.reverse-after}
     * @param clock          the time
     * @param batch          outcomes per run at most, e.g. 100
     * @param meters         where the counters go
     * @return the work, for {@code PeriodicWorker}
     */
    public static Reconciler create(UnknownOutcomes outcomes, IdempotencyRegistry registry, KeyBindings bindings,
                                    AuthorizationStore store, AuthorizationService authorizations,
                                    AuthorizerSettings settings, Clock clock, int batch, MeterRegistry meters) {
        return new Reconciler(outcomes, registry, bindings, store, authorizations.authorizer(), settings, clock,
                              batch, meters);
    }

    // With a bounded authorizer of its own, for tests in this package.
    static Reconciler create(UnknownOutcomes outcomes, IdempotencyRegistry registry, KeyBindings bindings,
                             AuthorizationStore store, BoundedAuthorizer authorizer, AuthorizerSettings settings,
                             Clock clock, int batch, MeterRegistry meters) {
        return new Reconciler(outcomes, registry, bindings, store, authorizer, settings, clock, batch, meters);
    }

    @Override
    public void run() {
        try {
            Instant now = clock.instant();
            long deadline = System.nanoTime() + RUN_BUDGET.toNanos();
            for (UnknownOutcome outcome : outcomes.due(now, batch)) {
                if (System.nanoTime() > deadline) {
                    break;
                }
                if (!reversals.backingOff(outcome.attemptId())) {
                    reconcile(outcome);
                }
            }
            overdue.set(outcomes.countDueBefore(now.minus(reverseAfter)));
            if (failing) {
                failing = false;
                LOGGER.log(Level.INFO, "Unknown-outcome reconciler works again");
            }
        } catch (IdempotencyStore.UnavailableException e) {
            if (!failing) {
                failing = true;
                LOGGER.log(Level.WARNING, "Unknown-outcome reconciler failed, retrying every run: " + e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Resolves one unknown outcome now, whatever its deadline.
     *
     * @param outcome the outcome
     * @return what was done
     * @throws InterruptedException when the worker is stopped; a key held is released
     * @throws IdempotencyStore.UnavailableException when a store cannot be reached; a key held is released
     */
    public Action reconcile(UnknownOutcome outcome) throws InterruptedException {
        Identity identity = outcome.identity();
        Claim claim = registry.claim(outcome.lookupKey(), List.of(identity));
        return switch (claim) {
        case Claim.Replay replay -> {
            if (superseded(outcome)) {
                yield reverseOnly(outcome);
            }
            boolean ours = new String(replay.decision().body(), StandardCharsets.UTF_8)
                    .contains("\"declineCode\":\"" + DECLINE_CODE + "\"");
            dropped(outcome, ours ? null : retried);
            yield ours ? Action.REVERSED : Action.RETRIED;
        }
        case Claim.Acquired acquired -> acquired(outcome, acquired, identity);
        case Claim.Mismatch mismatch -> reverseOnly(outcome);
        case Claim.InFlight inFlight -> Action.WAITING;
        case Claim.Full full -> Action.WAITING;
        case Claim.OverQuota over -> Action.WAITING;
        };
    }

    private Action acquired(UnknownOutcome outcome, Claim.Acquired claim, Identity identity)
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
                return ours ? Action.REVERSED : Action.RETRIED;
            }
            // Each send must fit in the lease (renewed while the key is held): otherwise a retry may take the key
            // and record another answer while a reversal is on its way.
            Optional<Instant> reversedAt = reversals.send(outcome, () -> registry.leaseCovers(claim, callTimeout));
            if (reversedAt.isEmpty()) {
                return Action.WAITING;
            }
            record(claim, identity, store.create(AuthorizationRecord.reversed(outcome, reversedAt.get())));
            decided = true;
            dropped(outcome, reversed);
            LOGGER.log(Level.INFO, "Authorization {0} reversed: its outcome was unknown and its client did not retry "
                                   + "within {1,number,#} s (attempt {2})", outcome.resourceId(),
                       reverseAfter.toSeconds(), outcome.attemptId());
            return Action.REVERSED;
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
    private Action reverseOnly(UnknownOutcome outcome) throws InterruptedException {
        if (reversals.send(outcome, () -> true).isEmpty()) {
            return Action.WAITING;
        }
        dropped(outcome, reversed);
        return Action.REVERSED;
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
