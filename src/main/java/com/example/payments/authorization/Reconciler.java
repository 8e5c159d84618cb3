package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.KeyBindings;

import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;

/**
 * The reconciler's unit of work (run by the {@code unknown-outcome-reconciler} worker, whose heartbeat liveness
 * watches): resolves every authorization whose outcome became unknown and whose client did not retry within
 * {@code authorizer.unknown-outcome.reverse-after}, at most a batch per run and none started after the run's first
 * 5 s, reading the durable records of {@link UnknownOutcomes} (so a restart or another replica picks up what this one
 * left).
 *
 * <p>Each is resolved as a retry of its request would be, through the idempotency registry's claim: dropped when a
 * retry resolved it, else its attempt is reversed and the reversal recorded under the key ({@link Resolutions});
 * an attempt whose reversal was not confirmed is skipped until its backoff ends ({@link Reversals}). A store that
 * cannot be reached ends the run, logged once until a run works again.
 *
 * <p>Exports {@code unknown_outcomes_overdue}: records still unresolved twice their wait after they were recorded,
 * as of the last run. The resolutions count {@code unknown_outcomes_total{resolution}} and the reversals sent
 * {@code unknown_outcome_reversals_total{outcome}}.
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
    private final Duration reverseAfter;
    private final Clock clock;
    private final int batch;
    private final Reversals reversals;
    private final Resolutions resolutions;
    private final AtomicLong overdue = new AtomicLong();
    private volatile boolean failing;

    private Reconciler(UnknownOutcomes outcomes, IdempotencyRegistry registry, KeyBindings bindings,
                       AuthorizationStore store, BoundedAuthorizer authorizer, AuthorizerSettings settings,
                       Clock clock, int batch, MeterRegistry meters) {
        this.outcomes = outcomes;
        this.reverseAfter = settings.reverseAfter();
        this.clock = clock;
        this.batch = batch;
        this.reversals = new Reversals(authorizer, meters);
        this.resolutions = new Resolutions(outcomes, registry, bindings, store, reversals, settings, meters);
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
        return resolutions.resolve(outcome);
    }
}
