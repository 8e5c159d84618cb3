package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.example.payments.http.RequestMetricsFilter;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;

/**
 * Calls the {@link Authorizer} with a timeout ({@code authorizer.timeout}) and counts every call in
 * {@code authorizer_invocations_total{outcome}} ({@code approved}, {@code declined}, {@code unknown}), its duration in
 * the histogram {@code authorizer_duration_seconds{outcome}} (seconds, the same outcomes). A replay never reaches this
 * class, which makes that counter the outside-observable proof that no key was authorized twice.
 */
final class BoundedAuthorizer implements AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(BoundedAuthorizer.class.getName());

    private final Authorizer delegate;
    private final Duration timeout;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final OutcomeMeters approved;
    private final OutcomeMeters declined;
    private final OutcomeMeters unknown;

    BoundedAuthorizer(Authorizer delegate, Duration timeout, MeterRegistry meters) {
        this.delegate = delegate;
        this.timeout = timeout;
        this.approved = OutcomeMeters.create(meters, "approved");
        this.declined = OutcomeMeters.create(meters, "declined");
        this.unknown = OutcomeMeters.create(meters, "unknown");
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

    /**
     * Runs one authorization.
     *
     * @param attempt the attempt
     * @return the outcome
     * @throws InterruptedException when the calling request thread is interrupted (the drain timeout expired) before
     *                              the issuer decided; the issuer call is cancelled
     */
    Outcome authorize(AuthorizationAttempt attempt) throws InterruptedException {
        long start = System.nanoTime();
        if (!delegate.blocks()) {
            return here(attempt, start);
        }
        Future<Authorizer.Decision> call = executor.submit(() -> delegate.authorize(attempt));
        try {
            return decided(call.get(timeout.toMillis(), TimeUnit.MILLISECONDS), start);
        } catch (TimeoutException e) {
            if (call.state() == Future.State.SUCCESS) {
                // Decided just as the timeout fired (a paused process wakes both at once): the issuer has decided.
                return decided(call.resultNow(), start);
            }
            call.cancel(true);
            unknown.record(start);
            LOGGER.log(Level.WARNING, "Authorizer timed out after {0,number,#} ms, attempt {1}: outcome unknown",
                       timeout.toMillis(), attempt.attemptId());
            return new TimedOut();
        } catch (ExecutionException e) {
            return failed(attempt, e.getCause() instanceof Authorizer.IssuerUnavailableException issuer
                    ? issuer.getMessage() : e.getCause().getClass().getSimpleName(), start);
        } catch (InterruptedException e) {
            if (call.state() == Future.State.SUCCESS) {
                // The issuer had decided when the drain interrupted the wait: keep the decision, so that it is
                // recorded and replayed rather than asked for again.
                return decided(call.resultNow(), start);
            }
            call.cancel(true);
            unknown.record(start);
            throw e;
        }
    }

    // A call that cannot block, on the request's own thread: it cannot outlast the timeout, and a drain that
    // interrupts the request finds it decided (as a blocking call decided when the interrupt came).
    private Outcome here(AuthorizationAttempt attempt, long start) throws InterruptedException {
        try {
            return decided(delegate.authorize(attempt), start);
        } catch (Authorizer.IssuerUnavailableException e) {
            return failed(attempt, e.getMessage(), start);
        } catch (InterruptedException e) {
            unknown.record(start);
            throw e;
        } catch (RuntimeException e) {
            return failed(attempt, e.getClass().getSimpleName(), start);
        }
    }

    private Failed failed(AuthorizationAttempt attempt, String reason, long start) {
        unknown.record(start);
        LOGGER.log(Level.WARNING, "Authorizer failed, attempt {0}: {1}; outcome unknown", attempt.attemptId(), reason);
        return new Failed(reason);
    }

    private Decided decided(Authorizer.Decision decision, long startNanos) {
        (decision.approved() ? approved : declined).record(startNanos);
        return new Decided(decision);
    }

    /** The counter and the duration histogram of one outcome, created once. */
    private record OutcomeMeters(Counter invocations, Timer duration) {

        static OutcomeMeters create(MeterRegistry meters, String outcome) {
            List<Tag> tags = List.of(Tag.create("outcome", outcome));
            return new OutcomeMeters(
                    meters.getOrCreate(Counter.builder("authorizer_invocations")
                                               .tags(tags)
                                               .description("Calls to the authorizer; a replay never adds one")),
                    meters.getOrCreate(Timer.builder("authorizer_duration")
                                               .baseUnit(TimeUnit.SECONDS)
                                               .tags(tags)
                                               .description("Duration of each authorizer call, up to its timeout")
                                               .percentiles(new double[0])
                                               .buckets(RequestMetricsFilter.latencyBuckets())));
        }

        void record(long startNanos) {
            invocations.increment();
            duration.record(Duration.ofNanos(System.nanoTime() - startNanos));
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
