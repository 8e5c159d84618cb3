package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.example.payments.http.RequestIds;
import com.example.payments.observability.Tracing;

import io.helidon.metrics.api.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;

/**
 * Calls the {@link Authorizer} with a timeout ({@code authorizer.timeout}) and counts every call and its outcome in
 * {@link AuthorizerMeters}. A replay never reaches this class, which makes its counter the outside-observable proof
 * that no key was authorized twice.
 *
 * <p>A call that may block runs on a virtual thread of its own, so that the timeout can end the wait; one that cannot
 * ({@link Authorizer#blocks()} is {@code false}) runs on the request's own thread, with no hop.
 */
final class BoundedAuthorizer implements AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(BoundedAuthorizer.class.getName());

    private final Authorizer delegate;
    private final Duration timeout;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final AuthorizerMeters meters;
    private final LateDecisions late;

    BoundedAuthorizer(Authorizer delegate, Duration timeout, MeterRegistry meters) {
        this(delegate, timeout, meters, null);
    }

    /**
     * A bounded authorizer that keeps late decisions of authorizations.
     *
     * @param late where an authorization's decision that arrives within one more timeout after its timeout is kept
     *             for the retry of its attempt; {@code null} to cancel every timed-out call at once
     */
    BoundedAuthorizer(Authorizer delegate, Duration timeout, MeterRegistry meters, LateDecisions late) {
        this.late = late;
        this.delegate = delegate;
        this.timeout = timeout;
        this.meters = AuthorizerMeters.create(meters);
    }

    /** The result of one bounded call. */
    sealed interface Outcome {
    }

    /**
     * The issuer decided.
     *
     * @param decision approve or decline
     */
    record Decided(Authorizer.Decision decision) implements Outcome {
    }

    /**
     * The issuer failed or could not be reached: outcome unknown, answer 502.
     *
     * @param reason what failed, without card data
     */
    record Failed(String reason) implements Outcome {
    }

    /** The issuer did not answer within {@code authorizer.timeout}: outcome unknown, answer 504. */
    record TimedOut() implements Outcome {
    }

    /** One call of the delegate. */
    @FunctionalInterface
    private interface Call {
        Authorizer.Decision run() throws Authorizer.IssuerUnavailableException, InterruptedException;
    }

    /**
     * Runs one authorization.
     *
     * @param attempt the attempt
     * @return the outcome
     * @throws InterruptedException when the calling request thread is interrupted (the drain timeout expired) before
     *                              the issuer decided; the issuer call is cancelled
     */
    Outcome authorize(AuthorizationAttempt attempt) throws InterruptedException {
        if (late != null) {
            Optional<Authorizer.Decision> kept = late.take(attempt.attemptId());
            if (kept.isPresent()) {
                // Decided after the first execution's timeout: answered without sending the attempt id again.
                return new Decided(kept.get());
            }
        }
        return traced("authorize", attempt.attemptId(), () -> delegate.authorize(attempt));
    }

    /**
     * Keeps an authorization's decision that could not be recorded, for the retry of its attempt on this replica (see
     * {@link LateDecisions#keep}); nothing when this authorizer keeps no late decisions.
     *
     * @param attemptId the attempt id
     * @param decision  the issuer's decision
     */
    void keep(String attemptId, Authorizer.Decision decision) {
        if (late != null) {
            late.keep(attemptId, decision);
        }
    }

    /**
     * Takes the decision kept for an attempt (late, or not recorded), if any.
     *
     * @param attemptId the attempt id
     * @return the decision, removed; empty when none is kept or this authorizer keeps none
     */
    Optional<Authorizer.Decision> takeLate(String attemptId) {
        return late == null ? Optional.empty() : late.take(attemptId);
    }

    /**
     * Runs one capture ({@link Authorizer#capture}), bounded like an authorization.
     *
     * @param operation the capture
     * @return the outcome
     * @throws InterruptedException when the request thread is interrupted before the acquirer decided
     */
    Outcome capture(AcquirerOperation operation) throws InterruptedException {
        return traced("capture", operation.attemptId(), () -> delegate.capture(operation));
    }

    /**
     * Runs one void ({@link Authorizer#voidRemainder}), bounded like an authorization.
     *
     * @param operation the void
     * @return the outcome
     * @throws InterruptedException when the request thread is interrupted before the acquirer decided
     */
    Outcome voidRemainder(AcquirerOperation operation) throws InterruptedException {
        return traced("void", operation.attemptId(), () -> delegate.voidRemainder(operation));
    }

    /**
     * Sends one reversal ({@link Authorizer#reverse}), bounded like an authorization.
     *
     * @param reversal the reversal
     * @return the outcome: decided confirms it (approved: reversed; declined: nothing to reverse)
     * @throws InterruptedException when the calling thread is interrupted before the acquirer answered
     */
    Outcome reverse(Authorizer.Reversal reversal) throws InterruptedException {
        return traced("reverse", reversal.attemptId(), () -> delegate.reverse(reversal));
    }

    private Outcome traced(String operation, String attemptId, Call call) throws InterruptedException {
        // The issuer call's span, with its timeout and retry: the parent of an HTTP authorizer's CLIENT span per
        // request. No attribute of the attempt (an authorization's request holds the card number).
        Span span = Tracing.tracer().spanBuilder("authorizer." + operation).startSpan();
        String outcome = "unknown";
        try (Scope ignored = span.makeCurrent()) {
            Outcome result = bounded(operation, attemptId, call);
            if (result instanceof Decided decided) {
                outcome = decided.decision().approved() ? "approved" : "declined";
            }
            return result;
        } finally {
            span.setAttribute(Tracing.AUTHORIZER_OUTCOME, outcome);
            if (outcome.equals("unknown")) {
                span.setStatus(StatusCode.ERROR);
            }
            span.end();
        }
    }

    private Outcome bounded(String operation, String attemptId, Call delegateCall) throws InterruptedException {
        long start = System.nanoTime();
        if (!delegate.blocks()) {
            return here(operation, attemptId, delegateCall, start);
        }
        Future<Authorizer.Decision> call = executor.submit(RequestIds.propagate(delegateCall::run));
        try {
            return decided(operation, call.get(timeout.toMillis(), TimeUnit.MILLISECONDS), start);
        } catch (TimeoutException e) {
            if (call.state() == Future.State.SUCCESS) {
                // Decided just as the timeout fired (a paused process wakes both at once): the issuer has decided.
                return decided(operation, call.resultNow(), start);
            }
            if (late != null && operation.equals("authorize")) {
                late.watch(attemptId, call, executor);
            } else {
                call.cancel(true);
            }
            meters.record(operation, "unknown", start);
            LOGGER.log(Level.WARNING, "Authorizer {0} timed out after {1,number,#} ms, attempt {2}: outcome unknown",
                       operation, timeout.toMillis(), attemptId);
            return new TimedOut();
        } catch (ExecutionException e) {
            return failed(operation, attemptId, e.getCause() instanceof Authorizer.IssuerUnavailableException issuer
                    ? issuer.getMessage() : e.getCause().getClass().getSimpleName(), start);
        } catch (InterruptedException e) {
            if (call.state() == Future.State.SUCCESS) {
                // The issuer had decided when the drain interrupted the wait: keep the decision, so that it is
                // recorded and replayed rather than asked for again.
                return decided(operation, call.resultNow(), start);
            }
            call.cancel(true);
            meters.record(operation, "unknown", start);
            throw e;
        }
    }

    // A call that cannot block, on the request's own thread: it cannot outlast the timeout, and a drain that
    // interrupts the request finds it decided (as a blocking call decided when the interrupt came).
    private Outcome here(String operation, String attemptId, Call call, long start) throws InterruptedException {
        try {
            return decided(operation, call.run(), start);
        } catch (Authorizer.IssuerUnavailableException e) {
            return failed(operation, attemptId, e.getMessage(), start);
        } catch (InterruptedException e) {
            meters.record(operation, "unknown", start);
            throw e;
        } catch (RuntimeException e) {
            return failed(operation, attemptId, e.getClass().getSimpleName(), start);
        }
    }

    private Failed failed(String operation, String attemptId, String reason, long start) {
        meters.record(operation, "unknown", start);
        LOGGER.log(Level.WARNING, "Authorizer {0} failed, attempt {1}: {2}; outcome unknown", operation, attemptId,
                   reason);
        return new Failed(reason);
    }

    private Decided decided(String operation, Authorizer.Decision decision, long startNanos) {
        meters.record(operation, decision.approved() ? "approved" : "declined", startNanos);
        return new Decided(decision);
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
